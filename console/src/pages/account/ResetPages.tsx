import { Alert, Box, Button, Card, CardContent, Link, Stack, TextField, Typography } from '@mui/material';
import { useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { Link as RouterLink, useSearchParams } from 'react-router';
import { api, errorMessage } from '../../providers/http.ts';
import { useCopy } from './parts/copy.tsx';
import { useCountdown } from './parts/countdown.ts';
import { useTurnstile } from './parts/turnstile.tsx';

/**
 * Password reset request (spec doc 2 §2, §4, §5): an email and the human check; the gateway mails a link.
 * An empty email does nothing; after a click the button waits 30 seconds.
 */
export function ResetRequestPage() {
  const translate = useTranslate();
  const notify = useNotify();
  const turnstile = useTurnstile();
  const lock = useCountdown();
  const [email, setEmail] = useState('');
  const [sending, setSending] = useState(false);
  const [pending, setPending] = useState(false);

  const submit = async () => {
    const address = email.trim();
    if (!address) return;
    if (turnstile.enabled && !turnstile.token) {
      setPending(true);
      return;
    }
    setPending(false);
    setSending(true);
    lock.start();
    try {
      const { message } = await api.request('GET', '/api/reset_password', {
        query: { email: address, turnstile: turnstile.token },
        expireOn401: false,
      });
      notify(message || 'reset.sent', { type: 'success' });
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setSending(false);
      if (turnstile.enabled) turnstile.reset();
    }
  };

  return (
    <Box sx={{ display: 'flex', justifyContent: 'center', py: { xs: 2, sm: 6 } }}>
      <Card sx={{ width: '100%', maxWidth: 420 }} data-testid="reset-page">
        <CardContent>
          <Typography variant="h5" component="h1" gutterBottom>
            {translate('reset.title')}
          </Typography>
          <Box
            component="form"
            noValidate
            onSubmit={(event) => {
              event.preventDefault();
              void submit();
            }}
          >
            <TextField
              label={translate('reset.email')}
              type="email"
              name="email"
              autoComplete="email"
              value={email}
              onChange={(event) => setEmail(event.target.value)}
              fullWidth
              margin="dense"
            />
            {turnstile.widget}
            {pending && (
              <Alert severity="info" sx={{ my: 1 }} data-testid="form-problem">
                {translate('login.turnstile_pending')}
              </Alert>
            )}
            <Button
              type="submit"
              variant="contained"
              fullWidth
              disabled={sending || lock.remaining > 0}
              sx={{ mt: 1 }}
              data-testid="reset-submit"
            >
              {lock.remaining > 0
                ? translate('reset.retry_in', { seconds: lock.remaining })
                : translate('reset.submit')}
            </Button>
          </Box>
          <Stack direction="row" sx={{ justifyContent: 'flex-end', mt: 2 }}>
            <Link component={RouterLink} to="/login" variant="body2">
              {translate('reset.back_to_login')}
            </Link>
          </Stack>
        </CardContent>
      </Card>
    </Box>
  );
}

/**
 * Password reset confirmation (spec doc 2 §2): the mailed link's email and token; confirming resets the
 * password, shows the new one and copies it; clicking it copies it again.
 */
export function ResetConfirmPage() {
  const translate = useTranslate();
  const notify = useNotify();
  const { copy, dialog } = useCopy();
  const [params] = useSearchParams();
  const email = params.get('email') ?? '';
  const token = params.get('token') ?? '';
  const [password, setPassword] = useState<string>();
  const [busy, setBusy] = useState(false);

  const confirm = async () => {
    setBusy(true);
    try {
      const envelope = await api.request<string>('POST', '/api/user/reset', {
        body: { email, token },
        expireOn401: false,
      });
      const fresh = envelope.data ?? '';
      setPassword(fresh);
      await copy(fresh, 'reset.copied');
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  return (
    <Box sx={{ display: 'flex', justifyContent: 'center', py: { xs: 2, sm: 6 } }}>
      <Card sx={{ width: '100%', maxWidth: 420 }} data-testid="reset-confirm-page">
        <CardContent>
          <Typography variant="h5" component="h1" gutterBottom>
            {translate('reset.confirm_title')}
          </Typography>
          {!email || !token ? (
            <Alert severity="error" data-testid="reset-link-invalid">
              {translate('reset.link_invalid')}
            </Alert>
          ) : (
            <>
              <TextField
                label={translate('reset.email')}
                value={email}
                fullWidth
                margin="dense"
                slotProps={{ htmlInput: { readOnly: true } }}
              />
              {password === undefined ? (
                <Button
                  variant="contained"
                  fullWidth
                  disabled={busy}
                  onClick={confirm}
                  sx={{ mt: 1 }}
                  data-testid="reset-confirm"
                >
                  {translate('reset.confirm')}
                </Button>
              ) : (
                <>
                  <Alert severity="success" sx={{ my: 1 }}>
                    {translate('reset.done')}
                  </Alert>
                  <TextField
                    label={translate('reset.new_password')}
                    value={password}
                    fullWidth
                    margin="dense"
                    onClick={() => void copy(password, 'reset.copied')}
                    helperText={translate('reset.click_to_copy')}
                    slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'new-password' } }}
                  />
                  <Button component={RouterLink} to="/login" fullWidth sx={{ mt: 1 }}>
                    {translate('reset.back_to_login')}
                  </Button>
                </>
              )}
            </>
          )}
        </CardContent>
      </Card>
      {dialog}
    </Box>
  );
}
