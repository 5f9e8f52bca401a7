import ViewColumn from '@mui/icons-material/ViewColumn';
import {
  Box,
  Button,
  Checkbox,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  FormControlLabel,
  Link,
  MenuItem,
  Stack,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import { type FormEvent, type ReactElement, useEffect, useState } from 'react';
import { Datagrid, FunctionField, List, Pagination, useListContext, useRecordContext, useTranslate } from 'react-admin';
import { formatCompact } from '../../format/number.ts';
import { formatQuota } from '../../format/quota.ts';
import { formatSeconds, fromLocalInput, toLocalInput } from '../../format/time.ts';
import { api, errorMessage } from '../../providers/http.ts';
import { ROLE, useSessionUser } from '../../providers/session.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { LogDetail } from './LogDetail.tsx';
import {
  defaultLogFilters,
  frtColor,
  LOG_COLUMNS,
  LOG_TYPE_COLOR,
  LOG_TYPES,
  type LogColumn,
  type LogFilterValues,
  type LogRecord,
  loadColumns,
  parseOther,
  saveColumns,
  statQuery,
  timeColor,
} from './log.ts';

/** Page sizes (spec doc 3 §9). */
const PAGE_SIZES = [10, 20, 50, 100];

/**
 * The usage log (spec doc 3 §2 "Usage log page"): summary tags, filters with a Query button, the type
 * selector, remembered column settings, expandable rows; administrators get the channel, user and retry
 * columns, the username and channel filters, and a user-info dialog.
 */
export function LogList() {
  const user = useSessionUser();
  const admin = (user?.role ?? 0) >= ROLE.admin;
  const [defaults] = useState(() => defaultLogFilters());
  return (
    <Box data-testid="log-page" sx={{ width: '100%', minWidth: 0, contain: 'inline-size' }}>
      <List
        resource="log"
        title="log.title"
        sort={{ field: 'created_at', order: 'DESC' }}
        perPage={10}
        filterDefaultValues={defaults}
        storeKey={false}
        disableSyncWithLocation
        actions={false}
        pagination={<PageBar />}
        empty={false}
        exporter={false}
      >
        <LogTable admin={admin} />
      </List>
    </Box>
  );
}

/** "Items {start} - {end} of {total}" with 10, 20, 50, 100 (spec doc 3 §2). */
export function PageBar() {
  const translate = useTranslate();
  // Props beyond react-admin's reach MUI's TablePagination.
  const label = {
    labelDisplayedRows: ({ from, to, count }: { from: number; to: number; count: number }) =>
      translate('log.page_info', { start: from, end: to, total: count }),
  };
  return <Pagination rowsPerPageOptions={PAGE_SIZES} {...label} />;
}

function LogTable({ admin }: { admin: boolean }) {
  const translate = useTranslate();
  const [chosen, setChosen] = useState(loadColumns);
  const [userId, setUserId] = useState<number | undefined>();
  const columns = LOG_COLUMNS.filter((column) => !('admin' in column) || admin);
  const shown = (key: LogColumn) => columns.some((column) => column.key === key) && chosen[key] !== false;
  const choose = (next: Partial<Record<LogColumn, boolean>>) => {
    setChosen(next);
    saveColumns(next);
  };

  const cells: Record<LogColumn, ReactElement> = {
    created_at: (
      <FunctionField
        key="created_at"
        label="log.fields.created_at"
        render={(r: LogRecord) => formatSeconds(r.created_at)}
      />
    ),
    channel: (
      <FunctionField
        key="channel"
        label="log.fields.channel"
        render={(r: LogRecord) =>
          r.channel ? (
            <Tooltip title={r.channel_name ?? ''}>
              <Chip size="small" variant="outlined" label={`#${r.channel}`} />
            </Tooltip>
          ) : null
        }
      />
    ),
    username: (
      <FunctionField
        key="username"
        label="log.fields.username"
        render={(r: LogRecord) =>
          r.username ? (
            <Link
              component="button"
              type="button"
              onClick={(event) => {
                event.stopPropagation();
                setUserId(r.user_id);
              }}
              data-testid="log-username"
            >
              {r.username}
            </Link>
          ) : null
        }
      />
    ),
    token_name: (
      <FunctionField
        key="token_name"
        label="log.fields.token_name"
        render={(r: LogRecord) => (r.token_name ? <Chip size="small" label={r.token_name} /> : null)}
      />
    ),
    group: (
      <FunctionField
        key="group"
        label="log.fields.group"
        render={(r: LogRecord) => {
          const group = (parseOther(r.other).group as string | undefined) || r.group;
          return group ? <Chip size="small" variant="outlined" label={group} /> : null;
        }}
      />
    ),
    type: <FunctionField key="type" label="log.fields.type" render={(r: LogRecord) => <TypeChip type={r.type} />} />,
    model_name: (
      <FunctionField key="model_name" label="log.fields.model_name" render={(r: LogRecord) => <ModelCell log={r} />} />
    ),
    use_time: (
      <FunctionField key="use_time" label="log.fields.use_time" render={(r: LogRecord) => <TimingCell log={r} />} />
    ),
    prompt_tokens: (
      <FunctionField
        key="prompt_tokens"
        label="log.fields.prompt_tokens"
        render={(r: LogRecord) => (r.type === 2 || r.prompt_tokens ? r.prompt_tokens : '')}
      />
    ),
    completion_tokens: (
      <FunctionField
        key="completion_tokens"
        label="log.fields.completion_tokens"
        render={(r: LogRecord) => (r.type === 2 || r.completion_tokens ? r.completion_tokens : '')}
      />
    ),
    quota: <FunctionField key="quota" label="log.fields.quota" render={() => <QuotaCell />} />,
    retry: (
      <FunctionField
        key="retry"
        label="log.fields.retry"
        render={(r: LogRecord) => {
          const used = (parseOther(r.other).admin_info?.use_channel as string[] | undefined) ?? [];
          return used.length > 1 ? translate('log.retry_chain', { chain: used.join(' → ') }) : '';
        }}
      />
    ),
    ip: <FunctionField key="ip" label="log.fields.ip" render={(r: LogRecord) => r.ip ?? ''} />,
    content: (
      <FunctionField
        key="content"
        label="log.fields.content"
        render={(r: LogRecord) => (
          <Typography variant="body2" sx={{ maxWidth: 280 }} noWrap title={r.content}>
            {r.content}
          </Typography>
        )}
      />
    ),
  };

  return (
    <>
      <LogToolbar admin={admin} columns={columns} chosen={chosen} onChoose={choose} />
      <Box sx={{ overflowX: 'auto', width: '100%', contain: 'inline-size' }}>
        <Datagrid
          bulkActionButtons={false}
          rowClick="expand"
          expand={<LogDetail admin={admin} />}
          data-testid="log-table"
          sx={{ '& td': { whiteSpace: 'nowrap' } }}
        >
          {columns.filter((column) => shown(column.key)).map((column) => cells[column.key])}
        </Datagrid>
      </Box>
      <UserInfoDialog userId={userId} onClose={() => setUserId(undefined)} />
    </>
  );
}

function TypeChip({ type }: { type: number }) {
  const translate = useTranslate();
  const known = LOG_TYPES.find((t) => t.id === type && t.id !== 0);
  return (
    <Chip
      size="small"
      color={LOG_TYPE_COLOR[type] ?? 'default'}
      label={translate(known ? known.label : 'log.types.unknown')}
    />
  );
}

function ModelCell({ log }: { log: LogRecord }) {
  const translate = useTranslate();
  if (!log.model_name) return null;
  const other = parseOther(log.other);
  if (other.is_model_mapped && other.upstream_model_name) {
    return (
      <Tooltip title={translate('log.mapped_to', { model: other.upstream_model_name })}>
        <Chip size="small" color="info" variant="outlined" label={`${log.model_name} → ${other.upstream_model_name}`} />
      </Tooltip>
    );
  }
  return <Chip size="small" color="info" variant="outlined" label={log.model_name} />;
}

/** use_time, first-token time for streams, and stream or not (spec doc 3 §9 colours). */
function TimingCell({ log }: { log: LogRecord }) {
  const translate = useTranslate();
  if (log.type !== 2 && log.type !== 5) return null;
  const frt = Number(parseOther(log.other).frt ?? 0);
  return (
    <Stack direction="row" spacing={0.5}>
      <Chip size="small" color={timeColor(log.use_time)} label={`${log.use_time} s`} />
      {log.is_stream && frt > 0 && (
        <Chip size="small" color={frtColor(frt)} variant="outlined" label={`${(frt / 1000).toFixed(1)} s`} />
      )}
      <Chip
        size="small"
        variant="outlined"
        label={translate(log.is_stream ? 'log.stream' : 'log.not_stream')}
        data-testid="log-stream-flag"
      />
    </Stack>
  );
}

function QuotaCell() {
  const record = useRecordContext<LogRecord>();
  const { status } = useStatus();
  if (!record) return null;
  return <span data-testid="log-quota">{formatQuota(record.quota, status, 6)}</span>;
}

interface Stat {
  quota: number;
  token: number;
  rpm: number;
  tpm: number;
}

/** Summary tags, the filter form with its Query button, the type selector and the column settings. */
function LogToolbar(props: {
  admin: boolean;
  columns: ReadonlyArray<(typeof LOG_COLUMNS)[number]>;
  chosen: Partial<Record<LogColumn, boolean>>;
  onChoose: (next: Partial<Record<LogColumn, boolean>>) => void;
}) {
  const { admin } = props;
  const translate = useTranslate();
  const { status } = useStatus();
  const { filterValues, setFilters } = useListContext();
  const applied = filterValues as LogFilterValues;
  const [form, setForm] = useState<LogFilterValues>(applied);
  const [stat, setStat] = useState<Stat | undefined>();
  const [statError, setStatError] = useState<string | undefined>();
  const [columnsOpen, setColumnsOpen] = useState(false);

  const statKey = JSON.stringify(statQuery(applied, admin));
  useEffect(() => {
    let live = true;
    api
      .get<Stat>(admin ? '/api/log/stat' : '/api/log/self/stat', { query: JSON.parse(statKey) })
      .then((data) => {
        if (!live) return;
        setStat(data);
        setStatError(undefined);
      })
      .catch((error) => live && setStatError(errorMessage(error)));
    return () => {
      live = false;
    };
  }, [admin, statKey]);

  const apply = (next: LogFilterValues) => {
    const clean: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(next)) {
      if (value !== undefined && value !== '' && !(typeof value === 'number' && Number.isNaN(value)))
        clean[key] = value;
    }
    setFilters(clean, {});
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    apply({ ...form, type: applied.type });
  };
  const text = (key: keyof LogFilterValues, label: string, testId: string, type = 'text') => (
    <TextField
      size="small"
      label={translate(label)}
      type={type}
      value={form[key] ?? ''}
      onChange={(event) => setForm({ ...form, [key]: event.target.value })}
      slotProps={{ htmlInput: { 'data-testid': testId } }}
      fullWidth={false}
      sx={{ width: 160 }}
    />
  );
  const time = (key: 'start_timestamp' | 'end_timestamp', label: string) => (
    <TextField
      size="small"
      label={translate(label)}
      type="datetime-local"
      value={toLocalInput(form[key])}
      onChange={(event) => setForm({ ...form, [key]: fromLocalInput(event.target.value) })}
      slotProps={{ inputLabel: { shrink: true }, htmlInput: { 'data-testid': `log-filter-${key}` } }}
      fullWidth={false}
      sx={{ width: 220 }}
    />
  );

  return (
    <Box sx={{ p: 1 }}>
      <Stack direction="row" spacing={1} useFlexGap sx={{ flexWrap: 'wrap', mb: 1 }} data-testid="log-stat">
        <Chip
          color="primary"
          label={translate('log.stat.quota', { value: stat ? formatQuota(stat.quota, status) : '…' })}
          data-testid="log-stat-quota"
        />
        <Chip color="secondary" label={translate('log.stat.rpm', { value: stat ? formatCompact(stat.rpm) : '…' })} />
        <Chip color="info" label={translate('log.stat.tpm', { value: stat ? formatCompact(stat.tpm) : '…' })} />
        {statError && <Chip color="error" variant="outlined" label={statError} />}
      </Stack>
      <Box
        component="form"
        onSubmit={submit}
        sx={{ display: 'flex', flexWrap: 'wrap', gap: 1, alignItems: 'center' }}
        data-testid="log-filters"
      >
        {time('start_timestamp', 'log.filters.start')}
        {time('end_timestamp', 'log.filters.end')}
        {text('token_name', 'log.filters.token_name', 'log-filter-token')}
        {text('model_name', 'log.filters.model_name', 'log-filter-model')}
        {text('group', 'log.filters.group', 'log-filter-group')}
        {admin && text('channel', 'log.filters.channel', 'log-filter-channel', 'number')}
        {admin && text('username', 'log.filters.username', 'log-filter-username')}
        <Button type="submit" variant="contained" data-testid="log-query">
          {translate('log.query')}
        </Button>
        <Button
          type="button"
          onClick={() => {
            const defaults = defaultLogFilters();
            setForm(defaults);
            apply(defaults);
          }}
        >
          {translate('ra.action.reset')}
        </Button>
        <Box sx={{ flex: 1 }} />
        <TextField
          select
          size="small"
          label={translate('log.fields.type')}
          value={applied.type ?? 0}
          onChange={(event) => apply({ ...applied, type: Number(event.target.value) })}
          fullWidth={false}
          sx={{ width: 140 }}
          slotProps={{ select: { SelectDisplayProps: { 'data-testid': 'log-type' } as object } }}
        >
          {LOG_TYPES.map((type) => (
            <MenuItem key={type.id} value={type.id}>
              {translate(type.label)}
            </MenuItem>
          ))}
        </TextField>
        <Button startIcon={<ViewColumn />} onClick={() => setColumnsOpen(true)} data-testid="log-columns">
          {translate('log.columns.button')}
        </Button>
      </Box>
      <ColumnsDialog
        open={columnsOpen}
        onClose={() => setColumnsOpen(false)}
        columns={props.columns}
        chosen={props.chosen}
        onChoose={props.onChoose}
      />
    </Box>
  );
}

function ColumnsDialog(props: {
  open: boolean;
  onClose: () => void;
  columns: ReadonlyArray<(typeof LOG_COLUMNS)[number]>;
  chosen: Partial<Record<LogColumn, boolean>>;
  onChoose: (next: Partial<Record<LogColumn, boolean>>) => void;
}) {
  const translate = useTranslate();
  const { chosen, onChoose } = props;
  return (
    <Dialog open={props.open} onClose={props.onClose} data-testid="log-columns-dialog">
      <DialogTitle>{translate('log.columns.title')}</DialogTitle>
      <DialogContent>
        <Box sx={{ display: 'grid', gridTemplateColumns: 'repeat(2, minmax(160px, 1fr))' }}>
          {props.columns.map((column) => (
            <FormControlLabel
              key={column.key}
              label={translate(column.label)}
              control={
                <Checkbox
                  checked={chosen[column.key] !== false}
                  onChange={(event) => onChoose({ ...chosen, [column.key]: event.target.checked })}
                  slotProps={{ input: { 'data-column': column.key } as object }}
                />
              }
            />
          ))}
        </Box>
      </DialogContent>
      <DialogActions>
        <Button onClick={() => onChoose({})}>{translate('log.columns.reset')}</Button>
        <Button onClick={props.onClose}>{translate('common.close')}</Button>
      </DialogActions>
    </Dialog>
  );
}

interface UserInfo {
  username: string;
  display_name?: string;
  quota: number;
  used_quota: number;
  request_count: number;
}

/** Administrators: who a log's user is (spec doc 3 §2): username, balance, used quota, request count. */
function UserInfoDialog({ userId, onClose }: { userId: number | undefined; onClose: () => void }) {
  const translate = useTranslate();
  const { status } = useStatus();
  const [info, setInfo] = useState<UserInfo | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    setInfo(undefined);
    setError(undefined);
    if (userId === undefined) return;
    let live = true;
    api
      .get<UserInfo>(`/api/user/${userId}`)
      .then((data) => live && setInfo(data))
      .catch((e) => live && setError(errorMessage(e)));
    return () => {
      live = false;
    };
  }, [userId]);
  const row = (label: string, value: string | number) => (
    <Box sx={{ display: 'flex', justifyContent: 'space-between', gap: 4, py: 0.5 }}>
      <Typography color="text.secondary">{translate(label)}</Typography>
      <Typography>{value}</Typography>
    </Box>
  );
  return (
    <Dialog open={userId !== undefined} onClose={onClose} fullWidth maxWidth="xs" data-testid="log-user-dialog">
      <DialogTitle>{translate('log.user_info.title')}</DialogTitle>
      <DialogContent>
        {error && <Typography color="error">{translate(error)}</Typography>}
        {!info && !error && <Typography color="text.secondary">{translate('common.loading')}</Typography>}
        {info && (
          <>
            {row('log.user_info.username', info.username)}
            {row('log.user_info.balance', formatQuota(info.quota, status))}
            {row('log.user_info.used_quota', formatQuota(info.used_quota, status))}
            {row('log.user_info.request_count', info.request_count)}
          </>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('common.close')}</Button>
      </DialogActions>
    </Dialog>
  );
}
