import { Box, Chip, Stack, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import {
  AutocompleteArrayInput,
  BooleanInput,
  Create,
  Edit,
  NumberInput,
  SelectInput,
  SimpleForm,
  TextInput,
  useCreate,
  useNotify,
  useRedirect,
  useTranslate,
} from 'react-admin';
import { useFormContext, useFormState, useWatch } from 'react-hook-form';
import { formatQuota } from '../../format/quota.ts';
import { formatDateTime, formatSeconds } from '../../format/time.ts';
import { api, errorMessage } from '../../providers/http.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { PeriodLimitInputs } from '../periods/PeriodLimits.tsx';
import { invalidPeriodLimits, periodLimitBody } from '../periods/periods.ts';
import { RateLimitsEditor } from '../rate-limits/RateLimitsEditor.tsx';
import { type RateLimitRow, rowsOf } from '../rate-limits/rate-limits.ts';
import {
  COUNT_PRESETS,
  EXPIRY_PRESETS,
  NEW_TOKEN_QUOTA,
  QUOTA_PRESETS,
  type TokenFormValues,
  tokenBody,
  validateToken,
} from './token.ts';

/** Creating tokens (one through /rest/token, several at once through POST /api/token/ with `count`). */
export function TokenCreate() {
  const notify = useNotify();
  const { status } = useStatus();
  const redirect = useRedirect();
  const [create] = useCreate();
  const save = async (values: TokenFormValues) => {
    const body = { ...tokenBody(values), ...periodLimitBody(values as Record<string, unknown>) };
    const count = Number(values.count ?? 1) || 1;
    try {
      if (count > 1) {
        const envelope = await api.request('POST', '/api/token/', { body: { ...body, count } });
        notify(envelope.message || 'token.created', { type: 'success' });
      } else {
        await create('token', { data: body }, { returnPromise: true });
        notify('token.created', { type: 'success' });
      }
      redirect('list', 'token');
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  };
  return (
    <Create resource="token" title="token.create_title">
      <SimpleForm
        onSubmit={(values: object) => save(values as TokenFormValues)}
        validate={(values) => validateTokenForm(values as TokenFormValues, true)}
        defaultValues={{
          name: '',
          remain_quota: NEW_TOKEN_QUOTA,
          unlimited_quota: false,
          expired_time: -1,
          model_limits_enabled: false,
          model_limits: '',
          allow_ips: '',
          // DefaultUseAutoGroup: new tokens start in the auto group.
          group: status.default_use_auto_group ? 'auto' : '',
          cross_group_retry: false,
          rate_limits: {},
          count: 1,
        }}
        data-testid="token-form"
      >
        <TokenFields creating />
      </SimpleForm>
    </Create>
  );
}

/** Editing a token (PUT /rest/token/{id}); the status is changed from the list. */
export function TokenEdit() {
  return (
    <Edit
      resource="token"
      title="token.edit_title"
      mutationMode="pessimistic"
      redirect="list"
      transform={(values: TokenFormValues) => ({
        ...tokenBody(values),
        ...periodLimitBody(values as Record<string, unknown>),
      })}
    >
      <SimpleForm validate={(values) => validateTokenForm(values as TokenFormValues, false)} data-testid="token-form">
        <TokenFields creating={false} />
      </SimpleForm>
    </Edit>
  );
}

/** The token's own rules, and its period limits whole numbers of at least 0. */
function validateTokenForm(values: TokenFormValues, creating: boolean): Record<string, string> {
  const errors = validateToken(values, creating);
  for (const field of invalidPeriodLimits(values as Record<string, unknown>)) errors[field] = 'periods.invalid';
  return errors;
}

interface GroupInfo {
  desc: string;
  ratio: number;
}

/** The user's usable groups and models, for the group select and the model limits. */
function useChoices() {
  const [groups, setGroups] = useState<Record<string, GroupInfo>>({});
  const [models, setModels] = useState<string[]>([]);
  useEffect(() => {
    let live = true;
    api
      .get<Record<string, GroupInfo>>('/api/user/self/groups')
      .then((data) => live && setGroups(data ?? {}))
      .catch(() => {});
    api
      .get<string[]>('/api/user/models')
      .then((data) => live && setModels(data ?? []))
      .catch(() => {});
    return () => {
      live = false;
    };
  }, []);
  return { groups, models };
}

function TokenFields({ creating }: { creating: boolean }) {
  const translate = useTranslate();
  const { status } = useStatus();
  const { groups, models } = useChoices();
  const { setValue } = useFormContext();
  const unlimited = useWatch({ name: 'unlimited_quota' }) as boolean | undefined;
  const limited = useWatch({ name: 'model_limits_enabled' }) as boolean | undefined;
  const quota = useWatch({ name: 'remain_quota' }) as number | null | undefined;
  const selectedLimits = (useWatch({ name: 'model_limits' }) as string | undefined) ?? '';
  const group = useWatch({ name: 'group' }) as string | undefined;
  const set = (name: string, value: unknown) =>
    setValue(name, value, { shouldDirty: true, shouldValidate: true, shouldTouch: true });

  const groupChoices = [
    { id: '', name: translate('token.group_default') },
    { id: 'auto', name: translate('token.group_auto') },
    ...Object.entries(groups).map(([name, info]) => ({
      id: name,
      name: `${name} · ${info.desc} · ×${info.ratio}`,
    })),
  ];
  // Model names already chosen stay selectable even when the user can no longer reach them.
  const modelChoices = [...new Set([...models, ...selectedLimits.split(',').filter(Boolean)])].map((model) => ({
    id: model,
    name: model,
  }));

  return (
    <Box sx={{ width: '100%', maxWidth: 640 }}>
      <TextInput source="name" label="token.fields.name" fullWidth autoComplete="off" />

      {creating && (
        <Box>
          <NumberInput source="count" label="token.fields.count" helperText="token.count_help" step={1} />
          <Presets
            label={translate('token.count_presets')}
            items={COUNT_PRESETS.map((count) => ({ key: String(count), label: String(count), value: count }))}
            onPick={(value) => set('count', value)}
          />
        </Box>
      )}

      <BooleanInput source="unlimited_quota" label="token.fields.unlimited_quota" helperText="token.unlimited_help" />
      {!unlimited && (
        <Box>
          <NumberInput
            source="remain_quota"
            label="token.fields.remain_quota"
            step={1}
            helperText={
              typeof quota === 'number' && Number.isFinite(quota)
                ? translate('token.quota_equals', { amount: formatQuota(quota, status) })
                : false
            }
          />
          <Presets
            label={translate('token.quota_presets')}
            items={QUOTA_PRESETS.map((preset) => ({
              key: String(preset),
              label: formatQuota(preset, status, 0),
              value: preset,
            }))}
            onPick={(value) => set('remain_quota', value)}
          />
        </Box>
      )}

      <TextInput
        source="expired_time"
        label="token.fields.expired_time"
        helperText="token.expiry_help"
        placeholder="yyyy-MM-dd HH:mm:ss"
        format={(value: unknown) =>
          typeof value === 'number' ? (value === -1 ? '' : formatSeconds(value)) : ((value as string) ?? '')
        }
        parse={(value: string) => value}
        fullWidth
      />
      <Presets
        label={translate('token.expiry_presets')}
        items={EXPIRY_PRESETS.map((preset) => ({
          key: preset.key,
          label: translate(preset.label),
          value: preset.seconds,
        }))}
        onPick={(seconds) =>
          set('expired_time', seconds === -1 ? -1 : formatDateTime(new Date(Date.now() + seconds * 1000)))
        }
      />

      <SelectInput
        source="group"
        label="token.fields.group"
        choices={groupChoices}
        emptyValue=""
        emptyText={translate('token.group_default')}
        helperText="token.group_help"
        fullWidth
      />
      {group === 'auto' && (
        <BooleanInput
          source="cross_group_retry"
          label="token.fields.cross_group_retry"
          helperText="token.cross_group_retry_help"
        />
      )}

      <BooleanInput source="model_limits_enabled" label="token.fields.model_limits_enabled" />
      {limited && (
        <AutocompleteArrayInput
          source="model_limits"
          label="token.fields.model_limits"
          choices={modelChoices}
          format={(value: unknown) => (typeof value === 'string' ? value.split(',').filter(Boolean) : [])}
          parse={(value: string[] | undefined) => (value ?? []).join(',')}
          fullWidth
        />
      )}

      <TextInput
        source="allow_ips"
        label="token.fields.allow_ips"
        helperText="token.allow_ips_help"
        multiline
        minRows={2}
        fullWidth
      />

      <PeriodLimitInputs />
      <TokenRateLimits />
    </Box>
  );
}

/**
 * The token's requests and tokens per minute, edited as rows: `rate_limit_rows` once edited (sent as
 * `rate_limits`), until then the rows of the limits as loaded (the form may be reset when the record loads).
 */
function TokenRateLimits() {
  const { setValue } = useFormContext();
  const { errors } = useFormState({ name: 'rate_limit_rows' });
  const edited = useWatch({ name: 'rate_limit_rows' }) as RateLimitRow[] | undefined;
  const loaded = useWatch({ name: 'rate_limits' }) as unknown;
  // react-admin hands the validator's message key over as { message: key }.
  const reported = errors.rate_limit_rows?.message as unknown;
  const error = typeof reported === 'string' ? reported : (reported as { message?: unknown } | undefined)?.message;
  return (
    <RateLimitsEditor
      rows={edited ?? rowsOf(loaded)}
      onChange={(next) => setValue('rate_limit_rows', next, { shouldDirty: true, shouldValidate: true })}
      error={typeof error === 'string' ? error : undefined}
      help="rate_limits.token_help"
    />
  );
}

function Presets<T>(props: {
  label: string;
  items: Array<{ key: string; label: string; value: T }>;
  onPick: (value: T) => void;
}) {
  return (
    <Stack direction="row" spacing={1} useFlexGap sx={{ flexWrap: 'wrap', alignItems: 'center', mb: 2, mt: -0.5 }}>
      <Typography variant="caption" color="text.secondary">
        {props.label}
      </Typography>
      {props.items.map((item) => (
        <Chip key={item.key} size="small" label={item.label} onClick={() => props.onPick(item.value)} />
      ))}
    </Stack>
  );
}
