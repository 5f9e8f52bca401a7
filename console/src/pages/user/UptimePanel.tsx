import { Box, Card, CardContent, Chip, Stack, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import { useTranslate } from 'react-admin';
import { api } from '../../providers/http.ts';
import { useStatus } from '../../status/StatusContext.tsx';

/** GET /api/uptime/status (new-api's shape). */
export interface UptimeGroup {
  categoryName: string;
  monitors: Array<{ name: string; uptime: number; status: number; group: string }>;
}

/** Uptime Kuma's heartbeat states: 0 down, 1 up, 2 pending, 3 maintenance. */
const STATES: Record<number, { key: string; color: 'error' | 'success' | 'warning' | 'info' }> = {
  0: { key: 'uptime.down', color: 'error' },
  1: { key: 'uptime.up', color: 'success' },
  2: { key: 'uptime.pending', color: 'warning' },
  3: { key: 'uptime.maintenance', color: 'info' },
};

/**
 * The dashboard's service status (status `uptime_kuma_enabled`): each configured Uptime Kuma page's monitors
 * with their state and 24-hour uptime. A page the gateway could not read shows "no data".
 */
export function UptimePanel() {
  const { status } = useStatus();
  if (!status.uptime_kuma_enabled) return null;
  return <UptimePanelBody />;
}

function UptimePanelBody() {
  const translate = useTranslate();
  const [groups, setGroups] = useState<UptimeGroup[]>();
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    api
      .get<UptimeGroup[]>('/api/uptime/status')
      .then(setGroups)
      .catch(() => setFailed(true));
  }, []);
  return (
    <Card sx={{ mb: 2 }} data-testid="uptime-panel">
      <CardContent>
        <Typography variant="subtitle1" gutterBottom>
          {translate('uptime.title')}
        </Typography>
        {failed && <Typography color="text.secondary">{translate('uptime.failed')}</Typography>}
        {!groups && !failed && <Typography color="text.secondary">{translate('uptime.loading')}</Typography>}
        <Stack spacing={1.5}>
          {groups?.map((group, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: read once and never reordered; headings may repeat
            <Box key={`${group.categoryName}-${index}`} data-testid="uptime-group">
              <Typography variant="body2" sx={{ fontWeight: 600 }}>
                {group.categoryName}
              </Typography>
              {group.monitors.length === 0 && (
                <Typography variant="body2" color="text.secondary">
                  {translate('uptime.no_data')}
                </Typography>
              )}
              {group.monitors.map((monitor) => {
                const state = STATES[monitor.status] ?? STATES[0]!;
                return (
                  <Box
                    key={`${monitor.group}-${monitor.name}`}
                    sx={{ display: 'flex', alignItems: 'center', gap: 1, py: 0.25 }}
                    data-testid="uptime-monitor"
                  >
                    <Chip size="small" color={state.color} label={translate(state.key)} />
                    <Typography variant="body2" sx={{ flex: 1, minWidth: 0 }} noWrap>
                      {monitor.name}
                    </Typography>
                    <Typography variant="body2" color="text.secondary">
                      {`${(monitor.uptime * 100).toFixed(2)}%`}
                    </Typography>
                  </Box>
                );
              })}
            </Box>
          ))}
        </Stack>
      </CardContent>
    </Card>
  );
}
