import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Skeleton,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { formatCompact } from '../../format/number.ts';
import { formatQuota } from '../../format/quota.ts';
import { ApiError, api, type Envelope, errorMessage } from '../../providers/http.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import type { SiteStatus } from '../../status/status.ts';
import { AmountOptions } from './AmountOptions.tsx';
import { TopUpHistoryCard } from './TopUpHistory.tsx';

interface Balance {
  quota: number;
  used_quota: number;
  request_count: number;
}

/** A pay method of the status (spec doc 2 §3 "Pay method config"). */
export interface PayMethod {
  name: string;
  type: string;
  color?: string;
}

/** The status's pay methods, or undefined when they are not a list of {name, type}. */
export function payMethods(status: SiteStatus): PayMethod[] | undefined {
  let methods = status.pay_methods;
  if (typeof methods === 'string') {
    try {
      methods = JSON.parse(methods);
    } catch {
      return undefined;
    }
  }
  if (!Array.isArray(methods)) return undefined;
  const valid = methods.every(
    (method) =>
      method && typeof method === 'object' && typeof method.name === 'string' && typeof method.type === 'string',
  );
  return valid ? (methods as PayMethod[]) : undefined;
}

/** The top-up amount typed: an integer of at least 1 (spec doc 2 §5). */
export function topUpAmount(text: string): number {
  const amount = Math.floor(Number(text));
  return Number.isFinite(amount) && amount >= 1 ? amount : 1;
}

/**
 * The wallet (spec doc 2 §2 "Wallet page", §4, §5, §7): the balance, redeeming a code (POST /api/user/topup),
 * and online top-up when the status enables it: an amount, its price (POST /api/user/amount), a pay method,
 * a confirmation, then POST /api/user/pay and a hidden form posted to the payment page.
 */
export function WalletPage() {
  const [balance, setBalance] = useState<Balance>();
  const [failure, setFailure] = useState<string>();
  const reload = useCallback(async () => {
    try {
      setBalance(await api.get<Balance>('/api/user/self'));
    } catch (error) {
      setFailure(errorMessage(error));
    }
  }, []);
  useEffect(() => {
    void reload();
  }, [reload]);

  return (
    <Box
      data-testid="wallet-page"
      data-loaded={balance !== undefined}
      sx={{ display: 'flex', flexDirection: 'column', gap: 2 }}
    >
      <BalanceCard balance={balance} failure={failure} />
      <Box sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr', md: '1fr 1fr' }, gap: 2, alignItems: 'start' }}>
        <RedeemCard onRedeemed={reload} />
        <OnlineTopUpCard />
      </Box>
      <TopUpHistoryCard all={false} />
    </Box>
  );
}

function BalanceCard({ balance, failure }: { balance: Balance | undefined; failure: string | undefined }) {
  const translate = useTranslate();
  const { status } = useStatus();
  if (failure) return <Alert severity="error">{translate(failure)}</Alert>;
  if (!balance) return <Skeleton variant="rounded" height={104} />;
  const stats = [
    { key: 'balance', label: 'wallet.balance', value: formatQuota(balance.quota, status) },
    { key: 'used', label: 'wallet.used', value: formatQuota(balance.used_quota, status) },
    { key: 'requests', label: 'wallet.requests', value: formatCompact(balance.request_count) },
  ];
  return (
    <Card data-testid="wallet-balance">
      <CardContent>
        <Stack direction="row" spacing={6} sx={{ flexWrap: 'wrap' }} useFlexGap>
          {stats.map((stat) => (
            <Box key={stat.key} data-testid={`wallet-${stat.key}`}>
              <Typography variant="body2" color="text.secondary">
                {translate(stat.label)}
              </Typography>
              <Typography variant="h5">{stat.value}</Typography>
            </Box>
          ))}
        </Stack>
      </CardContent>
    </Card>
  );
}

function RedeemCard({ onRedeemed }: { onRedeemed(): Promise<void> }) {
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const [code, setCode] = useState('');
  const [problem, setProblem] = useState<string>();
  const [added, setAdded] = useState<number>();
  const [busy, setBusy] = useState(false);

  const redeem = async () => {
    if (!code.trim()) {
      setProblem(translate('wallet.code_required'));
      return;
    }
    setProblem(undefined);
    setBusy(true);
    try {
      const envelope = await api.request<number>('POST', '/api/user/topup', { body: { key: code.trim() } });
      const quota = Number(envelope.data ?? 0);
      setAdded(quota);
      setCode('');
      notify(envelope.message || 'wallet.redeemed', { type: 'success' });
      await onRedeemed();
    } catch (error) {
      setAdded(undefined);
      notify(error instanceof ApiError || error instanceof Error ? errorMessage(error) : 'wallet.request_failed', {
        type: 'error',
      });
    } finally {
      setBusy(false);
    }
  };

  const buy = () => {
    if (!status.top_up_link) {
      notify('wallet.no_topup_link', { type: 'warning' });
      return;
    }
    window.open(status.top_up_link, '_blank', 'noopener');
  };

  return (
    <Card data-testid="wallet-redeem">
      <CardContent>
        <Typography variant="subtitle1" sx={{ fontWeight: 600 }} gutterBottom>
          {translate('wallet.redeem_title')}
        </Typography>
        <Box
          component="form"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            void redeem();
          }}
        >
          <TextField
            label={translate('wallet.code')}
            value={code}
            onChange={(event) => setCode(event.target.value)}
            error={problem !== undefined}
            helperText={problem}
            fullWidth
            margin="dense"
            autoComplete="off"
            slotProps={{ htmlInput: { 'data-testid': 'redeem-code' } }}
          />
          {added !== undefined && (
            <Alert severity="success" sx={{ my: 1 }} data-testid="redeem-added">
              {translate('wallet.added', { amount: formatQuota(added, status) })}
            </Alert>
          )}
          <Stack direction="row" spacing={1} sx={{ mt: 1 }}>
            <Button type="submit" variant="contained" disabled={busy} data-testid="redeem-submit">
              {translate('wallet.redeem')}
            </Button>
            <Button onClick={buy} data-testid="buy-code">
              {translate('wallet.buy_code')}
            </Button>
          </Stack>
        </Box>
      </CardContent>
    </Card>
  );
}

/** The payment page's address and fields, as POST /api/user/pay answers them (spec doc 2 §4). */
type PayEnvelope = Envelope<Record<string, string | number>> & { url?: string };

/** Posts the payment fields to the payment page in a form built for it (and removed with the page). */
export function submitPaymentForm(url: string, fields: Record<string, string | number>): void {
  const form = document.createElement('form');
  form.method = 'POST';
  form.action = url;
  form.style.display = 'none';
  for (const [name, value] of Object.entries(fields)) {
    const input = document.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = String(value);
    form.appendChild(input);
  }
  document.body.appendChild(form);
  form.submit();
}

function OnlineTopUpCard() {
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const enabled = status.enable_online_topup;
  const methods = payMethods(status);
  const minimum = Math.max(1, Number(status.min_topup) || 1);
  const [amountText, setAmountText] = useState(String(minimum));
  const [price, setPrice] = useState<number>();
  const [priceError, setPriceError] = useState<string>();
  const [problem, setProblem] = useState<string>();
  const [method, setMethod] = useState<PayMethod>();
  const [busy, setBusy] = useState(false);
  const amount = topUpAmount(amountText);

  // The price of the amount, asked again whenever it changes (debounced while typing).
  useEffect(() => {
    if (!enabled || amount < minimum) {
      setPrice(undefined);
      return;
    }
    let cancelled = false;
    const timer = setTimeout(() => {
      api
        .request<string | number>('POST', '/api/user/amount', { body: { amount, top_up_code: '' } })
        .then((envelope) => {
          if (cancelled) return;
          setPrice(Number(envelope.data));
          setPriceError(undefined);
        })
        .catch((error) => {
          if (cancelled) return;
          setPrice(undefined);
          setPriceError(translate('wallet.amount_error', { detail: detailOf(error) }));
        });
    }, 300);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [enabled, amount, minimum, translate]);

  const choose = (chosen: PayMethod) => {
    if (amount < minimum) {
      setProblem(translate('wallet.amount_min', { min: minimum }));
      return;
    }
    setProblem(undefined);
    setMethod(chosen);
  };

  const pay = async () => {
    if (!method) return;
    setBusy(true);
    try {
      const envelope = (await api.request<Record<string, string | number>>('POST', '/api/user/pay', {
        body: { amount, top_up_code: '', payment_method: method.type },
      })) as PayEnvelope;
      if (envelope.message !== 'success' || !envelope.url) {
        notify(translate('wallet.amount_error', { detail: String(envelope.data ?? envelope.message) }), {
          type: 'error',
        });
        return;
      }
      setMethod(undefined);
      submitPaymentForm(envelope.url, envelope.data ?? {});
    } catch (error) {
      notify(error instanceof ApiError ? detailOf(error) : 'wallet.request_failed', { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  /** The money to pay, in the payment provider's currency (option Price per unit). */
  const currency = (value: number) => (Number.isFinite(value) ? value.toFixed(2) : '-');

  return (
    <Card data-testid="wallet-online">
      <CardContent>
        <Typography variant="subtitle1" sx={{ fontWeight: 600 }} gutterBottom>
          {translate('wallet.online_title')}
        </Typography>
        {!enabled && (
          <Alert severity="info" sx={{ mb: 1 }} data-testid="wallet-online-disabled">
            {translate('wallet.online_disabled')}
          </Alert>
        )}
        {enabled && !methods && (
          <Alert severity="error" sx={{ mb: 1 }}>
            {translate('wallet.pay_methods_invalid')}
          </Alert>
        )}
        <TextField
          type="number"
          label={translate('wallet.amount')}
          value={amountText}
          disabled={!enabled}
          onChange={(event) => setAmountText(event.target.value)}
          onBlur={() => setAmountText(String(topUpAmount(amountText)))}
          error={problem !== undefined}
          helperText={problem ?? translate('wallet.amount_hint', { min: minimum })}
          fullWidth
          margin="dense"
          slotProps={{ htmlInput: { min: 1, step: 1, 'data-testid': 'topup-amount' } }}
        />
        {enabled && <AmountOptions selected={amount} onPick={(picked) => setAmountText(String(picked))} />}
        {enabled && (
          <Typography sx={{ my: 1 }} data-testid="topup-price" color={priceError ? 'error' : undefined}>
            {priceError ??
              (price === undefined
                ? translate('wallet.price_pending')
                : translate('wallet.price', { price: currency(price) }))}
          </Typography>
        )}
        <Stack direction="row" spacing={1} sx={{ mt: 1, flexWrap: 'wrap' }} useFlexGap>
          {(methods ?? []).map((candidate) => (
            <Button
              key={candidate.type}
              variant="contained"
              disabled={!enabled}
              onClick={() => choose(candidate)}
              sx={candidate.color ? { bgcolor: candidate.color } : undefined}
              data-testid={`pay-${candidate.type}`}
            >
              {candidate.name}
            </Button>
          ))}
        </Stack>
      </CardContent>
      <Dialog open={method !== undefined} onClose={() => setMethod(undefined)} data-testid="pay-confirm">
        <DialogTitle>{translate('wallet.confirm_title')}</DialogTitle>
        <DialogContent>
          <Typography>{translate('wallet.confirm_amount', { amount })}</Typography>
          {price !== undefined && <Typography>{translate('wallet.price', { price: currency(price) })}</Typography>}
          <Typography>{translate('wallet.confirm_method', { method: method?.name ?? '' })}</Typography>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setMethod(undefined)}>{translate('common.cancel')}</Button>
          <Button variant="contained" onClick={pay} disabled={busy} data-testid="pay-submit">
            {translate('wallet.pay')}
          </Button>
        </DialogActions>
      </Dialog>
    </Card>
  );
}

/** What a failed amount or pay call says: new-api puts the detail in `data`, this gateway in `message`. */
function detailOf(error: unknown): string {
  if (error instanceof ApiError) {
    const body = error.body as { data?: unknown } | undefined;
    return typeof body?.data === 'string' && body.data ? body.data : error.message;
  }
  return errorMessage(error);
}
