import { Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import { HttpError, useTranslate } from 'react-admin';
import { ApiError, api } from '../providers/http.ts';

type Answer = (code: string | undefined) => void;
/** Set while the dialog is mounted: opens it and hands the typed code (or undefined on cancel) back. */
let ask: ((answer: Answer) => void) | undefined;

/**
 * Runs a sensitive call (revealing keys, another user's quota, deleting channels); when the gateway asks
 * for a fresh verification (`verification_required`), asks for a two-factor code, verifies the session
 * (POST /api/verify) and runs the call once more. Cancelling gives the original refusal.
 */
export async function withStepUp<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const open = ask;
    if (!needsVerification(error) || !open) throw error;
    const code = await new Promise<string | undefined>((resolve) => open(resolve));
    if (!code) throw error;
    await api.post('/api/verify', { method: '2fa', code });
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

/** The code prompt of `withStepUp`, mounted once in the layout. */
export function StepUpDialog() {
  const translate = useTranslate();
  const [pending, setPending] = useState<Answer>();
  const [code, setCode] = useState('');

  useEffect(() => {
    ask = (answer) => {
      setCode('');
      setPending(() => answer);
    };
    return () => {
      ask = undefined;
    };
  }, []);

  const close = (value: string | undefined) => {
    pending?.(value);
    setPending(undefined);
  };

  return (
    <Dialog open={pending !== undefined} onClose={() => close(undefined)} data-testid="step-up-dialog">
      <DialogTitle>{translate('step_up.title')}</DialogTitle>
      <DialogContent>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
          {translate('step_up.hint')}
        </Typography>
        <TextField
          name="step_up_code"
          label={translate('step_up.code')}
          value={code}
          onChange={(event) => setCode(event.target.value)}
          autoComplete="one-time-code"
          autoFocus
          fullWidth
          onKeyDown={(event) => {
            if (event.key === 'Enter' && code.trim() !== '') close(code.trim());
          }}
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={() => close(undefined)}>{translate('ra.action.cancel')}</Button>
        <Button variant="contained" disabled={code.trim() === ''} onClick={() => close(code.trim())}>
          {translate('step_up.verify')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
