import DeleteSweep from '@mui/icons-material/DeleteSweep';
import Refresh from '@mui/icons-material/Refresh';
import { Box, Button, Chip, Stack, Typography } from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { api, errorMessage } from '../../providers/http.ts';
import { useConfirm } from '../../resources/admin-shared.tsx';

/** GET /api/option/channel_affinity_cache. */
interface AffinityStats {
  enabled: boolean;
  total: number;
  unknown: number;
  by_rule_name: Record<string, number>;
  cache_capacity: number;
  cache_algo: string;
}

/** The channel affinity map: keys held (per rule) against the cap, refreshed on demand, cleared after a confirmation. */
export function AffinityCache() {
  const translate = useTranslate();
  const notify = useNotify();
  const { ask, dialog } = useConfirm();
  const [stats, setStats] = useState<AffinityStats>();
  const load = useCallback(async () => {
    try {
      setStats(await api.get<AffinityStats>('/api/option/channel_affinity_cache'));
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  }, [notify]);
  useEffect(() => {
    void load();
  }, [load]);

  return (
    <Box sx={{ mt: 2 }} data-testid="affinity-cache">
      <Typography variant="subtitle2">{translate('settings.affinity.cache_title')}</Typography>
      {stats && (
        <Stack direction="row" spacing={1} useFlexGap sx={{ flexWrap: 'wrap', my: 1 }}>
          <Chip
            data-testid="affinity-total"
            label={translate('settings.affinity.total', { total: stats.total, capacity: stats.cache_capacity })}
          />
          {Object.entries(stats.by_rule_name).map(([rule, count]) => (
            <Chip key={rule} variant="outlined" label={`${rule}: ${count}`} />
          ))}
          {stats.unknown > 0 && (
            <Chip variant="outlined" label={translate('settings.affinity.unknown', { count: stats.unknown })} />
          )}
        </Stack>
      )}
      <Stack direction="row" spacing={1}>
        <Button startIcon={<Refresh />} onClick={() => void load()} data-testid="affinity-refresh">
          {translate('settings.affinity.refresh')}
        </Button>
        <Button
          color="error"
          variant="outlined"
          startIcon={<DeleteSweep />}
          data-testid="affinity-clear"
          onClick={() =>
            ask({
              title: 'settings.affinity.clear_title',
              content: 'settings.affinity.clear_confirm',
              danger: true,
              onConfirm: async () => {
                try {
                  const answer = await api.request<{ deleted: number }>(
                    'DELETE',
                    '/api/option/channel_affinity_cache?all=true',
                  );
                  notify(translate('settings.affinity.cleared', { count: answer.data?.deleted ?? 0 }), {
                    type: 'success',
                  });
                  await load();
                } catch (error) {
                  notify(errorMessage(error), { type: 'error' });
                }
              },
            })
          }
        >
          {translate('settings.affinity.clear')}
        </Button>
      </Stack>
      {dialog}
    </Box>
  );
}
