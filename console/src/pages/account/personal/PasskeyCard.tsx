import { Button, Card, CardContent, Stack, Typography } from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { formatDateTime } from '../../../format/time.ts';
import { api, errorMessage } from '../../../providers/http.ts';
import { type PasskeyStatus, passkeyStatus, registerPasskey } from '../../../providers/passkey.ts';
import { useStatus } from '../../../status/StatusContext.tsx';

/**
 * The user's passkey (issue 19; one per user, as new-api keeps it): register one with the browser's
 * ceremony, see when it was last used, remove it. Shown while the site offers passkeys, or while the
 * user still has one to remove.
 */
export function PasskeyCard() {
  const translate = useTranslate();
  const notify = useNotify();
  const { status: site } = useStatus();
  const [status, setStatus] = useState<PasskeyStatus>();
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      setStatus(await passkeyStatus());
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  }, [notify]);
  useEffect(() => {
    void load();
  }, [load]);

  const act = async (call: () => Promise<void>, success: string) => {
    setBusy(true);
    try {
      await call();
      notify(success, { type: 'success' });
      await load();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  if (!status || (!site.passkey_login && !status.enabled)) return null;
  const lastUsed = status.last_used_at ? formatDateTime(new Date(status.last_used_at)) : undefined;
  return (
    <Card data-testid="personal-passkey">
      <CardContent>
        <Typography variant="subtitle1" sx={{ fontWeight: 600 }} gutterBottom>
          {translate('personal.passkey.title')}
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }} data-testid="passkey-state">
          {status.enabled
            ? translate(lastUsed ? 'personal.passkey.on_used' : 'personal.passkey.on', { time: lastUsed })
            : translate('personal.passkey.off')}
        </Typography>
        <Stack direction="row" spacing={1}>
          {site.passkey_login && (
            <Button
              variant="outlined"
              disabled={busy}
              onClick={() => act(registerPasskey, 'personal.passkey.registered')}
              data-testid="passkey-register"
            >
              {translate(status.enabled ? 'personal.passkey.replace' : 'personal.passkey.register')}
            </Button>
          )}
          {status.enabled && (
            <Button
              color="error"
              variant="outlined"
              disabled={busy}
              onClick={() => act(() => api.delete('/api/user/passkey'), 'personal.passkey.removed')}
              data-testid="passkey-remove"
            >
              {translate('personal.passkey.remove')}
            </Button>
          )}
        </Stack>
      </CardContent>
    </Card>
  );
}
