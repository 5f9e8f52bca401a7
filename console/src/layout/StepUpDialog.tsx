import { Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import { HttpError, useTranslate } from 'react-admin';
import { ApiError, api } from '../providers/http.ts';
import { passkeyStatus, verifyWithPasskey } from '../providers/passkey.ts';
import { useStatus } from '../status/StatusContext.tsx';

/** How the user chose to verify: a two-factor code, or their passkey. */
type Choice = { method: '2fa'; code: string } | { method: 'passkey' };
type Answer = (choice: Choice | undefined) => void;
/** Set while the dialog is mounted: opens it and hands the choice (or undefined on cancel) back. */
let ask: ((answer: Answer) => void) | undefined;

/**
 * Runs a sensitive call (revealing keys, another user's quota, deleting channels); when the gateway asks
 * for a fresh verification (`verification_required`), asks for a two-factor code or the passkey, verifies
 * the session (POST /api/verify) and runs the call once more. Cancelling gives the original refusal.
 */
export async function withStepUp<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const open = ask;
    if (!needsVerification(error) || !open) throw error;
    const choice = await new Promise<Choice | undefined>((resolve) => open(resolve));
    if (!choice) throw error;
    if (choice.method === 'passkey') await verifyWithPasskey();
    else await api.post('/api/verify', { method: '2fa', code: choice.code });
    return call();
  }
}

/** The refusal of a sensitive call without a fresh verification, from /api (envelope) or /rest (HTTP 403). */
function needsVerification(error: unknown): boolean {
  if (error instanceof ApiError) return error.code === 'verification_required';
  if (!(error instanceof HttpError)) return false;
  const body = error.body as { code?: string; error?: { code?: string } } | undefined;
  return (body?.code ?? body?.error?.code) === 'verification_required';
}

/**
 * The methods the user can verify with, as new-api's front end finds them (2FA status, passkey status);
 * a passkey only while the site offers passkeys.
 */
async function methods(passkeysOn: boolean): Promise<{ code: boolean; passkey: boolean }> {
  const [twoFactor, passkey] = await Promise.all([
    api.get<{ enabled: boolean }>('/api/user/2fa/status').catch(() => ({ enabled: false })),
    passkeysOn ? passkeyStatus().catch(() => ({ enabled: false })) : { enabled: false },
  ]);
  // Without either known, the code prompt stays (the gateway then says what is missing).
  return { code: twoFactor.enabled || !passkey.enabled, passkey: passkey.enabled };
}

/** The prompt of `withStepUp`, mounted once in the layout. */
export function StepUpDialog() {
  const translate = useTranslate();
  const passkeysOn = useStatus().status.passkey_login;
  const [pending, setPending] = useState<Answer>();
  const [code, setCode] = useState('');
  const [offered, setOffered] = useState({ code: true, passkey: false });

  useEffect(() => {
    ask = (answer) => {
      setCode('');
      setOffered({ code: true, passkey: false });
      setPending(() => answer);
      void methods(passkeysOn).then(setOffered);
    };
    return () => {
      ask = undefined;
    };
  }, [passkeysOn]);

  const close = (choice: Choice | undefined) => {
    pending?.(choice);
    setPending(undefined);
  };
  const submitCode = () => close({ method: '2fa', code: code.trim() });
  const hint = offered.passkey ? (offered.code ? 'step_up.hint_both' : 'step_up.hint_passkey') : 'step_up.hint';

  return (
    <Dialog open={pending !== undefined} onClose={() => close(undefined)} data-testid="step-up-dialog">
      <DialogTitle>{translate('step_up.title')}</DialogTitle>
      <DialogContent>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
          {translate(hint)}
        </Typography>
        {offered.code && (
          <TextField
            name="step_up_code"
            label={translate('step_up.code')}
            value={code}
            onChange={(event) => setCode(event.target.value)}
            autoComplete="one-time-code"
            autoFocus
            fullWidth
            onKeyDown={(event) => {
              if (event.key === 'Enter' && code.trim() !== '') submitCode();
            }}
          />
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={() => close(undefined)}>{translate('ra.action.cancel')}</Button>
        {offered.passkey && (
          <Button
            variant={offered.code ? 'outlined' : 'contained'}
            onClick={() => close({ method: 'passkey' })}
            data-testid="step-up-passkey"
          >
            {translate('step_up.use_passkey')}
          </Button>
        )}
        {offered.code && (
          <Button variant="contained" disabled={code.trim() === ''} onClick={submitCode}>
            {translate('step_up.verify')}
          </Button>
        )}
      </DialogActions>
    </Dialog>
  );
}
