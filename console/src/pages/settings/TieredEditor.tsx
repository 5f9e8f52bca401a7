import Add from '@mui/icons-material/Add';
import Delete from '@mui/icons-material/Delete';
import {
  Alert,
  Box,
  Button,
  Chip,
  IconButton,
  MenuItem,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  TextField,
  Tooltip,
} from '@mui/material';
import { useEffect, useMemo, useState } from 'react';
import { useLocaleState, useNotify, useTranslate } from 'react-admin';
import { useOptions } from './OptionsContext.tsx';
import { rowProblems, TIMEZONE_KEY, type TieredRow, tieredChanges, tieredRows, validTimeZone } from './tiered.ts';

/**
 * The expression pricing editor (billing_setting): per model, whether its billing expression prices it
 * and the expression, checked as it is typed with the gateway's parser; and the time zone the clock
 * functions read. Saving writes only the options that changed; the server checks them again.
 */
export function TieredEditor() {
  const translate = useTranslate();
  const notify = useNotify();
  const [locale] = useLocaleState();
  const { options, save } = useOptions();
  const initial = useMemo(() => tieredRows(options), [options]);
  const [rows, setRows] = useState<TieredRow[]>(initial);
  const [timeZone, setTimeZone] = useState(options[TIMEZONE_KEY] ?? 'UTC');
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    setRows(initial);
    setTimeZone(options[TIMEZONE_KEY] ?? 'UTC');
  }, [initial, options]);

  const problems = rowProblems(rows, locale === 'zh' ? 'zh' : 'en');
  const zoneValid = validTimeZone(timeZone);
  const blocked = Object.keys(problems).length > 0 || !zoneValid;
  const changes = tieredChanges(options, rows, timeZone);
  const update = (index: number, patch: Partial<TieredRow>) =>
    setRows((current) => current.map((row, i) => (i === index ? { ...row, ...patch } : row)));

  const submit = async () => {
    if (changes.length === 0) {
      notify('settings.messages.nothing_changed', { type: 'info' });
      return;
    }
    setSaving(true);
    try {
      await save(changes);
    } finally {
      setSaving(false);
    }
  };

  return (
    <Box data-testid="tiered-editor">
      <Alert severity="info" sx={{ mb: 2, whiteSpace: 'pre-line' }}>
        {translate('settings.tiered.help')}
      </Alert>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ mb: 1.5, alignItems: { sm: 'center' } }}>
        <TextField
          size="small"
          label={translate('settings.tiered.timezone')}
          value={timeZone}
          onChange={(event) => setTimeZone(event.target.value)}
          error={!zoneValid}
          helperText={translate(zoneValid ? 'settings.tiered.timezone_help' : 'settings.tiered.problems.timezone')}
          sx={{ width: { xs: '100%', sm: 320 } }}
          slotProps={{ htmlInput: { 'data-testid': 'tiered-timezone' } }}
        />
        <Button
          startIcon={<Add />}
          onClick={() => setRows((current) => [...current, { model: '', tiered: true, expression: '' }])}
          data-testid="tiered-add"
        >
          {translate('settings.tiered.add')}
        </Button>
        <Box sx={{ flex: 1 }} />
        {changes.length > 0 && (
          <Chip color="warning" size="small" label={translate('settings.pricing.unsaved', { count: changes.length })} />
        )}
        <Button variant="contained" onClick={submit} disabled={saving || blocked} data-testid="tiered-save">
          {translate('settings.pricing.save')}
        </Button>
      </Stack>
      <TableContainer>
        <Table size="small">
          <TableHead>
            <TableRow>
              <TableCell sx={{ width: 240 }}>{translate('settings.tiered.model')}</TableCell>
              <TableCell sx={{ width: 180 }}>{translate('settings.tiered.mode')}</TableCell>
              <TableCell>{translate('settings.tiered.expression')}</TableCell>
              <TableCell align="right">{translate('settings.pricing.actions')}</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {rows.map((row, index) => {
              const problem = problems[index];
              const message = problem ? translate(problem.message, problem.values) : undefined;
              return (
                // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place; a new row has no name yet
                <TableRow key={index} data-testid="tiered-row">
                  <TableCell sx={{ verticalAlign: 'top' }}>
                    <TextField
                      size="small"
                      fullWidth
                      value={row.model}
                      onChange={(event) => update(index, { model: event.target.value })}
                      error={problem?.field === 'model'}
                      helperText={problem?.field === 'model' ? message : undefined}
                      slotProps={{ htmlInput: { 'data-testid': 'tiered-model' } }}
                    />
                  </TableCell>
                  <TableCell sx={{ verticalAlign: 'top' }}>
                    <TextField
                      select
                      size="small"
                      fullWidth
                      value={row.tiered ? 'tiered_expr' : 'off'}
                      onChange={(event) => update(index, { tiered: event.target.value === 'tiered_expr' })}
                      slotProps={{ htmlInput: { 'data-testid': 'tiered-mode' } }}
                    >
                      <MenuItem value="tiered_expr">{translate('settings.tiered.mode_tiered')}</MenuItem>
                      <MenuItem value="off">{translate('settings.tiered.mode_off')}</MenuItem>
                    </TextField>
                  </TableCell>
                  <TableCell sx={{ verticalAlign: 'top' }}>
                    <TextField
                      size="small"
                      fullWidth
                      multiline
                      minRows={1}
                      maxRows={8}
                      value={row.expression}
                      placeholder='len <= 200000 ? tier("standard", p * 3 + c * 15) : tier("long", p * 6 + c * 22.5)'
                      onChange={(event) => update(index, { expression: event.target.value })}
                      error={problem?.field === 'expression'}
                      helperText={problem?.field === 'expression' ? message : undefined}
                      slotProps={{
                        htmlInput: { 'data-testid': 'tiered-expression', spellCheck: false },
                        input: { sx: { fontFamily: 'monospace' } },
                      }}
                    />
                  </TableCell>
                  <TableCell align="right" sx={{ verticalAlign: 'top' }}>
                    <Tooltip title={translate('settings.tiered.delete')}>
                      <IconButton
                        aria-label={translate('settings.tiered.delete')}
                        onClick={() => setRows((current) => current.filter((_, i) => i !== index))}
                      >
                        <Delete fontSize="small" />
                      </IconButton>
                    </Tooltip>
                  </TableCell>
                </TableRow>
              );
            })}
            {rows.length === 0 && (
              <TableRow>
                <TableCell colSpan={4} sx={{ color: 'text.secondary' }}>
                  {translate('settings.tiered.empty')}
                </TableCell>
              </TableRow>
            )}
          </TableBody>
        </Table>
      </TableContainer>
    </Box>
  );
}
