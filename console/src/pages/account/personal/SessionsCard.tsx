import { Alert, Box, Button, Card, CardContent, Chip, Skeleton, Stack, Typography } from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { formatSeconds } from '../../../format/time.ts';
import { api, errorMessage } from '../../../providers/http.ts';

/** One sign-in as GET /api/user/sessions lists it. */
export interface SignInSession {
  id: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
  ip: string;
  user_agent: string;
  current: boolean;
}

/**
 * Sign-in sessions: every browser signed in to this account (when it signed in, when it was last seen,
 * from where, with what), this one marked; sign one out, or every other one.
 */
export function SessionsCard() {
  const translate = useTranslate();
  const notify = useNotify();
  const [sessions, setSessions] = useState<SignInSession[]>();
  const [failed, setFailed] = useState<string>();
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      const list = await api.get<SignInSession[]>('/api/user/sessions');
      setSessions(Array.isArray(list) ? list : []);
      setFailed(undefined);
    } catch (error) {
      setFailed(errorMessage(error));
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const revoke = async (path: string) => {
    setBusy(true);
    try {
      const { message } = await api.request('DELETE', path);
      notify(message || 'personal.sessions.revoked', { type: 'success' });
      await load();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  const others = sessions?.filter((s) => !s.current).length ?? 0;
  return (
    <Card data-testid="personal-sessions">
      <CardContent>
        <Stack direction="row" sx={{ alignItems: 'center', mb: 1 }}>
          <Typography variant="subtitle1" sx={{ fontWeight: 600, flex: 1 }}>
            {translate('personal.sessions.title')}
          </Typography>
          <Button
            size="small"
            color="warning"
            disabled={busy || others === 0}
            onClick={() => void revoke('/api/user/sessions')}
            data-testid="sessions-revoke-others"
          >
            {translate('personal.sessions.revoke_others')}
          </Button>
        </Stack>
        {failed && <Alert severity="error">{translate(failed)}</Alert>}
        {!sessions && !failed && <Skeleton variant="rounded" height={64} />}
        <Stack spacing={1.5}>
          {sessions?.map((session) => (
            <Stack
              key={session.id}
              direction="row"
              spacing={2}
              sx={{ alignItems: 'center' }}
              data-testid="session-row"
              data-current={session.current ? 'true' : 'false'}
            >
              <Box sx={{ flex: 1, minWidth: 0 }}>
                <Stack direction="row" spacing={1} sx={{ alignItems: 'center' }}>
                  <Typography variant="body2" noWrap title={session.user_agent}>
                    {session.user_agent || translate('personal.sessions.unknown_browser')}
                  </Typography>
                  {session.current && (
                    <Chip size="small" color="primary" label={translate('personal.sessions.current')} />
                  )}
                </Stack>
                <Typography variant="caption" color="text.secondary" component="div">
                  {translate('personal.sessions.detail', {
                    ip: session.ip || '-',
                    created: formatSeconds(session.created_at),
                    seen: formatSeconds(session.last_seen_at),
                  })}
                </Typography>
              </Box>
              {!session.current && (
                <Button
                  size="small"
                  variant="outlined"
                  color="warning"
                  disabled={busy}
                  onClick={() => void revoke(`/api/user/sessions/${encodeURIComponent(session.id)}`)}
                  data-testid="session-revoke"
                >
                  {translate('personal.sessions.revoke')}
                </Button>
              )}
            </Stack>
          ))}
        </Stack>
      </CardContent>
    </Card>
  );
}
