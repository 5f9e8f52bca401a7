import Add from '@mui/icons-material/Add';
import Delete from '@mui/icons-material/Delete';
import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  FormControlLabel,
  Grid,
  IconButton,
  MenuItem,
  Paper,
  Switch,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import { useEffect, useMemo, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { fromLocalInput, toLocalInput } from '../../format/time.ts';
import {
  API_INFO_COLORS,
  blankEntry,
  CONTENT_SPECS,
  type ContentEntry,
  type ContentField,
  type ContentKind,
  checkList,
  type EntryProblem,
  readList,
} from '../../status/console-content.ts';
import { useOptions } from './OptionsContext.tsx';

/** An RFC 3339 time (what new-api stores) for a datetime-local input, and back; '' when not a time. */
const isoToInput = (iso: string) => toLocalInput(Math.floor(Date.parse(iso) / 1000) || undefined);
const inputToIso = (text: string) => {
  const seconds = fromLocalInput(text);
  return seconds === undefined ? '' : new Date(seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
};

/** A switch's input marked with its option key (data-option), as OptionSection marks its fields. */
const optionSwitch = (key: string) => ({ input: { 'data-option': key } });

/**
 * One dashboard panel's settings (console_setting.<kind> and its *_enabled flag): the switch, the entries
 * one card each with add and remove, every entry checked before the list is saved.
 */
export function ContentListEditor({ kind }: { kind: ContentKind }) {
  const translate = useTranslate();
  const notify = useNotify();
  const { options, save } = useOptions();
  const listKey = `console_setting.${kind}`;
  const flagKey = `console_setting.${kind}_enabled`;
  const start = useMemo(
    () => ({ entries: readList(options[listKey]), enabled: options[flagKey] !== 'false' }),
    [options, listKey, flagKey],
  );
  const [entries, setEntries] = useState<ContentEntry[]>(start.entries);
  const [enabled, setEnabled] = useState(start.enabled);
  const [checked, setChecked] = useState(false);
  const [saving, setSaving] = useState(false);
  useEffect(() => {
    setEntries(start.entries);
    setEnabled(start.enabled);
    setChecked(false);
  }, [start]);

  const problems = useMemo(() => checkList(kind, entries), [kind, entries]);
  const spec = CONTENT_SPECS[kind];
  const title = `modules.content.${kind}.title`;

  const edit = (index: number, field: string, value: string) =>
    setEntries((current) => current.map((entry, i) => (i === index ? { ...entry, [field]: value } : entry)));

  const submit = async () => {
    setChecked(true);
    if (problems.tooMany || problems.byEntry.size > 0) {
      notify('settings.messages.check_input', { type: 'error' });
      return;
    }
    const changes: Array<{ key: string; value: string }> = [];
    const list = JSON.stringify(entries);
    if (list !== JSON.stringify(start.entries)) changes.push({ key: listKey, value: list });
    if (enabled !== start.enabled) changes.push({ key: flagKey, value: String(enabled) });
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
    <Card variant="outlined" sx={{ mb: 2 }} data-section={kind}>
      <CardContent>
        <Typography variant="subtitle1" sx={{ fontWeight: 600 }}>
          {translate(title)}
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
          {translate(`modules.content.${kind}.help`)}
        </Typography>
        <FormControlLabel
          control={
            <Switch
              checked={enabled}
              onChange={(event) => setEnabled(event.target.checked)}
              slotProps={optionSwitch(flagKey)}
            />
          }
          label={translate('modules.content.show_on_dashboard')}
        />
        {checked && problems.tooMany && (
          <Alert severity="error" sx={{ my: 1 }}>
            {translate('modules.validation.over_limit', { max: spec.max })}
          </Alert>
        )}
        {entries.length === 0 && (
          <Typography color="text.secondary" sx={{ my: 1 }}>
            {translate('modules.content.empty')}
          </Typography>
        )}
        {entries.map((entry, index) => (
          <Paper
            variant="outlined"
            // Entries have no stable key of their own while edited: the position is the identity here.
            // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place, never reordered
            key={index}
            sx={{ p: 1.5, my: 1, display: 'flex', gap: 1 }}
            data-entry={index}
          >
            <Grid container spacing={1.5} sx={{ flex: 1 }}>
              {spec.fields.map((field) => (
                <Grid key={field.name} size={{ xs: 12, md: field.kind === 'markdown' ? 12 : 6 }}>
                  <EntryField
                    kind={kind}
                    field={field}
                    value={entry[field.name]}
                    problem={checked ? problems.byEntry.get(index)?.find((p) => p.field === field.name) : undefined}
                    onChange={(value) => edit(index, field.name, value)}
                  />
                </Grid>
              ))}
            </Grid>
            <Tooltip title={translate('ra.action.delete')}>
              <IconButton
                aria-label={translate('ra.action.delete')}
                onClick={() => setEntries((current) => current.filter((_, i) => i !== index))}
                data-testid={`remove-${kind}-${index}`}
                sx={{ alignSelf: 'flex-start' }}
              >
                <Delete />
              </IconButton>
            </Tooltip>
          </Paper>
        ))}
        <Box sx={{ mt: 2, display: 'flex', gap: 1 }}>
          <Button
            startIcon={<Add />}
            onClick={() => setEntries((current) => [...current, blankEntry(kind, current)])}
            disabled={entries.length >= spec.max}
            data-testid={`add-${kind}`}
          >
            {translate('modules.content.add')}
          </Button>
          <Button variant="contained" onClick={submit} disabled={saving} data-testid={`save-${kind}`}>
            {translate('settings.save_section', { section: translate(title) })}
          </Button>
        </Box>
      </CardContent>
    </Card>
  );
}

function EntryField(props: {
  kind: ContentKind;
  field: ContentField;
  value: unknown;
  problem: EntryProblem | undefined;
  onChange(value: string): void;
}) {
  const translate = useTranslate();
  const { kind, field, problem } = props;
  const value = typeof props.value === 'string' ? props.value : '';
  const label = translate(`modules.content.${kind}.fields.${field.name}`);
  const error = problem ? translate(problem.message, problem.values) : undefined;
  const help = error ?? (field.kind === 'markdown' ? translate('settings.help.markdown') : undefined);
  const common = {
    fullWidth: true,
    size: 'small' as const,
    label,
    error: Boolean(problem),
    helperText: help,
    required: field.required,
  };
  if (field.choices) {
    return (
      <TextField
        {...common}
        select
        value={value}
        onChange={(event) => props.onChange(event.target.value)}
        slotProps={{ htmlInput: { 'data-field': field.name } }}
      >
        {field.choices.map((choice) => (
          <MenuItem key={choice} value={choice}>
            {kind === 'api_info' ? (
              // Colours by their palette name, with a sample.
              <Box component="span" sx={{ display: 'flex', alignItems: 'center', gap: 1 }}>
                <Box
                  component="span"
                  sx={{ width: 12, height: 12, borderRadius: '50%', bgcolor: API_INFO_COLORS[choice] }}
                />
                {choice}
              </Box>
            ) : (
              translate(`modules.content.${kind}.choices.${choice}`)
            )}
          </MenuItem>
        ))}
      </TextField>
    );
  }
  if (field.kind === 'date') {
    return (
      <TextField
        {...common}
        type="datetime-local"
        value={isoToInput(value)}
        onChange={(event) => props.onChange(inputToIso(event.target.value))}
        slotProps={{ inputLabel: { shrink: true }, htmlInput: { 'data-field': field.name } }}
      />
    );
  }
  return (
    <TextField
      {...common}
      multiline={field.kind === 'markdown'}
      minRows={field.kind === 'markdown' ? 2 : undefined}
      maxRows={8}
      value={value}
      onChange={(event) => props.onChange(event.target.value)}
      slotProps={{ htmlInput: { 'data-field': field.name } }}
    />
  );
}
