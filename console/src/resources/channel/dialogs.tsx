import Close from '@mui/icons-material/Close';
import {
  Alert,
  Autocomplete,
  Box,
  Button,
  Checkbox,
  Chip,
  CircularProgress,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Drawer,
  FormControlLabel,
  IconButton,
  MenuItem,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  TextField,
  Typography,
} from '@mui/material';
import { useEffect, useMemo, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { api, errorMessage } from '../../providers/http.ts';
import { formatTime } from '../admin-shared.tsx';
import { type Channel, isJsonOrEmpty, splitList, type TagEditValues, tagEditPayload } from './form.ts';
import { ResponseTime } from './parts.tsx';

/** Endpoints a channel test may use (gateway `endpoint_type`); empty lets the gateway choose. */
const TEST_ENDPOINTS = ['', 'chat', 'responses', 'embeddings', 'images', 'rerank', 'realtime'] as const;

interface TestResult {
  ok: boolean;
  message: string;
  time?: number;
}

/** The model-test picker (spec doc 2 §2): one channel, any of its models, one test each. */
export function ModelTestDialog({
  channel,
  onClose,
  onTested,
}: {
  channel: Channel;
  onClose: () => void;
  onTested: () => void;
}) {
  const translate = useTranslate();
  const notify = useNotify();
  const [search, setSearch] = useState('');
  const [endpoint, setEndpoint] = useState<(typeof TEST_ENDPOINTS)[number]>('');
  const [results, setResults] = useState<Record<string, TestResult>>({});
  const [running, setRunning] = useState<string>();
  const models = useMemo(() => splitList(channel.models), [channel.models]);
  const shown = models.filter((model) => model.toLowerCase().includes(search.trim().toLowerCase()));

  const test = async (model: string) => {
    setRunning(model);
    try {
      const envelope = (await api.request('GET', `/api/channel/test/${channel.id}`, {
        query: { model, endpoint_type: endpoint || undefined },
      })) as { message: string; time?: number };
      const time = Number(envelope.time ?? 0);
      setResults((current) => ({ ...current, [model]: { ok: true, message: envelope.message, time } }));
      notify('channel.messages.test_success', {
        type: 'success',
        messageArgs: { name: channel.name, model, time: time.toFixed(2) },
      });
      onTested();
    } catch (error) {
      const message = errorMessage(error);
      setResults((current) => ({ ...current, [model]: { ok: false, message } }));
      notify(message, { type: 'error' });
    } finally {
      setRunning(undefined);
    }
  };

  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="md" data-testid="model-test-dialog">
      <DialogTitle>{translate('channel.test.title', { name: channel.name })}</DialogTitle>
      <DialogContent>
        <Stack direction="row" spacing={2} sx={{ my: 1 }}>
          <TextField
            size="small"
            label={translate('channel.test.search')}
            value={search}
            onChange={(event) => setSearch(event.target.value)}
            fullWidth
          />
          <TextField
            select
            size="small"
            label={translate('channel.test.endpoint')}
            value={endpoint}
            onChange={(event) => setEndpoint(event.target.value as (typeof TEST_ENDPOINTS)[number])}
            sx={{ minWidth: 180 }}
          >
            {TEST_ENDPOINTS.map((name) => (
              <MenuItem key={name} value={name}>
                {name || translate('channel.test.endpoint_auto')}
              </MenuItem>
            ))}
          </TextField>
        </Stack>
        <Table size="small">
          <TableHead>
            <TableRow>
              <TableCell>{translate('channel.test.model')}</TableCell>
              <TableCell>{translate('channel.test.result')}</TableCell>
              <TableCell align="right" />
            </TableRow>
          </TableHead>
          <TableBody>
            {shown.map((model) => {
              const result = results[model];
              return (
                <TableRow key={model} data-model={model}>
                  <TableCell>
                    {model}
                    {model === channel.test_model && (
                      <Chip size="small" sx={{ ml: 1 }} label={translate('channel.test.default_model')} />
                    )}
                  </TableCell>
                  <TableCell>
                    {result ? (
                      result.ok ? (
                        <ResponseTime ms={(result.time ?? 0) * 1000} />
                      ) : (
                        <Typography variant="body2" color="error">
                          {result.message}
                        </Typography>
                      )
                    ) : (
                      <Typography variant="body2" color="text.secondary">
                        {translate('channel.test.not_tested')}
                      </Typography>
                    )}
                  </TableCell>
                  <TableCell align="right">
                    <Button
                      size="small"
                      variant="outlined"
                      disabled={running !== undefined}
                      onClick={() => test(model)}
                      data-testid="test-model"
                    >
                      {running === model ? <CircularProgress size={16} /> : translate('channel.actions.test')}
                    </Button>
                  </TableCell>
                </TableRow>
              );
            })}
          </TableBody>
        </Table>
        {shown.length === 0 && (
          <Typography color="text.secondary" sx={{ p: 2 }}>
            {translate('channel.test.no_models')}
          </Typography>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('common.close')}</Button>
      </DialogActions>
    </Dialog>
  );
}

interface UpstreamGroup {
  group: string;
  first_seen: number;
  last_seen: number;
  client_types: Array<{ client_type: string; count: number; first_seen: number; last_seen: number }>;
}

/** Upstream detection result (spec doc 2 §3): the groups and client types that reached a channel. */
export function UpstreamDialog({ channel, onClose }: { channel: Channel; onClose: () => void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const [groups, setGroups] = useState<UpstreamGroup[]>();
  useEffect(() => {
    api
      .get<{ groups: UpstreamGroup[] }>(`/api/channel/test_upstream/${channel.id}`)
      .then((data) => setGroups(data?.groups ?? []))
      .catch((error) => {
        notify(errorMessage(error), { type: 'error' });
        setGroups([]);
      });
  }, [channel.id, notify]);
  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="md" data-testid="upstream-dialog">
      <DialogTitle>{translate('channel.upstream.title', { name: channel.name })}</DialogTitle>
      <DialogContent>
        {!groups ? (
          <CircularProgress />
        ) : groups.length === 0 ? (
          <Alert severity="info">{translate('channel.upstream.empty')}</Alert>
        ) : (
          <Table size="small">
            <TableHead>
              <TableRow>
                <TableCell>{translate('channel.upstream.group')}</TableCell>
                <TableCell>{translate('channel.upstream.client_type')}</TableCell>
                <TableCell align="right">{translate('channel.upstream.count')}</TableCell>
                <TableCell>{translate('channel.upstream.first_seen')}</TableCell>
                <TableCell>{translate('channel.upstream.last_seen')}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {groups.flatMap((group) =>
                (group.client_types.length > 0
                  ? group.client_types
                  : [{ client_type: '-', count: 0, first_seen: group.first_seen, last_seen: group.last_seen }]
                ).map((client, index) => (
                  <TableRow key={`${group.group}-${client.client_type}`}>
                    <TableCell>{index === 0 ? <Chip size="small" label={group.group} /> : null}</TableCell>
                    <TableCell>{client.client_type}</TableCell>
                    <TableCell align="right">{client.count}</TableCell>
                    <TableCell>{formatTime(client.first_seen)}</TableCell>
                    <TableCell>{formatTime(client.last_seen)}</TableCell>
                  </TableRow>
                )),
              )}
            </TableBody>
          </Table>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('common.close')}</Button>
      </DialogActions>
    </Dialog>
  );
}

/**
 * The tag-edit drawer (spec doc 2 §5): every channel of the tag gets the values given; an empty field
 * changes nothing; an empty new tag dissolves the tag; nothing changed says so.
 */
export function TagEditDrawer({
  tag,
  channels,
  onClose,
  onSaved,
}: {
  tag: string;
  channels: Channel[];
  onClose: () => void;
  onSaved: () => void;
}) {
  const translate = useTranslate();
  const notify = useNotify();
  const originalGroups = useMemo(() => [...new Set(channels.flatMap((c) => splitList(c.group)))], [channels]);
  const [originalModels, setOriginalModels] = useState<string[]>([]);
  const [groupChoices, setGroupChoices] = useState<string[]>([]);
  const [values, setValues] = useState<TagEditValues>({
    tag,
    new_tag: tag,
    models: [],
    groups: originalGroups,
    model_mapping: '',
    param_override: '',
    header_override: '',
  });
  const [saving, setSaving] = useState(false);
  const [bad, setBad] = useState<Record<string, boolean>>({});
  useEffect(() => {
    api
      .get<string>('/api/channel/tag/models', { query: { tag } })
      .then((models) => {
        const list = splitList(models);
        setOriginalModels(list);
        setValues((current) => ({ ...current, models: list }));
      })
      .catch(() => {});
    api
      .get<string[]>('/api/group/')
      .then((list) => setGroupChoices(list ?? []))
      .catch(() => {});
  }, [tag]);
  const set = <K extends keyof TagEditValues>(key: K, value: TagEditValues[K]) =>
    setValues((current) => ({ ...current, [key]: value }));

  const save = async () => {
    const { body, problem } = tagEditPayload(values, { models: originalModels, groups: originalGroups });
    if (problem || !body) {
      notify(problem ?? 'channel.validation.nothing_changed', {
        type: 'error',
        messageArgs: { field: translate('channel.form.param_override') },
      });
      return;
    }
    setSaving(true);
    try {
      const envelope = await api.request('PUT', '/api/channel/tag', { body });
      notify(envelope.message || 'channel.messages.tag_updated', { type: 'success' });
      onSaved();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setSaving(false);
    }
  };

  const jsonField = (field: 'model_mapping' | 'param_override' | 'header_override', label: string) => (
    <TextField
      label={translate(label)}
      value={values[field]}
      onChange={(event) => set(field, event.target.value)}
      onBlur={(event) => setBad((current) => ({ ...current, [field]: !isJsonOrEmpty(event.target.value) }))}
      error={bad[field]}
      helperText={bad[field] ? translate('channel.validation.invalid_json') : undefined}
      placeholder={translate('channel.tag_edit.empty_keeps')}
      multiline
      minRows={2}
      fullWidth
      slotProps={{ htmlInput: { 'data-testid': `tag-${field}` } }}
    />
  );

  return (
    <Drawer
      anchor="right"
      open
      onClose={onClose}
      slotProps={{ paper: { sx: { width: { xs: '100%', sm: 560 } } } }}
      data-testid="tag-edit-drawer"
    >
      <Box sx={{ display: 'flex', alignItems: 'center', px: 2, py: 1.5 }}>
        <Typography variant="h6" sx={{ flex: 1 }}>
          {translate('channel.tag_edit.title', { tag })}
        </Typography>
        <IconButton onClick={onClose} aria-label={translate('common.close')}>
          <Close />
        </IconButton>
      </Box>
      <Stack spacing={2} sx={{ px: 2, pb: 2, overflowY: 'auto', flex: 1 }}>
        <Alert severity="info">{translate('channel.tag_edit.notice')}</Alert>
        <TextField
          label={translate('channel.tag_edit.new_tag')}
          value={values.new_tag}
          onChange={(event) => set('new_tag', event.target.value)}
          helperText={translate('channel.tag_edit.new_tag_help')}
          fullWidth
          slotProps={{ htmlInput: { 'data-testid': 'tag-new_tag' } }}
        />
        <Autocomplete
          multiple
          freeSolo
          options={values.models}
          value={values.models}
          onChange={(_event, models) => set('models', models as string[])}
          renderInput={(params) => <TextField {...params} label={translate('channel.fields.models')} />}
        />
        <Autocomplete
          multiple
          freeSolo
          options={[...new Set([...groupChoices, ...values.groups])]}
          value={values.groups}
          onChange={(_event, groups) => set('groups', groups as string[])}
          renderInput={(params) => <TextField {...params} label={translate('channel.fields.group')} />}
        />
        {jsonField('model_mapping', 'channel.fields.model_mapping')}
        {jsonField('param_override', 'channel.form.param_override')}
        {jsonField('header_override', 'channel.form.header_override')}
      </Stack>
      <Box sx={{ display: 'flex', gap: 1, justifyContent: 'flex-end', p: 2, borderTop: 1, borderColor: 'divider' }}>
        <Button onClick={onClose}>{translate('common.cancel')}</Button>
        <Button variant="contained" onClick={save} disabled={saving} data-testid="tag-submit">
          {translate('channel.form.submit')}
        </Button>
      </Box>
    </Drawer>
  );
}

/** The batch-tag modal (spec doc 2 §5): a non-empty tag for the selected channels. */
export function BatchTagDialog({ ids, onClose, onSaved }: { ids: number[]; onClose: () => void; onSaved: () => void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const [tag, setTag] = useState('');
  const save = async () => {
    if (tag.trim() === '') {
      notify('channel.validation.tag_empty', { type: 'error' });
      return;
    }
    try {
      const envelope = await api.request('POST', '/api/channel/batch/tag', { body: { ids, tag: tag.trim() } });
      notify(envelope.message || 'channel.messages.tag_set', {
        type: 'success',
        messageArgs: { count: envelope.data },
      });
      onSaved();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  };
  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="xs" data-testid="batch-tag-dialog">
      <DialogTitle>{translate('channel.batch_tag.title')}</DialogTitle>
      <DialogContent>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
          {translate('channel.batch_tag.selected', { count: ids.length })}
        </Typography>
        <TextField
          autoFocus
          label={translate('channel.fields.tag')}
          value={tag}
          onChange={(event) => setTag(event.target.value)}
          fullWidth
          slotProps={{ htmlInput: { 'data-testid': 'batch-tag-input' } }}
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('common.cancel')}</Button>
        <Button variant="contained" onClick={save} data-testid="batch-tag-submit">
          {translate('common.confirm')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

/** Column settings (spec doc 2 §2): which columns show, remembered in channels-table-columns. */
export function ColumnSettingsDialog({
  columns,
  visible,
  onChange,
  onClose,
}: {
  columns: ReadonlyArray<{ id: string; label: string }>;
  visible: Record<string, boolean>;
  onChange: (visible: Record<string, boolean>) => void;
  onClose: () => void;
}) {
  const translate = useTranslate();
  const [draft, setDraft] = useState(visible);
  const all = columns.every((column) => draft[column.id] !== false);
  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="xs" data-testid="column-settings">
      <DialogTitle>{translate('channel.columns.title')}</DialogTitle>
      <DialogContent>
        <FormControlLabel
          control={
            <Checkbox
              checked={all}
              onChange={(event) =>
                setDraft(Object.fromEntries(columns.map((column) => [column.id, event.target.checked])))
              }
            />
          }
          label={translate('channel.columns.all')}
        />
        <Box sx={{ display: 'grid', gridTemplateColumns: '1fr 1fr' }}>
          {columns.map((column) => (
            <FormControlLabel
              key={column.id}
              control={
                <Checkbox
                  checked={draft[column.id] !== false}
                  onChange={(event) => setDraft({ ...draft, [column.id]: event.target.checked })}
                  data-column={column.id}
                />
              }
              label={translate(column.label)}
            />
          ))}
        </Box>
      </DialogContent>
      <DialogActions>
        <Button onClick={() => setDraft(Object.fromEntries(columns.map((column) => [column.id, true])))}>
          {translate('channel.columns.reset')}
        </Button>
        <Button onClick={onClose}>{translate('common.cancel')}</Button>
        <Button
          variant="contained"
          data-testid="column-settings-save"
          onClick={() => {
            onChange(draft);
            onClose();
          }}
        >
          {translate('common.confirm')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
