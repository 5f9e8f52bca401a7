import Add from '@mui/icons-material/Add';
import Delete from '@mui/icons-material/Delete';
import Edit from '@mui/icons-material/Edit';
import {
  Alert,
  Box,
  Button,
  Checkbox,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  FormControlLabel,
  IconButton,
  MenuItem,
  Radio,
  RadioGroup,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TablePagination,
  TableRow,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import { useEffect, useMemo, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { useOptions } from './OptionsContext.tsx';
import {
  applyBatch,
  applyEdit,
  type BatchMode,
  changedPriceOptions,
  checkNewName,
  type EditInput,
  editInputOf,
  inputPrice,
  outputPrice,
  type PriceRow,
  readPriceMaps,
  rowMode,
  rowsFromMaps,
} from './pricing.ts';

/** The visual table's fixed page size (spec doc 2 §9); the unset-models table offers 10-100. */
const EDITOR_PAGE_SIZE = 10;
const UNSET_PAGE_SIZES = [10, 20, 50, 100];

const show = (n: number | undefined) => (n === undefined ? '-' : String(n));

/**
 * The visual pricing editor (spec doc 2 §4, §5 "Pricing table"): search, add a model, edit by ratio,
 * by per-1M-token price or as a fixed price per call, delete, batch set; saving writes only the price
 * options that changed. With `models` it works on those names only (the unset-ratio models sub-tab).
 */
export function PricingEditor({ models }: { models?: readonly string[] }) {
  const translate = useTranslate();
  const notify = useNotify();
  const { options, save } = useOptions();
  const unsetView = models !== undefined;
  const initial = useMemo(() => rowsFromMaps(readPriceMaps(options), models ?? []), [options, models]);
  const [rows, setRows] = useState<PriceRow[]>(initial);
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(0);
  const [pageSize, setPageSize] = useState(unsetView ? 10 : EDITOR_PAGE_SIZE);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [editing, setEditing] = useState<PriceRow>();
  const [adding, setAdding] = useState(false);
  const [batch, setBatch] = useState(false);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    setRows(initial);
    setSelected(new Set());
  }, [initial]);

  const scope = useMemo(() => (models ? new Set(models) : undefined), [models]);
  const visible = rows.filter(
    (row) => (!scope || scope.has(row.name)) && row.name.toLowerCase().includes(search.trim().toLowerCase()),
  );
  const shown = visible.slice(page * pageSize, (page + 1) * pageSize);
  const changes = changedPriceOptions(options, rows);

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

  const toggle = (name: string, checked: boolean) =>
    setSelected((current) => {
      const next = new Set(current);
      if (checked) next.add(name);
      else next.delete(name);
      return next;
    });

  return (
    <Box data-testid={unsetView ? 'unset-models' : 'pricing-editor'}>
      {unsetView && (
        <Alert severity="info" sx={{ mb: 2 }}>
          {translate('settings.pricing.unset_notice')}
        </Alert>
      )}
      <Stack
        direction={{ xs: 'column', sm: 'row' }}
        spacing={1}
        sx={{ mb: 1.5, alignItems: { sm: 'center' }, '& .MuiButton-root': { whiteSpace: 'nowrap', flexShrink: 0 } }}
      >
        <TextField
          size="small"
          label={translate('settings.pricing.search')}
          value={search}
          onChange={(event) => {
            setSearch(event.target.value);
            setPage(0);
          }}
          sx={{ width: { xs: '100%', sm: 280 } }}
          slotProps={{ htmlInput: { 'data-testid': 'pricing-search' } }}
        />
        {!unsetView && (
          <Button startIcon={<Add />} onClick={() => setAdding(true)} data-testid="pricing-add">
            {translate('settings.pricing.add_model')}
          </Button>
        )}
        <Button onClick={() => setBatch(true)} data-testid="pricing-batch">
          {translate('settings.pricing.batch')}
        </Button>
        <Box sx={{ flex: 1 }} />
        {changes.length > 0 && (
          <Chip color="warning" size="small" label={translate('settings.pricing.unsaved', { count: changes.length })} />
        )}
        <Button variant="contained" onClick={submit} disabled={saving} data-testid="pricing-save">
          {translate('settings.pricing.save')}
        </Button>
      </Stack>
      <TableContainer>
        <Table size="small">
          <TableHead>
            <TableRow>
              <TableCell padding="checkbox">
                <Checkbox
                  checked={shown.length > 0 && shown.every((row) => selected.has(row.name))}
                  onChange={(event) => {
                    for (const row of shown) toggle(row.name, event.target.checked);
                  }}
                />
              </TableCell>
              <TableCell>{translate('settings.pricing.name')}</TableCell>
              <TableCell>{translate('settings.pricing.billing')}</TableCell>
              <TableCell align="right">{translate('settings.pricing.fixed_price')}</TableCell>
              <TableCell align="right">{translate('settings.pricing.ratio')}</TableCell>
              <TableCell align="right">{translate('settings.pricing.completion_ratio')}</TableCell>
              <TableCell align="right">{translate('settings.pricing.input_price')}</TableCell>
              <TableCell align="right">{translate('settings.pricing.output_price')}</TableCell>
              <TableCell align="right">{translate('settings.pricing.actions')}</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {shown.map((row) => {
              const mode = rowMode(row);
              return (
                <TableRow key={row.name} data-model={row.name} hover>
                  <TableCell padding="checkbox">
                    <Checkbox
                      checked={selected.has(row.name)}
                      onChange={(event) => toggle(row.name, event.target.checked)}
                    />
                  </TableCell>
                  <TableCell sx={{ whiteSpace: 'nowrap' }}>{row.name}</TableCell>
                  <TableCell>
                    <Chip
                      size="small"
                      color={mode === 'fixed' ? 'secondary' : mode === 'token' ? 'primary' : 'default'}
                      label={translate(
                        mode === 'fixed'
                          ? 'settings.pricing.per_request'
                          : mode === 'token'
                            ? 'settings.pricing.per_token'
                            : 'settings.pricing.unset',
                      )}
                    />
                  </TableCell>
                  <TableCell align="right">{show(row.price)}</TableCell>
                  <TableCell align="right">{mode === 'fixed' ? '-' : show(row.ratio)}</TableCell>
                  <TableCell align="right">{mode === 'fixed' ? '-' : show(row.completionRatio)}</TableCell>
                  <TableCell align="right">{mode === 'token' ? show(inputPrice(row)) : '-'}</TableCell>
                  <TableCell align="right">{mode === 'token' ? show(outputPrice(row)) : '-'}</TableCell>
                  <TableCell align="right">
                    <Tooltip title={translate('settings.pricing.edit')}>
                      <IconButton size="small" onClick={() => setEditing(row)} data-testid="pricing-edit">
                        <Edit fontSize="small" />
                      </IconButton>
                    </Tooltip>
                    <Tooltip title={translate('settings.pricing.delete')}>
                      <IconButton
                        size="small"
                        color="error"
                        onClick={() => setRows(rows.map((r) => (r.name === row.name ? { name: r.name } : r)))}
                        data-testid="pricing-delete"
                      >
                        <Delete fontSize="small" />
                      </IconButton>
                    </Tooltip>
                  </TableCell>
                </TableRow>
              );
            })}
            {shown.length === 0 && (
              <TableRow>
                <TableCell colSpan={9}>
                  <Typography color="text.secondary" sx={{ textAlign: 'center', p: 2 }}>
                    {translate('settings.pricing.empty')}
                  </Typography>
                </TableCell>
              </TableRow>
            )}
          </TableBody>
        </Table>
      </TableContainer>
      <TablePagination
        component="div"
        count={visible.length}
        page={Math.min(page, Math.max(0, Math.ceil(visible.length / pageSize) - 1))}
        onPageChange={(_event, next) => setPage(next)}
        rowsPerPage={pageSize}
        rowsPerPageOptions={unsetView ? UNSET_PAGE_SIZES : [EDITOR_PAGE_SIZE]}
        onRowsPerPageChange={(event) => {
          setPageSize(Number(event.target.value));
          setPage(0);
        }}
        labelRowsPerPage={translate('channel.list.page_size')}
        labelDisplayedRows={({ from, to, count }) => translate('channel.list.range', { from, to, count })}
      />
      {editing && (
        <EditPriceDialog
          row={editing}
          onClose={() => setEditing(undefined)}
          onApply={(next) => {
            setRows(rows.map((r) => (r.name === next.name ? next : r)));
            setEditing(undefined);
          }}
        />
      )}
      {adding && (
        <AddModelDialog
          onClose={() => setAdding(false)}
          onAdd={(name) => {
            const problem = checkNewName(rows, name);
            if (problem) {
              notify(problem, { type: 'error' });
              return;
            }
            const row = { name: name.trim() };
            setRows([...rows, row].sort((a, b) => a.name.localeCompare(b.name)));
            setAdding(false);
            setEditing(row);
          }}
        />
      )}
      {batch && (
        <BatchDialog
          onClose={() => setBatch(false)}
          onApply={(mode, values) => {
            const result = applyBatch(rows, selected, mode, values);
            if (result.problem || !result.rows) {
              notify(result.problem ?? 'settings.pricing.select_first', { type: 'error' });
              return;
            }
            setRows(result.rows);
            setBatch(false);
            notify('settings.pricing.batch_applied', { type: 'info', messageArgs: { count: selected.size } });
          }}
        />
      )}
    </Box>
  );
}

function EditPriceDialog({
  row,
  onClose,
  onApply,
}: {
  row: PriceRow;
  onClose: () => void;
  onApply: (row: PriceRow) => void;
}) {
  const translate = useTranslate();
  const notify = useNotify();
  const [input, setInput] = useState<EditInput>(() => editInputOf(row));
  const set = (key: keyof EditInput, value: string) => setInput((current) => ({ ...current, [key]: value }));
  const fixed = input.mode === 'fixed';
  const field = (key: keyof EditInput, label: string, disabled: boolean) => (
    <TextField
      size="small"
      label={translate(label)}
      value={input[key]}
      onChange={(event) => set(key, event.target.value)}
      disabled={disabled}
      fullWidth
      slotProps={{ htmlInput: { 'data-testid': `price-${key}` } }}
    />
  );
  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="sm" data-testid="pricing-edit-dialog">
      <DialogTitle>{translate('settings.pricing.edit_title', { name: row.name })}</DialogTitle>
      <DialogContent>
        <RadioGroup
          row
          value={fixed ? 'fixed' : 'token'}
          onChange={(event) => set('mode', event.target.value === 'fixed' ? 'fixed' : 'ratio')}
        >
          <FormControlLabel value="token" control={<Radio />} label={translate('settings.pricing.per_token')} />
          <FormControlLabel value="fixed" control={<Radio />} label={translate('settings.pricing.per_request')} />
        </RadioGroup>
        {!fixed && (
          <RadioGroup row value={input.mode} onChange={(event) => set('mode', event.target.value)}>
            <FormControlLabel value="ratio" control={<Radio />} label={translate('settings.pricing.by_ratio')} />
            <FormControlLabel value="price" control={<Radio />} label={translate('settings.pricing.by_price')} />
          </RadioGroup>
        )}
        <Stack spacing={2} sx={{ mt: 1 }}>
          {fixed ? (
            field('price', 'settings.pricing.fixed_price', false)
          ) : input.mode === 'ratio' ? (
            <>
              {field('ratio', 'settings.pricing.ratio', fixed)}
              {field('completionRatio', 'settings.pricing.completion_ratio', fixed)}
            </>
          ) : (
            <>
              {field('inputPrice', 'settings.pricing.input_price', fixed)}
              {field('outputPrice', 'settings.pricing.output_price', fixed)}
              <Typography variant="caption" color="text.secondary">
                {translate('settings.pricing.price_formula')}
              </Typography>
            </>
          )}
          <Alert severity="info">
            {translate(fixed ? 'settings.pricing.fixed_clears' : 'settings.pricing.token_clears')}
          </Alert>
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('common.cancel')}</Button>
        <Button
          variant="contained"
          data-testid="pricing-edit-apply"
          onClick={() => {
            const result = applyEdit(row, input);
            if (result.problem || !result.row) {
              notify(result.problem ?? 'settings.pricing.not_number', { type: 'error' });
              return;
            }
            onApply(result.row);
          }}
        >
          {translate('common.confirm')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

function AddModelDialog({ onClose, onAdd }: { onClose: () => void; onAdd: (name: string) => void }) {
  const translate = useTranslate();
  const [name, setName] = useState('');
  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="xs" data-testid="pricing-add-dialog">
      <DialogTitle>{translate('settings.pricing.add_model')}</DialogTitle>
      <DialogContent>
        <TextField
          autoFocus
          label={translate('settings.pricing.name')}
          value={name}
          onChange={(event) => setName(event.target.value)}
          fullWidth
          sx={{ mt: 1 }}
          slotProps={{ htmlInput: { 'data-testid': 'pricing-add-name' } }}
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('common.cancel')}</Button>
        <Button variant="contained" onClick={() => onAdd(name)} data-testid="pricing-add-ok">
          {translate('common.confirm')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

function BatchDialog({
  onClose,
  onApply,
}: {
  onClose: () => void;
  onApply: (mode: BatchMode, values: { ratio: string; completionRatio: string; fill: string }) => void;
}) {
  const translate = useTranslate();
  const [mode, setMode] = useState<BatchMode>('both');
  const [values, setValues] = useState({ ratio: '', completionRatio: '', fill: '' });
  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="xs" data-testid="pricing-batch-dialog">
      <DialogTitle>{translate('settings.pricing.batch')}</DialogTitle>
      <DialogContent>
        <Stack spacing={2} sx={{ mt: 1 }}>
          <TextField
            select
            size="small"
            label={translate('settings.pricing.batch_mode')}
            value={mode}
            onChange={(event) => setMode(event.target.value as BatchMode)}
            slotProps={{ htmlInput: { 'data-testid': 'pricing-batch-mode' } }}
          >
            <MenuItem value="both">{translate('settings.pricing.batch_both')}</MenuItem>
            <MenuItem value="ratio">{translate('settings.pricing.ratio')}</MenuItem>
            <MenuItem value="completion">{translate('settings.pricing.completion_ratio')}</MenuItem>
            <MenuItem value="price">{translate('settings.pricing.fixed_price')}</MenuItem>
          </TextField>
          {mode === 'both' ? (
            <>
              <TextField
                size="small"
                label={translate('settings.pricing.ratio')}
                value={values.ratio}
                onChange={(event) => setValues({ ...values, ratio: event.target.value })}
                slotProps={{ htmlInput: { 'data-testid': 'pricing-batch-ratio' } }}
              />
              <TextField
                size="small"
                label={translate('settings.pricing.completion_ratio')}
                value={values.completionRatio}
                onChange={(event) => setValues({ ...values, completionRatio: event.target.value })}
                slotProps={{ htmlInput: { 'data-testid': 'pricing-batch-completion' } }}
              />
            </>
          ) : (
            <TextField
              size="small"
              label={translate('settings.pricing.fill_value')}
              value={values.fill}
              onChange={(event) => setValues({ ...values, fill: event.target.value })}
              slotProps={{ htmlInput: { 'data-testid': 'pricing-batch-fill' } }}
            />
          )}
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('common.cancel')}</Button>
        <Button variant="contained" onClick={() => onApply(mode, values)} data-testid="pricing-batch-apply">
          {translate('common.confirm')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
