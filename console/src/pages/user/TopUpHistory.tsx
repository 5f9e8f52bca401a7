import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TablePagination,
  TableRow,
  TextField,
  Typography,
} from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { Title, useNotify, useTranslate } from 'react-admin';
import { formatDateTime } from '../../format/time.ts';
import { api, errorMessage } from '../../providers/http.ts';

/** One order of GET /api/user/topup[/self]. */
export interface TopUpOrder {
  id: number;
  user_id: number;
  trade_no: string;
  payment_method: string;
  amount: number;
  money: number;
  status: string;
  create_time: number;
}

interface Page {
  items: TopUpOrder[];
  total: number;
}

const STATUS_COLOR: Record<string, 'success' | 'warning' | 'error'> = {
  success: 'success',
  pending: 'warning',
  failed: 'error',
  expired: 'error',
};

/**
 * Top-up orders, newest first, searchable by order number: the user's own (wallet page), or, with `all`,
 * every user's with a button completing a pending order whose payment notification was lost.
 */
export function TopUpHistoryCard({ all }: { all: boolean }) {
  const translate = useTranslate();
  const notify = useNotify();
  const [page, setPage] = useState(0);
  const [pageSize, setPageSize] = useState(10);
  const [keyword, setKeyword] = useState('');
  const [orders, setOrders] = useState<Page>();
  const [failure, setFailure] = useState<string>();
  const [confirming, setConfirming] = useState<TopUpOrder>();

  const load = useCallback(async () => {
    try {
      const query: Record<string, string | number> = { p: page + 1, page_size: pageSize };
      if (keyword.trim()) query.keyword = keyword.trim();
      setOrders(await api.get<Page>(all ? '/api/user/topup' : '/api/user/topup/self', { query }));
      setFailure(undefined);
    } catch (error) {
      setFailure(errorMessage(error));
    }
  }, [all, page, pageSize, keyword]);
  useEffect(() => {
    void load();
  }, [load]);

  const complete = async (order: TopUpOrder) => {
    setConfirming(undefined);
    try {
      await api.post('/api/user/topup/complete', { trade_no: order.trade_no });
      notify('topup_history.completed', { type: 'success' });
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
    await load();
  };

  return (
    <Card data-testid="topup-history" data-loaded={orders !== undefined}>
      <CardContent>
        <Box sx={{ display: 'flex', alignItems: 'center', gap: 2, mb: 1, flexWrap: 'wrap' }}>
          <Typography variant="subtitle1" sx={{ flex: 1 }}>
            {translate(all ? 'topup_history.all_title' : 'topup_history.title')}
          </Typography>
          <TextField
            size="small"
            label={translate('topup_history.trade_no')}
            value={keyword}
            onChange={(event) => {
              setKeyword(event.target.value);
              setPage(0);
            }}
            slotProps={{ htmlInput: { 'data-testid': 'topup-history-search' } }}
          />
        </Box>
        {failure && <Alert severity="error">{translate(failure)}</Alert>}
        <Table size="small">
          <TableHead>
            <TableRow>
              <TableCell>{translate('topup_history.trade_no')}</TableCell>
              {all && <TableCell>{translate('topup_history.user_id')}</TableCell>}
              <TableCell>{translate('topup_history.method')}</TableCell>
              <TableCell align="right">{translate('topup_history.amount')}</TableCell>
              <TableCell align="right">{translate('topup_history.money')}</TableCell>
              <TableCell>{translate('topup_history.status')}</TableCell>
              <TableCell>{translate('topup_history.created')}</TableCell>
              {all && <TableCell />}
            </TableRow>
          </TableHead>
          <TableBody>
            {(orders?.items ?? []).map((order) => (
              <TableRow key={order.id} data-testid={`topup-order-${order.trade_no}`}>
                <TableCell sx={{ fontFamily: 'monospace' }}>{order.trade_no}</TableCell>
                {all && <TableCell>{order.user_id}</TableCell>}
                <TableCell>{order.payment_method}</TableCell>
                <TableCell align="right">{order.amount}</TableCell>
                <TableCell align="right">{order.money.toFixed(2)}</TableCell>
                <TableCell>
                  <Chip
                    size="small"
                    color={STATUS_COLOR[order.status] ?? 'default'}
                    label={translate(`topup_history.statuses.${order.status}`, { _: order.status })}
                    data-testid="topup-order-status"
                  />
                </TableCell>
                <TableCell>{formatDateTime(new Date(order.create_time * 1000))}</TableCell>
                {all && (
                  <TableCell>
                    {order.status === 'pending' && (
                      <Button size="small" onClick={() => setConfirming(order)}>
                        {translate('topup_history.complete')}
                      </Button>
                    )}
                  </TableCell>
                )}
              </TableRow>
            ))}
            {orders && orders.items.length === 0 && (
              <TableRow>
                <TableCell colSpan={all ? 8 : 6}>
                  <Typography color="text.secondary">{translate('topup_history.empty')}</Typography>
                </TableCell>
              </TableRow>
            )}
          </TableBody>
        </Table>
        <TablePagination
          component="div"
          count={orders?.total ?? 0}
          page={page}
          rowsPerPage={pageSize}
          rowsPerPageOptions={[10, 20, 50, 100]}
          onPageChange={(_, next) => setPage(next)}
          onRowsPerPageChange={(event) => {
            setPageSize(Number(event.target.value));
            setPage(0);
          }}
        />
      </CardContent>
      <Dialog open={confirming !== undefined} onClose={() => setConfirming(undefined)}>
        <DialogTitle>{translate('topup_history.confirm_title')}</DialogTitle>
        <DialogContent>
          <Typography>{translate('topup_history.confirm_text', { trade_no: confirming?.trade_no ?? '' })}</Typography>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setConfirming(undefined)}>{translate('ra.action.cancel')}</Button>
          <Button variant="contained" onClick={() => confirming && void complete(confirming)}>
            {translate('topup_history.complete')}
          </Button>
        </DialogActions>
      </Dialog>
    </Card>
  );
}

/** The administrators' page of every top-up order (/topup/orders). */
export function TopUpOrdersPage() {
  const translate = useTranslate();
  return (
    <Box data-testid="topup-orders-page">
      <Title title={translate('topup_history.all_title')} />
      <TopUpHistoryCard all />
    </Box>
  );
}
