import { Box, Chip, Stack, TextField, Tooltip, Typography } from '@mui/material';
import { NumberInput, useTranslate } from 'react-admin';
import { useWatch } from 'react-hook-form';
import { formatQuota } from '../../format/quota.ts';
import { formatSeconds } from '../../format/time.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { PERIOD_KINDS, type PeriodLimitField, type PeriodUsage, type PeriodUsageView } from './periods.ts';

const grid = { display: 'grid', gridTemplateColumns: { xs: '1fr', sm: '1fr 1fr' }, columnGap: 2 } as const;

/** The quota a limit field holds, in the display currency, as its helper text. */
function useQuotaHelper() {
  const { status } = useStatus();
  return (value: unknown) => {
    const quota = Number(value);
    return Number.isSafeInteger(quota) && quota > 0 ? formatQuota(quota, status) : ' ';
  };
}

/** The six limits in a react-admin form (the token form). */
export function PeriodLimitInputs() {
  const translate = useTranslate();
  const helper = useQuotaHelper();
  const values = useWatch() as Partial<Record<PeriodLimitField, unknown>>;
  return (
    <Box data-testid="period-limits">
      <Typography variant="subtitle2">{translate('periods.title')}</Typography>
      <Typography variant="caption" color="text.secondary" component="p" sx={{ mb: 1 }}>
        {translate('periods.help')}
      </Typography>
      {PERIOD_KINDS.map((kind) => (
        <Box key={kind} sx={grid}>
          <NumberInput
            source={`${kind}_quota_limit`}
            label={`periods.fields.${kind}_quota_limit`}
            step={1}
            helperText={helper(values[`${kind}_quota_limit`])}
          />
          <NumberInput
            source={`${kind}_request_limit`}
            label={`periods.fields.${kind}_request_limit`}
            step={1}
            helperText={false}
          />
        </Box>
      ))}
    </Box>
  );
}

/** The six limits as plain text fields (the user drawer keeps its own state). */
export function PeriodLimitTextFields(props: {
  values: Record<PeriodLimitField, string>;
  onChange: (field: PeriodLimitField, value: string) => void;
}) {
  const translate = useTranslate();
  const helper = useQuotaHelper();
  return (
    <Box data-testid="period-limits">
      <Typography variant="subtitle2">{translate('periods.title')}</Typography>
      <Typography variant="caption" color="text.secondary" component="p" sx={{ mb: 1 }}>
        {translate('periods.help')}
      </Typography>
      {PERIOD_KINDS.map((kind) => (
        <Box key={kind} sx={{ ...grid, rowGap: 2, mb: 2 }}>
          {(['quota', 'request'] as const).map((what) => {
            const field = `${kind}_${what}_limit` as const;
            return (
              <TextField
                key={field}
                label={translate(`periods.fields.${field}`)}
                value={props.values[field]}
                onChange={(event) => props.onChange(field, event.target.value)}
                helperText={what === 'quota' ? helper(props.values[field]) : ' '}
                slotProps={{ htmlInput: { inputMode: 'numeric', 'data-testid': `user-${field}` } }}
              />
            );
          })}
        </Box>
      ))}
    </Box>
  );
}

/** The current periods that have a limit: use against the limit, what is left, and when it resets. */
export function PeriodUsageSummary({ usage, empty = '—' }: { usage: PeriodUsage | undefined; empty?: string }) {
  const kinds = PERIOD_KINDS.filter((kind) => usage?.[kind]);
  if (kinds.length === 0) return <span>{empty}</span>;
  return (
    <Stack spacing={0.5} data-testid="period-usage">
      {kinds.map((kind) => (
        <PeriodChip key={kind} kind={kind} view={usage![kind]!} />
      ))}
    </Stack>
  );
}

function PeriodChip({ kind, view }: { kind: (typeof PERIOD_KINDS)[number]; view: PeriodUsageView }) {
  const translate = useTranslate();
  const { status } = useStatus();
  const parts: string[] = [];
  if (view.quota_limit > 0) {
    parts.push(`${formatQuota(view.used_quota, status)} / ${formatQuota(view.quota_limit, status)}`);
  }
  if (view.request_limit > 0) {
    parts.push(translate('periods.requests_of', { used: view.used_requests, limit: view.request_limit }));
  }
  const exhausted = view.remain_quota === 0 || view.remain_requests === 0;
  return (
    <Tooltip
      title={translate('periods.resets', { period: view.period, time: formatSeconds(view.resets_at) })}
      placement="top"
    >
      <Chip
        size="small"
        variant="outlined"
        color={exhausted ? 'error' : 'default'}
        label={`${translate(`periods.kinds.${kind}`)} · ${parts.join(' · ')}`}
        data-testid={`period-usage-${kind}`}
        sx={{ alignSelf: 'flex-start' }}
      />
    </Tooltip>
  );
}
