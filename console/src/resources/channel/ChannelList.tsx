import Add from '@mui/icons-material/Add';
import ArrowDropDown from '@mui/icons-material/ArrowDropDown';
import Block from '@mui/icons-material/Block';
import Build from '@mui/icons-material/Build';
import CheckCircle from '@mui/icons-material/CheckCircle';
import CloudDownload from '@mui/icons-material/CloudDownload';
import ContentCopy from '@mui/icons-material/ContentCopy';
import Delete from '@mui/icons-material/Delete';
import DeleteSweep from '@mui/icons-material/DeleteSweep';
import Edit from '@mui/icons-material/Edit';
import KeyboardArrowDown from '@mui/icons-material/KeyboardArrowDown';
import KeyboardArrowRight from '@mui/icons-material/KeyboardArrowRight';
import LocalOffer from '@mui/icons-material/LocalOffer';
import MoreVert from '@mui/icons-material/MoreVert';
import NetworkCheck from '@mui/icons-material/NetworkCheck';
import Radar from '@mui/icons-material/Radar';
import Refresh from '@mui/icons-material/Refresh';
import Search from '@mui/icons-material/Search';
import ViewColumn from '@mui/icons-material/ViewColumn';
import {
  Box,
  Button,
  Checkbox,
  Chip,
  FormControlLabel,
  IconButton,
  LinearProgress,
  ListItemIcon,
  ListItemText,
  Menu,
  MenuItem,
  Paper,
  Stack,
  Switch,
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
import { type ReactNode, useCallback, useEffect, useMemo, useState } from 'react';
import { Title, useLocaleState, useNotify, useTranslate } from 'react-admin';
import { useNavigate, useParams } from 'react-router';
import { formatQuota } from '../../format/quota.ts';
import { withStepUp } from '../../layout/StepUpDialog.tsx';
import { api, errorMessage } from '../../providers/http.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { AdminOnly, formatTime, PAGE_SX, readLocal, useConfirm, writeLocal } from '../admin-shared.tsx';
import { ChannelDrawer } from './ChannelDrawer.tsx';
import { type ChannelTypeInfo, channelTypeName, useChannelTypes } from './channel-types.ts';
import {
  CHANNEL_STATUS,
  COLUMNS_KEY,
  DEFAULT_PAGE_SIZE,
  ID_SORT_KEY,
  PAGE_SIZE_KEY,
  PAGE_SIZES,
  PRIORITY_MIN,
  TAG_MODE_KEY,
  WEIGHT_MIN,
} from './constants.ts';
import { BatchTagDialog, ColumnSettingsDialog, ModelTestDialog, TagEditDrawer, UpstreamDialog } from './dialogs.tsx';
import { type Channel, checkTagPriority, checkTagWeight, splitList } from './form.ts';
import { OllamaDialog } from './OllamaDialog.tsx';
import { ManagedBadge, ResponseTime, StatusChip } from './parts.tsx';
import { buildRows, type TagRow } from './rows.ts';

/** Columns the column settings may hide (spec doc 2 §2); selection and actions always show. */
const COLUMNS = [
  { id: 'id', label: 'channel.fields.id' },
  { id: 'name', label: 'channel.fields.name' },
  { id: 'group', label: 'channel.fields.group' },
  { id: 'type', label: 'channel.fields.type' },
  { id: 'status', label: 'channel.fields.status' },
  { id: 'response_time', label: 'channel.fields.response_time' },
  { id: 'balance', label: 'channel.fields.balance' },
  { id: 'priority', label: 'channel.fields.priority' },
  { id: 'weight', label: 'channel.fields.weight' },
  { id: 'tag', label: 'channel.fields.tag' },
] as const;
type ColumnId = (typeof COLUMNS)[number]['id'];

/** The actions column stays in view when the table scrolls sideways. */
const ACTIONS_SX = { position: 'sticky', right: 0, bgcolor: 'background.paper', zIndex: 1 } as const;

interface Filters {
  keyword: string;
  group: string;
  model: string;
}
const NO_FILTERS: Filters = { keyword: '', group: '', model: '' };

interface PageAnswer {
  items: Channel[];
  total: number;
}

/** List state kept while the drawer routes (/channel/add, /channel/edit/:id) replace the page. */
let remembered = { filters: NO_FILTERS, page: 0 };

export function ChannelList() {
  return (
    <AdminOnly>
      <ChannelsPage />
    </AdminOnly>
  );
}

/** /channel/add: the list with the create drawer open. */
export function ChannelCreate() {
  return (
    <AdminOnly>
      <ChannelsPage drawer="new" />
    </AdminOnly>
  );
}

/** /channel/edit/:id: the list with the edit drawer open. */
export function ChannelEdit() {
  const { id } = useParams();
  const target = Number(id);
  return (
    <AdminOnly>
      <ChannelsPage drawer={Number.isSafeInteger(target) && target > 0 ? target : undefined} />
    </AdminOnly>
  );
}

/**
 * The channels page (spec doc 2 §2 "Channels page"): search by keyword, group and model; a table with
 * status, response-time colours and balances; tag mode; id sort; batch delete and tag; column settings;
 * tests; upstream detection; the create/edit drawer at /channel/add and /channel/edit/:id.
 */
function ChannelsPage({ drawer }: { drawer?: 'new' | number }) {
  const translate = useTranslate();
  const notify = useNotify();
  const navigate = useNavigate();
  const { status } = useStatus();
  const types = useChannelTypes();
  const { ask, dialog: confirmDialog } = useConfirm();

  const [filters, setFilters] = useState<Filters>(remembered.filters);
  const [draft, setDraft] = useState<Filters>(remembered.filters);
  const [page, setPage] = useState(remembered.page);
  const [pageSize, setPageSize] = useState<number>(() => readLocal(PAGE_SIZE_KEY, DEFAULT_PAGE_SIZE));
  const [idSort, setIdSort] = useState<boolean>(() => readLocal(ID_SORT_KEY, false));
  const [tagMode, setTagMode] = useState<boolean>(() => readLocal(TAG_MODE_KEY, false));
  const [visible, setVisible] = useState<Record<string, boolean>>(() => readLocal(COLUMNS_KEY, {}));
  const [answer, setAnswer] = useState<PageAnswer>({ items: [], total: 0 });
  const [loading, setLoading] = useState(true);
  const [groups, setGroups] = useState<string[]>([]);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const [testing, setTesting] = useState<Channel>();
  const [upstream, setUpstream] = useState<Channel>();
  const [ollama, setOllama] = useState<Channel>();
  const [tagEdit, setTagEdit] = useState<TagRow>();
  const [batchTag, setBatchTag] = useState(false);
  const [columnSettings, setColumnSettings] = useState(false);

  useEffect(() => {
    remembered = { filters, page };
  }, [filters, page]);

  const load = useCallback(async () => {
    setLoading(true);
    const searching = Object.values(filters).some((value) => value.trim() !== '');
    try {
      const data = await api.get<PageAnswer>(searching ? '/api/channel/search' : '/api/channel/', {
        query: {
          p: page + 1,
          page_size: pageSize,
          id_sort: idSort,
          tag_mode: tagMode,
          ...(searching
            ? { keyword: filters.keyword.trim(), group: filters.group.trim(), model: filters.model.trim() }
            : {}),
        },
      });
      setAnswer({ items: data?.items ?? [], total: data?.total ?? 0 });
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setLoading(false);
    }
  }, [filters, page, pageSize, idSort, tagMode, notify]);

  useEffect(() => {
    void load();
  }, [load]);

  useEffect(() => {
    api
      .get<string[]>('/api/group/')
      .then((list) => setGroups(list ?? []))
      .catch(() => {});
  }, []);

  const rows = useMemo(() => buildRows(answer.items, tagMode), [answer.items, tagMode]);
  const show = (column: ColumnId) => visible[column] !== false;
  const shownColumns = COLUMNS.filter((column) => show(column.id));

  /** Runs a call and shows the server's message (or a fallback key); reloads after success. */
  const act = async (call: () => Promise<{ message: string; data?: unknown }>, fallback: string, failure?: string) => {
    try {
      // Deleting channels asks a two-factor administrator for a code first.
      const envelope = await withStepUp(call);
      notify(envelope.message || fallback, { type: 'success', messageArgs: { count: envelope.data } });
      await load();
      return true;
    } catch (error) {
      notify(failure ? `${translate(failure)}: ${errorMessage(error)}` : errorMessage(error), { type: 'error' });
      return false;
    }
  };

  const setStatus = (channel: Channel, next: number) =>
    act(
      () => api.request('PUT', '/api/channel/', { body: { id: channel.id, status: next } }),
      'channel.messages.updated',
    );

  const quickTest = async (channel: Channel) => {
    try {
      const envelope = (await api.request('GET', `/api/channel/test/${channel.id}`)) as { time?: number };
      notify('channel.messages.test_success', {
        type: 'success',
        messageArgs: {
          name: channel.name,
          model: channel.test_model || splitList(channel.models)[0] || '',
          time: Number(envelope.time ?? 0).toFixed(2),
        },
      });
      await load();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
      await load();
    }
  };

  const refreshBalance = async (channel: Channel) => {
    try {
      const envelope = (await api.request<{ balance: number }>('GET', `/api/channel/update_balance/${channel.id}`)) as {
        balance?: number;
        data?: { balance: number };
      };
      const balance = Number(envelope.balance ?? envelope.data?.balance ?? 0);
      setAnswer((current) => ({
        ...current,
        items: current.items.map((item) => (item.id === channel.id ? { ...item, balance } : item)),
      }));
      notify('channel.messages.balance_updated', { type: 'success', messageArgs: { name: channel.name } });
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  };

  const commitChannelNumber = async (channel: Channel, field: 'priority' | 'weight', text: string) => {
    const value = Number.parseInt(text, 10);
    const minimum = field === 'priority' ? PRIORITY_MIN : WEIGHT_MIN;
    if (!Number.isFinite(value) || value < minimum) {
      notify(field === 'priority' ? 'channel.validation.priority_integer' : 'channel.validation.weight_non_negative', {
        type: 'error',
      });
      return;
    }
    if (value === channel[field]) return;
    await act(
      () => api.request('PUT', '/api/channel/', { body: { id: channel.id, [field]: value } }),
      'channel.messages.updated',
    );
  };

  const commitTagNumber = async (row: TagRow, field: 'priority' | 'weight', text: string) => {
    const value = field === 'priority' ? checkTagPriority(text) : checkTagWeight(text);
    if (value === undefined) {
      notify(field === 'priority' ? 'channel.validation.priority_integer' : 'channel.validation.weight_non_negative', {
        type: 'error',
      });
      return;
    }
    if (value === row[field]) return;
    await act(
      () => api.request('PUT', '/api/channel/tag', { body: { tag: row.tag, [field]: value } }),
      'channel.messages.tag_updated',
    );
  };

  const batchDelete = () => {
    if (selected.size === 0) {
      notify('channel.validation.select_to_delete', { type: 'error' });
      return;
    }
    ask({
      title: 'channel.confirm.batch_delete_title',
      content: 'channel.confirm.batch_delete',
      values: { count: selected.size },
      danger: true,
      onConfirm: async () => {
        if (
          await act(
            () => api.request('POST', '/api/channel/batch', { body: { ids: [...selected] } }),
            'channel.messages.deleted',
          )
        ) {
          setSelected(new Set());
        }
      },
    });
  };

  const openBatchTag = () => {
    if (selected.size === 0) {
      notify('channel.validation.select_to_tag', { type: 'error' });
      return;
    }
    setBatchTag(true);
  };

  const toggleSelected = (ids: number[], checked: boolean) =>
    setSelected((current) => {
      const next = new Set(current);
      for (const id of ids) {
        if (checked) next.add(id);
        else next.delete(id);
      }
      return next;
    });

  const allIds = answer.items.map((channel) => channel.id);
  const allSelected = allIds.length > 0 && allIds.every((id) => selected.has(id));

  // Leaving /channel/add or /channel/edit/:id mounts the list page again, which reloads it.
  const closeDrawer = useCallback(() => navigate('/channel'), [navigate]);

  const search = () => {
    setPage(0);
    setFilters(draft);
  };

  const channelCells = (channel: Channel, child = false): ReactNode => {
    // Until the registry has loaded, a type's abilities are assumed; the gateway refuses what it cannot do.
    const type = types.find((t) => t.id === channel.type);
    const balanceReadable = type?.balance !== false;
    return (
      <>
        {show('id') && <TableCell>{channel.id}</TableCell>}
        {show('name') && (
          <TableCell sx={{ pl: child ? 4 : undefined }}>
            <Stack direction="row" spacing={1} sx={{ alignItems: 'center' }}>
              <Tooltip title={channel.remark || ''}>
                <Typography variant="body2" data-testid="channel-name-cell">
                  {channel.name}
                </Typography>
              </Tooltip>
              {channel.channel_info?.is_multi_key && (
                <Chip
                  size="small"
                  variant="outlined"
                  label={translate('channel.list.multi_key', { count: channel.channel_info.multi_key_size ?? 0 })}
                />
              )}
              <ManagedBadge channel={channel} />
            </Stack>
          </TableCell>
        )}
        {show('group') && (
          <TableCell>
            <Stack direction="row" spacing={0.5} sx={{ flexWrap: 'wrap', rowGap: 0.5 }}>
              {splitList(channel.group).map((group) => (
                <Chip key={group} size="small" label={group} />
              ))}
            </Stack>
          </TableCell>
        )}
        {show('type') && (
          <TableCell>
            <TypeChip types={types} id={channel.type} />
          </TableCell>
        )}
        {show('status') && (
          <TableCell>
            <StatusChip channel={channel} />
          </TableCell>
        )}
        {show('response_time') && (
          <TableCell>
            <ResponseTime ms={channel.response_time} testTime={channel.test_time} />
          </TableCell>
        )}
        {show('balance') && (
          <TableCell>
            <Stack direction="row" spacing={0.5}>
              <Tooltip title={translate('channel.list.used_quota')}>
                <Chip size="small" variant="outlined" label={formatQuota(channel.used_quota, status)} />
              </Tooltip>
              <Tooltip
                title={
                  balanceReadable
                    ? translate('channel.list.balance_refresh', { time: formatTime(channel.balance_updated_time) })
                    : translate('channel.list.balance_unsupported')
                }
              >
                <Chip
                  size="small"
                  color="info"
                  variant="outlined"
                  label={`$${Number(channel.balance || 0).toFixed(2)}`}
                  onClick={balanceReadable ? () => refreshBalance(channel) : undefined}
                  data-testid="balance"
                />
              </Tooltip>
            </Stack>
          </TableCell>
        )}
        {show('priority') && (
          <TableCell>
            <InlineNumber
              value={channel.priority}
              min={PRIORITY_MIN}
              onCommit={(text) => commitChannelNumber(channel, 'priority', text)}
              testId="priority-input"
            />
          </TableCell>
        )}
        {show('weight') && (
          <TableCell>
            <InlineNumber
              value={channel.weight}
              min={WEIGHT_MIN}
              onCommit={(text) => commitChannelNumber(channel, 'weight', text)}
              testId="weight-input"
            />
          </TableCell>
        )}
        {show('tag') && <TableCell>{channel.tag ? <Chip size="small" label={channel.tag} /> : null}</TableCell>}
        <TableCell align="right" sx={ACTIONS_SX}>
          <ChannelActions
            channel={channel}
            testable={type?.testable !== false}
            onTest={() => quickTest(channel)}
            onPickModel={() => setTesting(channel)}
            onToggle={() =>
              setStatus(
                channel,
                channel.status === CHANNEL_STATUS.enabled ? CHANNEL_STATUS.disabled : CHANNEL_STATUS.enabled,
              )
            }
            onEdit={() => navigate(`/channel/edit/${channel.id}`)}
            onCopy={() =>
              ask({
                title: 'channel.confirm.copy_title',
                content: 'channel.confirm.copy',
                values: { name: channel.name },
                onConfirm: () =>
                  act(
                    () => api.request('POST', `/api/channel/copy/${channel.id}`),
                    'channel.messages.copied',
                    'channel.messages.copy_failed',
                  ),
              })
            }
            onUpstream={() => setUpstream(channel)}
            onOllama={type?.protocol === 'ollama' ? () => setOllama(channel) : undefined}
            onDelete={() =>
              ask({
                title: 'channel.confirm.delete_title',
                content: 'channel.confirm.delete',
                values: { name: channel.name },
                danger: true,
                onConfirm: () =>
                  act(() => api.request('DELETE', `/api/channel/${channel.id}/`), 'channel.messages.deleted'),
              })
            }
          />
        </TableCell>
      </>
    );
  };

  const tagCells = (row: TagRow): ReactNode => {
    const open = expanded.has(row.tag);
    return (
      <>
        {show('id') && (
          <TableCell>
            <IconButton
              size="small"
              onClick={() =>
                setExpanded((current) => {
                  const next = new Set(current);
                  if (open) next.delete(row.tag);
                  else next.add(row.tag);
                  return next;
                })
              }
              aria-label={translate('channel.list.expand')}
              data-testid="tag-expand"
            >
              {open ? <KeyboardArrowDown /> : <KeyboardArrowRight />}
            </IconButton>
          </TableCell>
        )}
        {show('name') && (
          <TableCell>
            <Stack direction="row" spacing={1} sx={{ alignItems: 'center' }}>
              <LocalOffer fontSize="small" color="primary" />
              <Typography variant="body2" sx={{ fontWeight: 600 }} data-testid="tag-row-name">
                {row.tag}
              </Typography>
              <Chip size="small" label={translate('channel.list.tag_children', { count: row.children.length })} />
            </Stack>
          </TableCell>
        )}
        {show('group') && (
          <TableCell>
            <Stack direction="row" spacing={0.5} sx={{ flexWrap: 'wrap', rowGap: 0.5 }}>
              {row.groups.map((group) => (
                <Chip key={group} size="small" label={group} />
              ))}
            </Stack>
          </TableCell>
        )}
        {show('type') && (
          <TableCell>
            <Stack direction="row" spacing={0.5}>
              {row.types.map((type) => (
                <TypeChip key={type} types={types} id={type} />
              ))}
            </Stack>
          </TableCell>
        )}
        {show('status') && (
          <TableCell>
            <Chip
              size="small"
              color={row.enabled === row.children.length ? 'success' : row.enabled === 0 ? 'default' : 'warning'}
              label={translate('channel.list.tag_enabled', { enabled: row.enabled, total: row.children.length })}
            />
          </TableCell>
        )}
        {show('response_time') && (
          <TableCell>
            <ResponseTime ms={row.responseTime} />
          </TableCell>
        )}
        {show('balance') && (
          <TableCell>
            <Chip size="small" variant="outlined" label={formatQuota(row.usedQuota, status)} />
          </TableCell>
        )}
        {show('priority') && (
          <TableCell>
            <InlineNumber
              value={row.priority}
              onCommit={(text) => commitTagNumber(row, 'priority', text)}
              testId="tag-priority-input"
            />
          </TableCell>
        )}
        {show('weight') && (
          <TableCell>
            <InlineNumber
              value={row.weight}
              min={0}
              onCommit={(text) => commitTagNumber(row, 'weight', text)}
              testId="tag-weight-input"
            />
          </TableCell>
        )}
        {show('tag') && <TableCell />}
        <TableCell align="right" sx={ACTIONS_SX}>
          <Stack direction="row" spacing={0.5} sx={{ justifyContent: 'flex-end' }}>
            <Button
              size="small"
              onClick={() =>
                act(
                  () => api.request('POST', '/api/channel/tag/enabled', { body: { tag: row.tag } }),
                  'channel.messages.done',
                )
              }
            >
              {translate('channel.actions.enable_all')}
            </Button>
            <Button
              size="small"
              color="warning"
              onClick={() =>
                act(
                  () => api.request('POST', '/api/channel/tag/disabled', { body: { tag: row.tag } }),
                  'channel.messages.done',
                )
              }
            >
              {translate('channel.actions.disable_all')}
            </Button>
            <Button size="small" startIcon={<Edit />} onClick={() => setTagEdit(row)} data-testid="tag-edit">
              {translate('channel.actions.edit_tag')}
            </Button>
          </Stack>
        </TableCell>
      </>
    );
  };

  const disabledSx = (channel: Channel) =>
    channel.status !== CHANNEL_STATUS.enabled ? { bgcolor: 'action.disabledBackground' } : undefined;

  return (
    <Box data-testid="channel-page" sx={PAGE_SX}>
      <Title title="channel.title" />
      <Paper sx={{ p: 2, mb: 2 }}>
        <Stack direction={{ xs: 'column', md: 'row' }} spacing={1.5} sx={{ mb: 1.5 }}>
          <TextField
            size="small"
            label={translate('channel.search.keyword')}
            value={draft.keyword}
            onChange={(event) => setDraft({ ...draft, keyword: event.target.value })}
            onKeyDown={(event) => event.key === 'Enter' && search()}
            sx={{ width: { xs: '100%', md: 280 } }}
            slotProps={{ htmlInput: { 'data-testid': 'channel-search-keyword' } }}
          />
          <TextField
            select
            size="small"
            label={translate('channel.search.group')}
            value={draft.group}
            onChange={(event) => {
              const next = { ...draft, group: event.target.value };
              setDraft(next);
              setPage(0);
              setFilters(next);
            }}
            sx={{ width: { xs: '100%', md: 180 } }}
          >
            <MenuItem value="">{translate('channel.search.all_groups')}</MenuItem>
            {groups.map((group) => (
              <MenuItem key={group} value={group}>
                {group}
              </MenuItem>
            ))}
          </TextField>
          <TextField
            size="small"
            label={translate('channel.search.model')}
            value={draft.model}
            onChange={(event) => setDraft({ ...draft, model: event.target.value })}
            onKeyDown={(event) => event.key === 'Enter' && search()}
            sx={{ width: { xs: '100%', md: 200 } }}
            slotProps={{ htmlInput: { 'data-testid': 'channel-search-model' } }}
          />
          <Button variant="contained" startIcon={<Search />} onClick={search} data-testid="channel-search">
            {translate('channel.search.submit')}
          </Button>
          <Button
            onClick={() => {
              setDraft(NO_FILTERS);
              setFilters(NO_FILTERS);
              setPage(0);
            }}
          >
            {translate('channel.search.reset')}
          </Button>
        </Stack>
        <Stack direction="row" spacing={1} sx={{ flexWrap: 'wrap', rowGap: 1, alignItems: 'center' }}>
          <Button
            variant="contained"
            startIcon={<Add />}
            onClick={() => navigate('/channel/add')}
            data-testid="channel-add"
          >
            {translate('channel.actions.add')}
          </Button>
          <Button
            startIcon={<NetworkCheck />}
            onClick={() =>
              ask({
                title: 'channel.confirm.test_all_title',
                content: 'channel.confirm.test_all',
                onConfirm: () => act(() => api.request('GET', '/api/channel/test'), 'channel.messages.done'),
              })
            }
            data-testid="channel-test-all"
          >
            {translate('channel.actions.test_all')}
          </Button>
          <Button
            startIcon={<Refresh />}
            onClick={() =>
              ask({
                title: 'channel.confirm.balance_all_title',
                content: 'channel.confirm.balance_all',
                onConfirm: () => act(() => api.request('GET', '/api/channel/update_balance'), 'channel.messages.done'),
              })
            }
          >
            {translate('channel.actions.update_all_balances')}
          </Button>
          <Button
            color="error"
            startIcon={<DeleteSweep />}
            onClick={() =>
              ask({
                title: 'channel.confirm.delete_disabled_title',
                content: 'channel.confirm.delete_disabled',
                danger: true,
                onConfirm: () => act(() => api.request('DELETE', '/api/channel/disabled'), 'channel.messages.deleted'),
              })
            }
            data-testid="channel-delete-disabled"
          >
            {translate('channel.actions.delete_disabled')}
          </Button>
          <Button
            startIcon={<Build />}
            onClick={() =>
              ask({
                title: 'channel.confirm.fix_title',
                content: 'channel.confirm.fix',
                onConfirm: () =>
                  act(
                    // Answers {success, fails}: the count of channels rebuilt is `success`.
                    () =>
                      api
                        .request<{ success: number }>('POST', '/api/channel/fix')
                        .then((envelope) => ({ ...envelope, data: envelope.data?.success })),
                    'channel.messages.fixed',
                  ),
              })
            }
            data-testid="channel-fix"
          >
            {translate('channel.actions.fix_abilities')}
          </Button>
          <Button color="error" startIcon={<Delete />} onClick={batchDelete} data-testid="channel-batch-delete">
            {translate('channel.actions.batch_delete')}
          </Button>
          <Button startIcon={<LocalOffer />} onClick={openBatchTag} data-testid="channel-batch-tag">
            {translate('channel.actions.batch_tag')}
          </Button>
          <Button startIcon={<ViewColumn />} onClick={() => setColumnSettings(true)} data-testid="channel-columns">
            {translate('channel.actions.columns')}
          </Button>
          <Box sx={{ flex: 1 }} />
          <FormControlLabel
            control={
              <Switch
                checked={idSort}
                onChange={(event) => {
                  setIdSort(event.target.checked);
                  writeLocal(ID_SORT_KEY, event.target.checked);
                }}
                data-testid="channel-id-sort"
              />
            }
            label={translate('channel.list.id_sort')}
          />
          <FormControlLabel
            control={
              <Switch
                checked={tagMode}
                onChange={(event) => {
                  setTagMode(event.target.checked);
                  writeLocal(TAG_MODE_KEY, event.target.checked);
                  setPage(0);
                }}
                data-testid="channel-tag-mode"
              />
            }
            label={translate('channel.list.tag_mode')}
          />
        </Stack>
      </Paper>
      <Paper>
        {loading && <LinearProgress />}
        <TableContainer>
          <Table size="small" data-testid="channel-table">
            <TableHead>
              <TableRow>
                <TableCell padding="checkbox">
                  <Checkbox
                    checked={allSelected}
                    indeterminate={!allSelected && allIds.some((id) => selected.has(id))}
                    onChange={(event) => toggleSelected(allIds, event.target.checked)}
                    slotProps={{ input: { 'aria-label': translate('channel.list.select_all') } }}
                  />
                </TableCell>
                {shownColumns.map((column) => (
                  <TableCell key={column.id}>{translate(column.label)}</TableCell>
                ))}
                <TableCell align="right" sx={ACTIONS_SX}>
                  {translate('channel.fields.actions')}
                </TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {rows.map((row) =>
                row.kind === 'channel' ? (
                  <TableRow
                    key={`c${row.channel.id}`}
                    data-channel-id={row.channel.id}
                    sx={disabledSx(row.channel)}
                    hover
                  >
                    <TableCell padding="checkbox">
                      <Checkbox
                        checked={selected.has(row.channel.id)}
                        onChange={(event) => toggleSelected([row.channel.id], event.target.checked)}
                      />
                    </TableCell>
                    {channelCells(row.channel)}
                  </TableRow>
                ) : (
                  [
                    <TableRow key={`t${row.tag}`} data-tag={row.tag} sx={{ bgcolor: 'action.hover' }}>
                      <TableCell padding="checkbox">
                        <Checkbox
                          checked={row.children.every((c) => selected.has(c.id))}
                          onChange={(event) =>
                            toggleSelected(
                              row.children.map((c) => c.id),
                              event.target.checked,
                            )
                          }
                        />
                      </TableCell>
                      {tagCells(row)}
                    </TableRow>,
                    ...(expanded.has(row.tag)
                      ? row.children.map((channel) => (
                          <TableRow key={`c${channel.id}`} data-channel-id={channel.id} sx={disabledSx(channel)} hover>
                            <TableCell padding="checkbox">
                              <Checkbox
                                checked={selected.has(channel.id)}
                                onChange={(event) => toggleSelected([channel.id], event.target.checked)}
                              />
                            </TableCell>
                            {channelCells(channel, true)}
                          </TableRow>
                        ))
                      : []),
                  ]
                ),
              )}
              {!loading && rows.length === 0 && (
                <TableRow>
                  <TableCell colSpan={shownColumns.length + 2}>
                    <Typography color="text.secondary" sx={{ p: 2, textAlign: 'center' }}>
                      {translate('channel.list.empty')}
                    </Typography>
                  </TableCell>
                </TableRow>
              )}
            </TableBody>
          </Table>
        </TableContainer>
        <TablePagination
          component="div"
          count={answer.total}
          page={page}
          onPageChange={(_event, next) => setPage(next)}
          rowsPerPage={pageSize}
          rowsPerPageOptions={[...PAGE_SIZES]}
          onRowsPerPageChange={(event) => {
            const size = Number(event.target.value);
            setPageSize(size);
            writeLocal(PAGE_SIZE_KEY, size);
            setPage(0);
          }}
          labelRowsPerPage={translate('channel.list.page_size')}
          labelDisplayedRows={({ from, to, count }) => translate('channel.list.range', { from, to, count })}
        />
      </Paper>

      {drawer !== undefined && (
        <ChannelDrawer key={String(drawer)} target={drawer} onClose={closeDrawer} onSaved={closeDrawer} />
      )}
      {testing && <ModelTestDialog channel={testing} onClose={() => setTesting(undefined)} onTested={load} />}
      {upstream && <UpstreamDialog channel={upstream} onClose={() => setUpstream(undefined)} />}
      {ollama && <OllamaDialog channel={ollama} onClose={() => setOllama(undefined)} />}
      {tagEdit && (
        <TagEditDrawer
          tag={tagEdit.tag}
          channels={tagEdit.children}
          onClose={() => setTagEdit(undefined)}
          onSaved={() => {
            setTagEdit(undefined);
            void load();
          }}
        />
      )}
      {batchTag && (
        <BatchTagDialog
          ids={[...selected]}
          onClose={() => setBatchTag(false)}
          onSaved={() => {
            setBatchTag(false);
            setSelected(new Set());
            void load();
          }}
        />
      )}
      {columnSettings && (
        <ColumnSettingsDialog
          columns={COLUMNS}
          visible={visible}
          onChange={(next) => {
            setVisible(next);
            writeLocal(COLUMNS_KEY, next);
          }}
          onClose={() => setColumnSettings(false)}
        />
      )}
      {confirmDialog}
    </Box>
  );
}

/** A channel's type; a stored row of a type Tollgate no longer offers is marked, with the reason. */
function TypeChip({ types, id }: { types: readonly ChannelTypeInfo[]; id: number }) {
  const translate = useTranslate();
  const [locale] = useLocaleState();
  const type = types.find((t) => t.id === id);
  if (!type || type.offered) return <Chip size="small" variant="outlined" label={channelTypeName(types, id)} />;
  return (
    <Tooltip title={type.reason[locale === 'en' ? 'en' : 'zh']}>
      <Chip
        size="small"
        color="error"
        variant="outlined"
        label={translate('channel.list.type_unsupported', { name: type.name })}
        data-testid={`channel-type-unsupported-${id}`}
      />
    </Tooltip>
  );
}

/** A small number field that saves when it loses focus or on Enter (table priority and weight). */
function InlineNumber({
  value,
  min,
  onCommit,
  testId,
}: {
  value: number;
  min?: number;
  onCommit: (text: string) => unknown;
  testId: string;
}) {
  const [text, setText] = useState(String(value));
  useEffect(() => setText(String(value)), [value]);
  const commit = () => {
    if (text !== String(value)) void onCommit(text);
  };
  return (
    <TextField
      size="small"
      type="number"
      value={text}
      onChange={(event) => setText(event.target.value)}
      onBlur={commit}
      onKeyDown={(event) => {
        if (event.key === 'Enter') (event.target as HTMLInputElement).blur();
      }}
      sx={{ width: 76 }}
      slotProps={{ htmlInput: { min, 'data-testid': testId } }}
    />
  );
}

function ChannelActions(props: {
  channel: Channel;
  /** False for types the tester cannot reach (task types, types Tollgate does not speak). */
  testable: boolean;
  onTest: () => void;
  onPickModel: () => void;
  onToggle: () => void;
  onEdit: () => void;
  onCopy: () => void;
  onUpstream: () => void;
  /** Ollama channels only: manage the models on the server. */
  onOllama?: (() => void) | undefined;
  onDelete: () => void;
}) {
  const translate = useTranslate();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const { channel } = props;
  const enabled = channel.status === CHANNEL_STATUS.enabled;
  const item = (label: string, icon: ReactNode, run: () => void, testId: string, color?: string) => (
    <MenuItem
      data-testid={testId}
      onClick={() => {
        setAnchor(null);
        run();
      }}
      sx={color ? { color } : undefined}
    >
      <ListItemIcon sx={color ? { color } : undefined}>{icon}</ListItemIcon>
      <ListItemText>{translate(label)}</ListItemText>
    </MenuItem>
  );
  return (
    <Stack direction="row" spacing={0.5} sx={{ justifyContent: 'flex-end', alignItems: 'center' }}>
      <Box sx={{ display: 'inline-flex' }}>
        <Button
          size="small"
          variant="outlined"
          onClick={props.onTest}
          disabled={!props.testable}
          data-testid="channel-test"
          sx={{ borderRadius: '4px 0 0 4px' }}
        >
          {translate('channel.actions.test')}
        </Button>
        <Button
          size="small"
          variant="outlined"
          onClick={props.onPickModel}
          disabled={!props.testable}
          data-testid="channel-test-pick"
          aria-label={translate('channel.actions.pick_model')}
          sx={{ minWidth: 0, px: 0.5, borderRadius: '0 4px 4px 0', ml: '-1px' }}
        >
          <ArrowDropDown fontSize="small" />
        </Button>
      </Box>
      <Tooltip title={translate(enabled ? 'channel.actions.disable' : 'channel.actions.enable')}>
        <IconButton
          size="small"
          color={enabled ? 'warning' : 'success'}
          onClick={props.onToggle}
          data-testid="channel-toggle"
          aria-label={translate(enabled ? 'channel.actions.disable' : 'channel.actions.enable')}
        >
          {enabled ? <Block fontSize="small" /> : <CheckCircle fontSize="small" />}
        </IconButton>
      </Tooltip>
      <Tooltip title={translate('channel.actions.edit')}>
        <IconButton
          size="small"
          color="primary"
          onClick={props.onEdit}
          data-testid="channel-edit"
          aria-label={translate('channel.actions.edit')}
        >
          <Edit fontSize="small" />
        </IconButton>
      </Tooltip>
      <IconButton size="small" onClick={(event) => setAnchor(event.currentTarget)} data-testid="channel-more">
        <MoreVert fontSize="small" />
      </IconButton>
      <Menu anchorEl={anchor} open={anchor !== null} onClose={() => setAnchor(null)}>
        {item('channel.actions.copy', <ContentCopy fontSize="small" />, props.onCopy, 'channel-copy')}
        {item('channel.actions.upstream', <Radar fontSize="small" />, props.onUpstream, 'channel-upstream')}
        {props.onOllama &&
          item('channel.actions.ollama', <CloudDownload fontSize="small" />, props.onOllama, 'channel-ollama')}
        {item('channel.actions.delete', <Delete fontSize="small" />, props.onDelete, 'channel-delete', 'error.main')}
      </Menu>
    </Stack>
  );
}
