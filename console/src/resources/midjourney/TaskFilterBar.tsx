import { Box, Button, TextField } from '@mui/material';
import { type FormEvent, type ReactNode, useState } from 'react';
import { useListContext, useTranslate } from 'react-admin';
import { fromLocalInput, toLocalInput } from '../../format/time.ts';

export interface FilterField {
  key: string;
  label: string;
  kind: 'text' | 'number' | 'time';
}

/**
 * The filter form of the drawing and task logs (spec doc 3 §2): every field optional, applied by the
 * Query button. Times are held as the list's unit: milliseconds (drawing log) or seconds (task log).
 */
export function TaskFilterBar(props: { fields: FilterField[]; millis: boolean; testId: string; children?: ReactNode }) {
  const translate = useTranslate();
  const { filterValues, setFilters } = useListContext();
  const [form, setForm] = useState<Record<string, unknown>>(filterValues);
  const scale = props.millis ? 1000 : 1;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const clean: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(form)) {
      if (value !== undefined && value !== '' && value !== null) clean[key] = value;
    }
    setFilters(clean, {});
  };
  return (
    <Box
      component="form"
      onSubmit={submit}
      sx={{ display: 'flex', flexWrap: 'wrap', gap: 1, alignItems: 'center', p: 1 }}
      data-testid={props.testId}
    >
      {props.fields.map((field) =>
        field.kind === 'time' ? (
          <TextField
            key={field.key}
            size="small"
            type="datetime-local"
            label={translate(field.label)}
            value={toLocalInput(typeof form[field.key] === 'number' ? (form[field.key] as number) / scale : undefined)}
            onChange={(event) => {
              const seconds = fromLocalInput(event.target.value);
              setForm({ ...form, [field.key]: seconds === undefined ? undefined : seconds * scale });
            }}
            slotProps={{ inputLabel: { shrink: true }, htmlInput: { 'data-testid': `filter-${field.key}` } }}
            fullWidth={false}
            sx={{ width: 220 }}
          />
        ) : (
          <TextField
            key={field.key}
            size="small"
            type={field.kind === 'number' ? 'number' : 'text'}
            label={translate(field.label)}
            value={(form[field.key] as string | number | undefined) ?? ''}
            onChange={(event) => setForm({ ...form, [field.key]: event.target.value })}
            slotProps={{ htmlInput: { 'data-testid': `filter-${field.key}` } }}
            fullWidth={false}
            sx={{ width: 180 }}
          />
        ),
      )}
      <Button type="submit" variant="contained" data-testid={`${props.testId}-query`}>
        {translate('log.query')}
      </Button>
      {props.children}
    </Box>
  );
}
