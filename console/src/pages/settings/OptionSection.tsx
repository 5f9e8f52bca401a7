import {
  Box,
  Button,
  Card,
  CardContent,
  FormControlLabel,
  FormHelperText,
  Grid,
  MenuItem,
  Switch,
  TextField,
  Typography,
} from '@mui/material';
import { type ReactNode, useEffect, useMemo, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { useConfirm } from '../../resources/admin-shared.tsx';
import { useOptions } from './OptionsContext.tsx';
import {
  changedOptions,
  checkField,
  checkFields,
  type FieldProblem,
  initialValues,
  type OptionField,
  type OptionSectionDef,
  type OptionValues,
} from './options.ts';

/**
 * One settings section: its fields, checks on blur (JSON) and on save, and a save button that writes
 * only the keys that changed (spec doc 2 §5, §7, §8).
 */
export function OptionSection({ section, extra }: { section: OptionSectionDef; extra?: ReactNode }) {
  const translate = useTranslate();
  const notify = useNotify();
  const { options, save } = useOptions();
  const { ask, dialog } = useConfirm();
  const start = useMemo(() => initialValues(section.fields, options), [section.fields, options]);
  const [values, setValues] = useState<OptionValues>(start);
  const [problems, setProblems] = useState<Record<string, FieldProblem>>({});
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    setValues(start);
    setProblems({});
  }, [start]);

  const set = (key: string, value: string) => setValues((current) => ({ ...current, [key]: value }));

  const blur = (field: OptionField) => {
    const problem = checkField(field, values[field.key] ?? '');
    setProblems((current) => {
      const next = { ...current };
      if (problem) next[field.key] = problem;
      else delete next[field.key];
      return next;
    });
  };

  const submit = async () => {
    const found = checkFields(section.fields, values);
    setProblems(found);
    if (Object.keys(found).length > 0) {
      notify('settings.messages.check_input', { type: 'error' });
      return;
    }
    const changes = changedOptions(section.fields, options, values);
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

  const render = (field: OptionField) => {
    const value = values[field.key] ?? '';
    const problem = problems[field.key];
    const error = problem ? translate(problem.message, problem.values) : undefined;
    const help = error ?? (field.help ? translate(field.help) : undefined);
    const common = { 'data-option': field.key };
    switch (field.kind) {
      case 'switch':
        return (
          <Box>
            <FormControlLabel
              control={
                <Switch
                  checked={value === 'true'}
                  onChange={(event) => {
                    const checked = event.target.checked;
                    if (!checked && field.confirmOff) {
                      ask({
                        ...field.confirmOff,
                        onConfirm: () => set(field.key, 'false'),
                      });
                      return;
                    }
                    set(field.key, String(checked));
                  }}
                  slotProps={{ input: common }}
                />
              }
              label={translate(field.label)}
            />
            {help && <FormHelperText>{help}</FormHelperText>}
          </Box>
        );
      case 'select':
        return (
          <TextField
            select
            fullWidth
            size="small"
            label={translate(field.label)}
            value={value}
            onChange={(event) => set(field.key, event.target.value)}
            helperText={help}
            // A choice of "" (e.g. "any authenticator") is shown by its name, not as an empty field.
            slotProps={{ htmlInput: common, select: { displayEmpty: true }, inputLabel: { shrink: true } }}
          >
            {(field.choices ?? []).map((choice) => (
              <MenuItem key={choice.id} value={choice.id}>
                {translate(choice.name)}
              </MenuItem>
            ))}
          </TextField>
        );
      case 'json':
      case 'textarea':
        return (
          <TextField
            fullWidth
            multiline
            minRows={field.kind === 'json' ? 4 : 3}
            maxRows={16}
            size="small"
            label={translate(field.label)}
            value={value}
            onChange={(event) => set(field.key, event.target.value)}
            onBlur={() => blur(field)}
            error={Boolean(problem)}
            helperText={help}
            slotProps={{
              htmlInput: { ...common, style: field.kind === 'json' ? { fontFamily: 'monospace' } : undefined },
            }}
          />
        );
      default:
        return (
          <TextField
            fullWidth
            size="small"
            type={field.kind === 'number' ? 'number' : field.kind === 'secret' ? 'password' : 'text'}
            label={translate(field.label)}
            value={value}
            placeholder={field.kind === 'secret' ? translate('settings.secret_placeholder') : undefined}
            onChange={(event) => set(field.key, event.target.value)}
            onBlur={() => blur(field)}
            error={Boolean(problem)}
            helperText={help}
            autoComplete={field.kind === 'secret' ? 'new-password' : undefined}
            slotProps={{ htmlInput: { ...common, min: field.min, max: field.max, step: field.step } }}
          />
        );
    }
  };

  const wide = (field: OptionField) => field.kind === 'json' || field.kind === 'textarea';
  return (
    <Card variant="outlined" sx={{ mb: 2 }} data-section={section.id}>
      <CardContent>
        <Typography variant="subtitle1" sx={{ fontWeight: 600, mb: 2 }}>
          {translate(section.title)}
        </Typography>
        <Grid container spacing={2}>
          {section.fields.map((field) => (
            <Grid key={field.key} size={{ xs: 12, md: wide(field) ? 12 : field.kind === 'switch' ? 4 : 6 }}>
              {render(field)}
            </Grid>
          ))}
        </Grid>
        {extra}
        <Box sx={{ mt: 2 }}>
          <Button variant="contained" onClick={submit} disabled={saving} data-testid={`save-${section.id}`}>
            {translate('settings.save_section', { section: translate(section.title) })}
          </Button>
        </Box>
      </CardContent>
      {dialog}
    </Card>
  );
}
