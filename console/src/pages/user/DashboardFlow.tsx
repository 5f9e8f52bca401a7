import { Alert, Card, CardContent, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import { useEffect, useMemo, useState } from 'react';
import { useTranslate } from 'react-admin';
import { formatCompact } from '../../format/number.ts';
import { formatQuota } from '../../format/quota.ts';
import { api, errorMessage } from '../../providers/http.ts';
import { useStatus } from '../../status/StatusContext.tsx';

interface Range {
  start: number;
  end: number;
}

interface Sums {
  count: number;
  quota: number;
  token_used: number;
}

/** A row of GET /api/data/flow (admin) or /api/data/flow/self (by token). */
interface FlowRow extends Sums {
  username?: string;
  token_id?: number;
  token_name?: string;
  use_group: string;
  model_name: string;
  channel_id?: number;
  channel_name?: string;
}

/** Rows of GET /api/data/users summed over the range per username, largest quota first. */
export function usersOverRange(rows: Array<Sums & { username: string }>): Array<Sums & { username: string }> {
  const sums = new Map<string, Sums & { username: string }>();
  for (const row of rows) {
    const sum = sums.get(row.username) ?? { username: row.username, count: 0, quota: 0, token_used: 0 };
    sum.count += row.count;
    sum.quota += row.quota;
    sum.token_used += row.token_used;
    sums.set(row.username, sum);
  }
  return [...sums.values()].sort((a, b) => b.quota - a.quota);
}

/** GET `path` over the range, again whenever the range changes. */
function useData<T>(path: string, range: Range): { rows?: T[]; failure?: string } {
  const [state, setState] = useState<{ rows?: T[]; failure?: string }>({});
  useEffect(() => {
    let live = true;
    api
      .get<T[]>(path, { query: { start_timestamp: range.start, end_timestamp: range.end } })
      .then((rows) => live && setState({ rows }))
      .catch((error) => live && setState({ failure: errorMessage(error) }));
    return () => {
      live = false;
    };
  }, [path, range]);
  return state;
}

/** Administrators: consumption by user over the dashboard's range (GET /api/data/users). */
export function UsageByUserCard({ range }: { range: Range }) {
  const translate = useTranslate();
  const { status } = useStatus();
  const { rows, failure } = useData<Sums & { username: string }>('/api/data/users', range);
  const users = useMemo(() => usersOverRange(rows ?? []), [rows]);
  return (
    <Card data-testid="dashboard-by-user" data-loaded={rows !== undefined} sx={{ mt: 2 }}>
      <CardContent>
        <Typography variant="subtitle1" gutterBottom>
          {translate('dashboard_flow.by_user')}
        </Typography>
        {failure && <Alert severity="error">{translate(failure)}</Alert>}
        <Table size="small">
          <TableHead>
            <TableRow>
              <TableCell>{translate('dashboard_flow.user')}</TableCell>
              <TableCell align="right">{translate('dashboard.requests')}</TableCell>
              <TableCell align="right">{translate('dashboard.tokens')}</TableCell>
              <TableCell align="right">{translate('log.fields.quota')}</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {users.map((user) => (
              <TableRow key={user.username} data-testid={`by-user-${user.username}`}>
                <TableCell>{user.username}</TableCell>
                <TableCell align="right">{user.count}</TableCell>
                <TableCell align="right">{formatCompact(user.token_used)}</TableCell>
                <TableCell align="right">{formatQuota(user.quota, status)}</TableCell>
              </TableRow>
            ))}
            {rows && users.length === 0 && (
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
  );
}

/**
 * The model flow over the dashboard's range: where consumption went — by user, group, model and channel for
 * administrators (GET /api/data/flow), by token, group and model for a user (GET /api/data/flow/self).
 */
export function ModelFlowCard({ range, admin }: { range: Range; admin: boolean }) {
  const translate = useTranslate();
  const { status } = useStatus();
  const { rows, failure } = useData<FlowRow>(admin ? '/api/data/flow' : '/api/data/flow/self', range);
  const first = admin ? 'dashboard_flow.user' : 'dashboard_flow.token';
  return (
    <Card data-testid="dashboard-flow" data-loaded={rows !== undefined} sx={{ mt: 2 }}>
      <CardContent>
        <Typography variant="subtitle1" gutterBottom>
          {translate('dashboard_flow.title')}
        </Typography>
        {failure && <Alert severity="warning">{translate(failure)}</Alert>}
        <Table size="small">
          <TableHead>
            <TableRow>
              <TableCell>{translate(first)}</TableCell>
              <TableCell>{translate('dashboard_flow.group')}</TableCell>
              <TableCell>{translate('log.fields.model_name')}</TableCell>
              {admin && <TableCell>{translate('dashboard_flow.channel')}</TableCell>}
              <TableCell align="right">{translate('dashboard.requests')}</TableCell>
              <TableCell align="right">{translate('dashboard.tokens')}</TableCell>
              <TableCell align="right">{translate('log.fields.quota')}</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {(rows ?? []).map((row) => {
              const who = admin
                ? row.username
                : row.token_name || translate('dashboard_flow.deleted_token', { id: row.token_id ?? 0 });
              const channel = row.channel_name || (row.channel_id ? `#${row.channel_id}` : '-');
              return (
                <TableRow
                  key={`${who}|${row.use_group}|${row.model_name}|${row.channel_id ?? ''}|${row.token_id ?? ''}`}
                  data-testid="flow-row"
                >
                  <TableCell>{who}</TableCell>
                  <TableCell>{row.use_group}</TableCell>
                  <TableCell>{row.model_name}</TableCell>
                  {admin && <TableCell>{channel}</TableCell>}
                  <TableCell align="right">{row.count}</TableCell>
                  <TableCell align="right">{formatCompact(row.token_used)}</TableCell>
                  <TableCell align="right">{formatQuota(row.quota, status)}</TableCell>
                </TableRow>
              );
            })}
            {rows && rows.length === 0 && (
              <TableRow>
                <TableCell colSpan={admin ? 7 : 6}>
                  <Typography color="text.secondary">{translate('dashboard.no_data')}</Typography>
                </TableCell>
              </TableRow>
            )}
          </TableBody>
        </Table>
      </CardContent>
    </Card>
  );
}
