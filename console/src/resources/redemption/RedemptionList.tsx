import Add from '@mui/icons-material/Add';
import Close from '@mui/icons-material/Close';
import ContentCopy from '@mui/icons-material/ContentCopy';
import DeleteSweep from '@mui/icons-material/DeleteSweep';
import {
  Box,
  Button,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Drawer,
  IconButton,
  Stack,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import { useState } from 'react';
import {
  BulkDeleteButton,
  Datagrid,
  FunctionField,
  List,
  TextField as RaTextField,
  TopToolbar,
  useListContext,
  useNotify,
  useRefresh,
  useTranslate,
} from 'react-admin';
import { formatQuota } from '../../format/quota.ts';
import { api, errorMessage } from '../../providers/http.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import {
  formatTime,
  PAGE_SX,
  RememberedPagination,
  rememberedPageSize,
  SearchFilter,
  useConfirm,
  useCopy,
} from '../admin-shared.tsx';
import {
  expiryToSeconds,
  isExpired,
  REDEMPTION_DEFAULTS,
  REDEMPTION_STATUS,
  type Redemption,
  type RedemptionFormValues,
  secondsToExpiry,
  validateRedemption,
} from './form.ts';

/** Quota presets (spec doc 2 §9), labelled in the display currency. */
const QUOTA_PRESETS = [500_000, 5_000_000, 25_000_000, 50_000_000, 250_000_000, 500_000_000];

const filters = [<SearchFilter key="q" source="q" alwaysOn placeholder="redemption.search" />];

/**
 * The redemption codes page (spec doc 2 §2 "Redemption codes page", title: manage redemption codes):
 * list and search (/rest/redemption), create (several at once, the new codes shown to copy), edit an
 * unused code, enable, disable, delete, delete invalid ones, batch copy.
 */
export function RedemptionList() {
  const [drawer, setDrawer] = useState<'new' | Redemption>();
  const [created, setCreated] = useState<string[]>();
  return (
    <Box data-testid="redemption-page" sx={PAGE_SX}>
      <List
        resource="redemption"
        title="redemption.title"
        filters={filters}
        empty={false}
        perPage={rememberedPageSize()}
        pagination={<RememberedPagination />}
        sort={{ field: 'id', order: 'DESC' }}
        actions={<Actions onCreate={() => setDrawer('new')} />}
      >
        <RedemptionGrid onEdit={(code) => setDrawer(code)} />
      </List>
      {drawer && (
        <RedemptionDrawer
          code={drawer === 'new' ? undefined : drawer}
          onClose={() => setDrawer(undefined)}
          onCreated={(keys) => {
            setDrawer(undefined);
            setCreated(keys);
          }}
        />
      )}
      {created && <CreatedCodesDialog keys={created} onClose={() => setCreated(undefined)} />}
    </Box>
  );
}

function Actions({ onCreate }: { onCreate: () => void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const refresh = useRefresh();
  const { ask, dialog } = useConfirm();
  return (
    <TopToolbar>
      <Button variant="contained" startIcon={<Add />} onClick={onCreate} data-testid="redemption-add">
        {translate('redemption.actions.add')}
      </Button>
      <Button
        color="error"
        startIcon={<DeleteSweep />}
        data-testid="redemption-delete-invalid"
        onClick={() =>
          ask({
            title: 'redemption.confirm.delete_invalid_title',
            content: 'redemption.confirm.delete_invalid',
            danger: true,
            onConfirm: async () => {
              try {
                const envelope = await api.request('DELETE', '/api/redemption/invalid');
                notify(envelope.message, { type: 'success' });
                refresh();
              } catch (error) {
                notify(errorMessage(error), { type: 'error' });
              }
            },
          })
        }
      >
        {translate('redemption.actions.delete_invalid')}
      </Button>
      {dialog}
    </TopToolbar>
  );
}

function BulkCopyButton() {
  const translate = useTranslate();
  const notify = useNotify();
  const { selectedIds, data } = useListContext<Redemption>();
  const { copy, dialog } = useCopy();
  return (
    <>
      <Button
        size="small"
        startIcon={<ContentCopy />}
        data-testid="redemption-bulk-copy"
        onClick={() => {
          const keys = (data ?? []).filter((code) => selectedIds.includes(code.id)).map((code) => code.key);
          if (keys.length === 0) {
            notify('redemption.validation.select_to_copy', { type: 'error' });
            return;
          }
          void copy(keys.join('\n'));
        }}
      >
        {translate('redemption.actions.copy_selected')}
      </Button>
      {dialog}
    </>
  );
}

function RedemptionGrid({ onEdit }: { onEdit: (code: Redemption) => void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const refresh = useRefresh();
  const { status } = useStatus();
  const { copy, dialog: copyDialog } = useCopy();
  const { ask, dialog } = useConfirm();

  const run = async (call: () => Promise<{ message: string }>) => {
    try {
      const envelope = await call();
      notify(envelope.message || 'redemption.messages.updated', { type: 'success' });
      refresh();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  };
  const setStatus = (code: Redemption, next: number) =>
    run(() =>
      api.request('PUT', '/api/redemption/', { query: { status_only: true }, body: { id: code.id, status: next } }),
    );

  return (
    <>
      <Datagrid
        bulkActionButtons={
          <>
            <BulkCopyButton />
            <BulkDeleteButton mutationMode="pessimistic" />
          </>
        }
        rowClick={false}
        rowSx={(record) => (record.status !== REDEMPTION_STATUS.unused ? { bgcolor: 'action.hover' } : {})}
      >
        <RaTextField source="id" label="redemption.fields.id" />
        <RaTextField source="name" label="redemption.fields.name" />
        <FunctionField<Redemption>
          label="redemption.fields.status"
          render={(code) => <RedemptionStatus code={code} />}
        />
        <FunctionField<Redemption>
          label="redemption.fields.quota"
          render={(code) => (
            <Tooltip title={String(code.quota)}>
              <span>{formatQuota(code.quota, status)}</span>
            </Tooltip>
          )}
        />
        <FunctionField<Redemption>
          label="redemption.fields.created_time"
          render={(code) => formatTime(code.created_time)}
        />
        <FunctionField<Redemption>
          label="redemption.fields.expired_time"
          render={(code) => (code.expired_time > 0 ? formatTime(code.expired_time) : translate('redemption.never'))}
        />
        <FunctionField<Redemption>
          label="redemption.fields.used_user_id"
          render={(code) => (code.used_user_id ? code.used_user_id : translate('redemption.none'))}
        />
        <FunctionField<Redemption>
          label="redemption.fields.actions"
          textAlign="right"
          render={(code) => (
            <Stack direction="row" spacing={0.5} sx={{ justifyContent: 'flex-end' }} data-code-id={code.id}>
              <Button size="small" onClick={() => copy(code.key)} data-testid="redemption-copy">
                {translate('redemption.actions.copy')}
              </Button>
              {code.status === REDEMPTION_STATUS.unused ? (
                <Button
                  size="small"
                  color="warning"
                  onClick={() => setStatus(code, REDEMPTION_STATUS.disabled)}
                  data-testid="redemption-disable"
                >
                  {translate('redemption.actions.disable')}
                </Button>
              ) : (
                <Button
                  size="small"
                  color="success"
                  disabled={code.status === REDEMPTION_STATUS.used}
                  onClick={() => setStatus(code, REDEMPTION_STATUS.unused)}
                  data-testid="redemption-enable"
                >
                  {translate('redemption.actions.enable')}
                </Button>
              )}
              <Button
                size="small"
                disabled={code.status !== REDEMPTION_STATUS.unused}
                onClick={() => onEdit(code)}
                data-testid="redemption-edit"
              >
                {translate('redemption.actions.edit')}
              </Button>
              <Button
                size="small"
                color="error"
                data-testid="redemption-delete"
                onClick={() =>
                  ask({
                    title: 'redemption.confirm.delete_title',
                    content: 'redemption.confirm.delete',
                    values: { name: code.name },
                    danger: true,
                    onConfirm: () => run(() => api.request('DELETE', `/api/redemption/${code.id}/`)),
                  })
                }
              >
                {translate('redemption.actions.delete')}
              </Button>
            </Stack>
          )}
        />
      </Datagrid>
      {dialog}
      {copyDialog}
    </>
  );
}

function RedemptionStatus({ code }: { code: Redemption }) {
  const translate = useTranslate();
  if (isExpired(code)) return <Chip size="small" color="warning" label={translate('redemption.status.expired')} />;
  switch (code.status) {
    case REDEMPTION_STATUS.unused:
      return <Chip size="small" color="success" label={translate('redemption.status.unused')} />;
    case REDEMPTION_STATUS.disabled:
      return <Chip size="small" color="error" label={translate('redemption.status.disabled')} />;
    case REDEMPTION_STATUS.used:
      return <Chip size="small" label={translate('redemption.status.used')} />;
    default:
      return <Chip size="small" label={translate('redemption.status.unknown')} />;
  }
}

/** Create (count, quota, name, expiry) and edit (name, quota, expiry of an unused code). */
function RedemptionDrawer({
  code,
  onClose,
  onCreated,
}: {
  code?: Redemption;
  onClose: () => void;
  onCreated: (keys: string[]) => void;
}) {
  const translate = useTranslate();
  const notify = useNotify();
  const refresh = useRefresh();
  const { status } = useStatus();
  const creating = code === undefined;
  const [values, setValues] = useState<RedemptionFormValues>({
    name: code?.name ?? '',
    quota: String(code?.quota ?? REDEMPTION_DEFAULTS.quota),
    count: String(REDEMPTION_DEFAULTS.count),
    expiry: secondsToExpiry(code?.expired_time ?? 0),
  });
  const [saving, setSaving] = useState(false);
  const set = (key: keyof RedemptionFormValues, value: string) =>
    setValues((current) => ({ ...current, [key]: value }));
  const quota = Number(values.quota);

  const save = async () => {
    const problem = validateRedemption(values, creating);
    if (problem) {
      notify(problem, { type: 'error' });
      return;
    }
    setSaving(true);
    try {
      const body = {
        // Spec doc 2 §9: the default name is the formatted quota.
        name: values.name.trim() || formatQuota(quota, status),
        quota,
        expired_time: expiryToSeconds(values.expiry),
      };
      if (creating) {
        const envelope = await api.request<string[]>('POST', '/api/redemption/', {
          body: { ...body, count: Number(values.count) },
        });
        notify(envelope.message || 'redemption.messages.created', { type: 'success' });
        refresh();
        onCreated(envelope.data ?? []);
      } else {
        const envelope = await api.request('PUT', '/api/redemption/', { body: { ...body, id: code.id } });
        notify(envelope.message || 'redemption.messages.updated', { type: 'success' });
        refresh();
        onClose();
      }
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setSaving(false);
    }
  };

  return (
    <Drawer
      anchor="right"
      open
      onClose={onClose}
      slotProps={{ paper: { sx: { width: { xs: '100%', sm: 480 } } } }}
      data-testid="redemption-drawer"
    >
      <Box sx={{ display: 'flex', alignItems: 'center', px: 2, py: 1.5 }}>
        <Typography variant="h6" sx={{ flex: 1 }}>
          {translate(creating ? 'redemption.form.create_title' : 'redemption.form.edit_title')}
        </Typography>
        <IconButton onClick={onClose} aria-label={translate('common.close')}>
          <Close />
        </IconButton>
      </Box>
      <Stack spacing={2} sx={{ px: 2, pb: 2, flex: 1, overflowY: 'auto' }}>
        <TextField
          label={translate('redemption.fields.name')}
          value={values.name}
          onChange={(event) => set('name', event.target.value)}
          helperText={translate('redemption.form.name_help')}
          fullWidth
          slotProps={{ htmlInput: { 'data-testid': 'redemption-name' } }}
        />
        <TextField
          label={translate('redemption.fields.quota')}
          value={values.quota}
          onChange={(event) => set('quota', event.target.value)}
          helperText={Number.isFinite(quota) && quota > 0 ? formatQuota(quota, status) : ' '}
          fullWidth
          slotProps={{ htmlInput: { 'data-testid': 'redemption-quota', inputMode: 'numeric' } }}
        />
        <Stack direction="row" spacing={1} sx={{ flexWrap: 'wrap', rowGap: 1 }}>
          {QUOTA_PRESETS.map((preset) => (
            <Chip
              key={preset}
              label={formatQuota(preset, status, 0)}
              onClick={() => set('quota', String(preset))}
              variant={quota === preset ? 'filled' : 'outlined'}
              color="primary"
            />
          ))}
        </Stack>
        {creating && (
          <TextField
            label={translate('redemption.fields.count')}
            value={values.count}
            onChange={(event) => set('count', event.target.value)}
            helperText={translate('redemption.form.count_help')}
            fullWidth
            slotProps={{ htmlInput: { 'data-testid': 'redemption-count', inputMode: 'numeric' } }}
          />
        )}
        <TextField
          label={translate('redemption.fields.expired_time')}
          type="datetime-local"
          value={values.expiry}
          onChange={(event) => set('expiry', event.target.value)}
          helperText={translate('redemption.form.expiry_help')}
          fullWidth
          slotProps={{ inputLabel: { shrink: true }, htmlInput: { 'data-testid': 'redemption-expiry' } }}
        />
      </Stack>
      <Box sx={{ display: 'flex', gap: 1, justifyContent: 'flex-end', p: 2, borderTop: 1, borderColor: 'divider' }}>
        <Button onClick={onClose}>{translate('common.cancel')}</Button>
        <Button variant="contained" onClick={save} disabled={saving} data-testid="redemption-submit">
          {translate('redemption.form.submit')}
        </Button>
      </Box>
    </Drawer>
  );
}

/** The codes just generated, to copy (spec doc 2 §2 "batch copy"). */
function CreatedCodesDialog({ keys, onClose }: { keys: string[]; onClose: () => void }) {
  const translate = useTranslate();
  const { copy, dialog } = useCopy();
  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="sm" data-testid="redemption-created">
      <DialogTitle>{translate('redemption.created.title', { count: keys.length })}</DialogTitle>
      <DialogContent>
        <TextField
          value={keys.join('\n')}
          multiline
          fullWidth
          minRows={Math.min(keys.length, 10)}
          slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'redemption-created-keys' } }}
        />
      </DialogContent>
      <DialogActions>
        <Button startIcon={<ContentCopy />} onClick={() => copy(keys.join('\n'))} data-testid="redemption-copy-all">
          {translate('redemption.actions.copy_all')}
        </Button>
        <Button variant="contained" onClick={onClose}>
          {translate('common.close')}
        </Button>
      </DialogActions>
      {dialog}
    </Dialog>
  );
}
