import { Alert, Box, Button, Divider, Stack, Typography } from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { formatSeconds } from '../../format/time.ts';
import type { SignInSession } from '../../pages/account/personal/SessionsCard.tsx';
import { api, errorMessage } from '../../providers/http.ts';

/**
 * A user's sign-in sessions in the user editor (GET /api/user/:id/sessions): sign one out, or sign the
 * user out everywhere (after a lost laptop, or before a ban takes effect in a browser left open).
 */
export function UserSessions({ userId }: { userId: number }) {
  const translate = useTranslate();
  const notify = useNotify();
  const [sessions, setSessions] = useState<SignInSession[]>();
  const [failed, setFailed] = useState<string>();
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      const list = await api.get<SignInSession[]>(`/api/user/${userId}/sessions`);
      setSessions(Array.isArray(list) ? list : []);
      setFailed(undefined);
    } catch (error) {
      setFailed(errorMessage(error));
    }
  }, [userId]);
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

  return (
    <>
      <Divider>{translate('personal.sessions.title')}</Divider>
      {failed && <Alert severity="error">{translate(failed)}</Alert>}
      {sessions?.length === 0 && (
        <Typography variant="body2" color="text.secondary">
          {translate('user_admin.form.no_sessions')}
        </Typography>
      )}
      {sessions?.map((session) => (
        <Stack
          key={session.id}
          direction="row"
          spacing={1}
          sx={{ alignItems: 'center' }}
          data-testid="user-session-row"
        >
          <Box sx={{ flex: 1, minWidth: 0 }}>
            <Typography variant="body2" noWrap title={session.user_agent}>
              {session.user_agent || translate('personal.sessions.unknown_browser')}
            </Typography>
            <Typography variant="caption" color="text.secondary" component="div">
              {translate('personal.sessions.detail', {
                ip: session.ip || '-',
                created: formatSeconds(session.created_at),
                seen: formatSeconds(session.last_seen_at),
              })}
            </Typography>
          </Box>
          <Button
            size="small"
            color="warning"
            disabled={busy}
            onClick={() => void revoke(`/api/user/${userId}/sessions/${encodeURIComponent(session.id)}`)}
            data-testid="user-session-revoke"
          >
            {translate('personal.sessions.revoke')}
          </Button>
        </Stack>
      ))}
      {sessions && sessions.length > 0 && (
        <Button
          color="warning"
          variant="outlined"
          disabled={busy}
          onClick={() => void revoke(`/api/user/${userId}/sessions`)}
          data-testid="user-sessions-revoke-all"
        >
          {translate('user_admin.form.revoke_all_sessions')}
        </Button>
      )}
    </>
  );
}
