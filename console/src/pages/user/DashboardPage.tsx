import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  MenuItem,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  TextField,
  Typography,
  useTheme,
} from '@mui/material';
import { type FormEvent, useCallback, useEffect, useMemo, useState } from 'react';
import { Title, useNotify, useTranslate } from 'react-admin';
import { formatCompact } from '../../format/number.ts';
import { formatQuota } from '../../format/quota.ts';
import { formatDateTime, fromLocalInput, toLocalInput } from '../../format/time.ts';
import { api, errorMessage } from '../../providers/http.ts';
import { ROLE, useSessionUser } from '../../providers/session.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { CheckinCard } from './CheckinCard.tsx';
import { ConsolePanels } from './ConsolePanels.tsx';
import { ModelFlowCard, UsageByUserCard } from './DashboardFlow.tsx';
import { UptimePanel } from './UptimePanel.tsx';

/** One hour bucket of GET /api/data (one user's, or everyone's summed per model). */
interface QuotaBucket {
  model_name: string;
  created_at: number;
  count: number;
  quota: number;
  token_used: number;
}

type Granularity = 'hour' | 'day' | 'week';
const GRANULARITIES: Array<{ id: Granularity; label: string; seconds: number }> = [
  { id: 'hour', label: 'dashboard.granularity.hour', seconds: 3600 },
  { id: 'day', label: 'dashboard.granularity.day', seconds: 86_400 },
  { id: 'week', label: 'dashboard.granularity.week', seconds: 604_800 },
];

/** /api/data/self answers at most 30 days; the default view is the last 7. */
const DEFAULT_DAYS = 7;

/** Buckets summed into periods of the chosen length (local time for days and weeks). */
export function periods(
  buckets: QuotaBucket[],
  granularity: Granularity,
): Array<{ start: number; quota: number; count: number; tokens: number }> {
  const sums = new Map<number, { start: number; quota: number; count: number; tokens: number }>();
  for (const bucket of buckets) {
    const date = new Date(bucket.created_at * 1000);
    if (granularity !== 'hour') date.setHours(0, 0, 0, 0);
    if (granularity === 'week') date.setDate(date.getDate() - ((date.getDay() + 6) % 7));
    if (granularity === 'hour') date.setMinutes(0, 0, 0);
    const start = Math.floor(date.getTime() / 1000);
    const sum = sums.get(start) ?? { start, quota: 0, count: 0, tokens: 0 };
    sum.quota += bucket.quota;
    sum.count += bucket.count;
    sum.tokens += bucket.token_used;
    sums.set(start, sum);
  }
  return [...sums.values()].sort((a, b) => a.start - b.start);
}

/**
 * The dashboard (/detail, shown when data export is on): the administrator's panels (ConsolePanels), totals and
 * two small charts, quota and requests per period, from the hourly usage data; a table per model.
 */
export function DashboardPage() {
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const user = useSessionUser();
  const admin = (user?.role ?? 0) >= ROLE.admin;
  const initialGranularity = (GRANULARITIES.find((g) => g.id === status.data_export_default_time)?.id ??
    'hour') as Granularity;
  const [range, setRange] = useState(() => {
    const end = Math.floor(Date.now() / 1000) + 3600;
    return { start: end - DEFAULT_DAYS * 86_400, end };
  });
  const [form, setForm] = useState(range);
  const [username, setUsername] = useState('');
  const [granularity, setGranularity] = useState<Granularity>(initialGranularity);
  const [buckets, setBuckets] = useState<QuotaBucket[] | undefined>();

  const load = useCallback(async () => {
    try {
      const query: Record<string, string | number> = { start_timestamp: range.start, end_timestamp: range.end };
      if (admin && username) query.username = username;
      setBuckets(await api.get<QuotaBucket[]>(admin ? '/api/data/' : '/api/data/self', { query }));
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
      setBuckets([]);
    }
  }, [range, admin, username, notify]);

  // Only the applied range reloads; the username is applied with the Query button.
  // biome-ignore lint/correctness/useExhaustiveDependencies: load changes with the username too
  useEffect(() => {
    void load();
  }, [range]);

  const series = useMemo(() => periods(buckets ?? [], granularity), [buckets, granularity]);
  const totals = useMemo(
    () =>
      (buckets ?? []).reduce(
        (sum, b) => ({ quota: sum.quota + b.quota, count: sum.count + b.count, tokens: sum.tokens + b.token_used }),
        { quota: 0, count: 0, tokens: 0 },
      ),
    [buckets],
  );
  const byModel = useMemo(() => {
    const map = new Map<string, { quota: number; count: number; tokens: number }>();
    for (const b of buckets ?? []) {
      const sum = map.get(b.model_name) ?? { quota: 0, count: 0, tokens: 0 };
      sum.quota += b.quota;
      sum.count += b.count;
      sum.tokens += b.token_used;
      map.set(b.model_name, sum);
    }
    return [...map.entries()].sort((a, b) => b[1].quota - a[1].quota);
  }, [buckets]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (form.start === range.start && form.end === range.end) void load();
    else setRange(form);
  };

  return (
    <Box data-testid="dashboard-page" sx={{ width: '100%', minWidth: 0, contain: 'inline-size' }}>
      <Title title={translate('dashboard.title')} />
      {!status.enable_data_export && (
        <Alert severity="info" sx={{ mb: 1 }}>
          {translate('dashboard.disabled')}
        </Alert>
      )}
      <ConsolePanels />
      <CheckinCard />
      <UptimePanel />
      <Box component="form" onSubmit={submit} sx={{ display: 'flex', flexWrap: 'wrap', gap: 1, mb: 2 }}>
        <TextField
          size="small"
          type="datetime-local"
          label={translate('log.filters.start')}
          value={toLocalInput(form.start)}
          onChange={(event) => setForm({ ...form, start: fromLocalInput(event.target.value) ?? form.start })}
          slotProps={{ inputLabel: { shrink: true } }}
        />
        <TextField
          size="small"
          type="datetime-local"
          label={translate('log.filters.end')}
          value={toLocalInput(form.end)}
          onChange={(event) => setForm({ ...form, end: fromLocalInput(event.target.value) ?? form.end })}
          slotProps={{ inputLabel: { shrink: true } }}
        />
        {admin && (
          <TextField
            size="small"
            label={translate('log.filters.username')}
            value={username}
            onChange={(event) => setUsername(event.target.value)}
          />
        )}
        <TextField
          select
          size="small"
          label={translate('dashboard.granularity.label')}
          value={granularity}
          onChange={(event) => setGranularity(event.target.value as Granularity)}
          sx={{ minWidth: 120 }}
        >
          {GRANULARITIES.map((g) => (
            <MenuItem key={g.id} value={g.id}>
              {translate(g.label)}
            </MenuItem>
          ))}
        </TextField>
        <Button type="submit" variant="contained">
          {translate('log.query')}
        </Button>
      </Box>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ mb: 2 }}>
        <Figure
          label={translate('dashboard.total_quota')}
          value={formatQuota(totals.quota, status)}
          testId="dashboard-quota"
        />
        <Figure
          label={translate('dashboard.total_requests')}
          value={formatCompact(totals.count)}
          testId="dashboard-requests"
        />
        <Figure
          label={translate('dashboard.total_tokens')}
          value={formatCompact(totals.tokens)}
          testId="dashboard-tokens"
        />
      </Stack>
      <Stack direction={{ xs: 'column', md: 'row' }} spacing={2} sx={{ mb: 2 }}>
        <ChartCard
          title={translate('dashboard.quota_chart')}
          points={series.map((p) => ({ start: p.start, value: p.quota, label: formatQuota(p.quota, status) }))}
          empty={translate('dashboard.no_data')}
        />
        <ChartCard
          title={translate('dashboard.requests_chart')}
          points={series.map((p) => ({ start: p.start, value: p.count, label: String(p.count) }))}
          empty={translate('dashboard.no_data')}
        />
      </Stack>
      <Card>
        <CardContent>
          <Typography variant="subtitle1" gutterBottom>
            {translate('dashboard.by_model')}
          </Typography>
          <Table size="small">
            <TableHead>
              <TableRow>
                <TableCell>{translate('log.fields.model_name')}</TableCell>
                <TableCell align="right">{translate('dashboard.requests')}</TableCell>
                <TableCell align="right">{translate('dashboard.tokens')}</TableCell>
                <TableCell align="right">{translate('log.fields.quota')}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {byModel.map(([model, sum]) => (
                <TableRow key={model}>
                  <TableCell>{model}</TableCell>
                  <TableCell align="right">{sum.count}</TableCell>
                  <TableCell align="right">{formatCompact(sum.tokens)}</TableCell>
                  <TableCell align="right">{formatQuota(sum.quota, status)}</TableCell>
                </TableRow>
              ))}
              {byModel.length === 0 && (
                <TableRow>
                  <TableCell colSpan={4}>
                    <Typography color="text.secondary">{translate('dashboard.no_data')}</Typography>
                  </TableCell>
                </TableRow>
              )}
            </TableBody>
          </Table>
        </CardContent>
      </Card>
      {admin && <UsageByUserCard range={range} />}
      <ModelFlowCard range={range} admin={admin} />
    </Box>
  );
}

function Figure({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <Card sx={{ flex: 1 }}>
      <CardContent>
        <Typography variant="body2" color="text.secondary">
          {label}
        </Typography>
        <Typography variant="h5" data-testid={testId}>
          {value}
        </Typography>
      </CardContent>
    </Card>
  );
}

/** A small SVG bar chart: one bar per period, its value in the tooltip. */
function ChartCard(props: {
  title: string;
  points: Array<{ start: number; value: number; label: string }>;
  empty: string;
}) {
  const theme = useTheme();
  const width = 480;
  const height = 160;
  const max = Math.max(0, ...props.points.map((p) => p.value));
  const step = props.points.length > 0 ? width / props.points.length : width;
  return (
    <Card sx={{ flex: 1 }}>
      <CardContent>
        <Typography variant="subtitle1" gutterBottom>
          {props.title}
        </Typography>
        {props.points.length === 0 || max === 0 ? (
          <Typography color="text.secondary" sx={{ height, display: 'flex', alignItems: 'center' }}>
            {props.empty}
          </Typography>
        ) : (
          <Box component="svg" viewBox={`0 0 ${width} ${height + 20}`} sx={{ width: '100%', height: 'auto' }}>
            <line x1={0} y1={height} x2={width} y2={height} stroke={theme.palette.divider} />
            {props.points.map((point, index) => {
              const barHeight = (point.value / max) * (height - 10);
              return (
                <rect
                  key={point.start}
                  x={index * step + step * 0.15}
                  y={height - barHeight}
                  width={Math.max(1, step * 0.7)}
                  height={barHeight}
                  fill={theme.palette.primary.main}
                  rx={2}
                >
                  <title>{`${formatDateTime(new Date(point.start * 1000)).slice(0, 16)}: ${point.label}`}</title>
                </rect>
              );
            })}
            <text x={0} y={height + 15} fontSize={11} fill={theme.palette.text.secondary}>
              {formatDateTime(new Date(props.points[0]!.start * 1000)).slice(5, 16)}
            </text>
            <text x={width} y={height + 15} fontSize={11} textAnchor="end" fill={theme.palette.text.secondary}>
              {formatDateTime(new Date(props.points.at(-1)!.start * 1000)).slice(5, 16)}
            </text>
          </Box>
        )}
      </CardContent>
    </Card>
  );
}
