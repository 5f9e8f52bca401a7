import { Box, Button, IconButton, Stack, TextField, Typography } from '@mui/material';
import { useTranslate } from 'react-admin';
import type { RateLimitRow } from './rate-limits.ts';

/**
 * Rules of requests and tokens per minute, one row per model ("*" for every other model). Controlled:
 * the caller keeps the rows and turns them into limits when it saves.
 */
export function RateLimitsEditor(props: {
  rows: RateLimitRow[];
  onChange: (rows: RateLimitRow[]) => void;
  /** A message key shown under the rules. */
  error?: string | undefined;
  help: string;
}) {
  const translate = useTranslate();
  const { rows, onChange } = props;
  const edit = (index: number, field: keyof RateLimitRow, value: string) =>
    onChange(rows.map((row, i) => (i === index ? { ...row, [field]: value } : row)));
  return (
    <Box sx={{ mb: 2 }} data-testid="rate-limits">
      <Typography variant="subtitle2">{translate('rate_limits.title')}</Typography>
      <Typography variant="caption" color="text.secondary" component="p" sx={{ mb: 1 }}>
        {translate(props.help)}
      </Typography>
      {rows.map((row, index) => (
        // Rows have no identity of their own: the position is the key while they are edited.
        // biome-ignore lint/suspicious/noArrayIndexKey: see above
        <Stack key={index} direction="row" spacing={1} sx={{ mb: 1, alignItems: 'center' }}>
          <TextField
            size="small"
            label={translate('rate_limits.model')}
            placeholder="*"
            value={row.model}
            onChange={(event) => edit(index, 'model', event.target.value)}
            slotProps={{ htmlInput: { 'data-testid': `rate-limit-model-${index}` } }}
            sx={{ flex: 2 }}
          />
          <TextField
            size="small"
            label={translate('rate_limits.rpm')}
            value={row.rpm}
            onChange={(event) => edit(index, 'rpm', event.target.value)}
            slotProps={{ htmlInput: { inputMode: 'numeric', 'data-testid': `rate-limit-rpm-${index}` } }}
            sx={{ flex: 1 }}
          />
          <TextField
            size="small"
            label={translate('rate_limits.tpm')}
            value={row.tpm}
            onChange={(event) => edit(index, 'tpm', event.target.value)}
            slotProps={{ htmlInput: { inputMode: 'numeric', 'data-testid': `rate-limit-tpm-${index}` } }}
            sx={{ flex: 1 }}
          />
          <IconButton
            aria-label={translate('rate_limits.remove')}
            onClick={() => onChange(rows.filter((_, i) => i !== index))}
            size="small"
          >
            ×
          </IconButton>
        </Stack>
      ))}
      {props.error && (
        <Typography variant="caption" color="error" component="p" data-testid="rate-limits-error">
          {translate(props.error)}
        </Typography>
      )}
      <Button
        size="small"
        onClick={() => onChange([...rows, { model: rows.length === 0 ? '*' : '', rpm: '', tpm: '' }])}
        data-testid="rate-limit-add"
      >
        {translate('rate_limits.add')}
      </Button>
    </Box>
  );
}
