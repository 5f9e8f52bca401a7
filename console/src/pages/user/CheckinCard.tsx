import { Box, Button, Card, CardContent, Chip, Stack, Typography } from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { formatQuota } from '../../format/quota.ts';
import { api, errorMessage } from '../../providers/http.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { useTurnstile } from '../account/parts/turnstile.tsx';

/** GET /api/user/checkin (new-api's shape). */
export interface CheckinStatus {
  enabled: boolean;
  min_quota: number;
  max_quota: number;
  stats: {
    total_quota: number;
    total_checkins: number;
    checkin_count: number;
    checked_in_today: boolean;
    records: Array<{ checkin_date: string; quota_awarded: number }>;
  };
}

/**
 * The daily check-in on the dashboard (status `checkin_enabled`): today's button (with the human check when
 * Turnstile is on, as the gateway asks for it), the reward range, this month's check-ins and the totals.
 */
export function CheckinCard() {
  const { status } = useStatus();
  if (!status.checkin_enabled) return null;
  return <CheckinCardBody />;
}

function CheckinCardBody() {
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const turnstile = useTurnstile();
  const [data, setData] = useState<CheckinStatus>();
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      setData(await api.get<CheckinStatus>('/api/user/checkin'));
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  }, [notify]);
  useEffect(() => {
    void load();
  }, [load]);

  const checkIn = async () => {
    if (turnstile.enabled && !turnstile.token) {
      notify('login.turnstile_pending', { type: 'info' });
      return;
    }
    setBusy(true);
    try {
      const answer = await api.request<{ quota_awarded: number }>('POST', '/api/user/checkin', {
        query: { turnstile: turnstile.token },
      });
      notify('checkin.done', {
        type: 'success',
        messageArgs: { amount: formatQuota(answer.data?.quota_awarded ?? 0, status) },
      });
      await load();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      if (turnstile.enabled) turnstile.reset();
      setBusy(false);
    }
  };

  const done = data?.stats.checked_in_today ?? false;
  return (
    <Card sx={{ mb: 2 }} data-testid="checkin-card">
      <CardContent>
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ alignItems: { sm: 'center' } }}>
          <Box sx={{ flex: 1 }}>
            <Typography variant="subtitle1">{translate('checkin.title')}</Typography>
            {data && (
              <Typography variant="body2" color="text.secondary">
                {translate('checkin.range', {
                  min: formatQuota(data.min_quota, status),
                  max: formatQuota(data.max_quota, status),
                })}
                {' · '}
                {translate('checkin.totals', {
                  count: data.stats.total_checkins,
                  amount: formatQuota(data.stats.total_quota, status),
                })}
              </Typography>
            )}
          </Box>
          {!done && turnstile.widget}
          <Button variant="contained" onClick={checkIn} disabled={!data || done || busy} data-testid="checkin-button">
            {translate(done ? 'checkin.checked_in' : 'checkin.button')}
          </Button>
        </Stack>
        {data && data.stats.records.length > 0 && (
          <Box sx={{ mt: 1.5 }}>
            <Typography variant="caption" color="text.secondary">
              {translate('checkin.this_month', { count: data.stats.checkin_count })}
            </Typography>
            <Stack direction="row" spacing={0.5} useFlexGap sx={{ flexWrap: 'wrap', mt: 0.5 }}>
              {data.stats.records.map((record) => (
                <Chip
                  key={record.checkin_date}
                  size="small"
                  label={`${record.checkin_date.slice(5)} +${formatQuota(record.quota_awarded, status)}`}
                  data-testid="checkin-record"
                />
              ))}
            </Stack>
          </Box>
        )}
      </CardContent>
    </Card>
  );
}
