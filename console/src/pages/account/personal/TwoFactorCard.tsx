import { Alert, Box, Button, Card, CardContent, Link, Stack, TextField, Typography } from '@mui/material';
import { QRCodeCanvas } from 'qrcode.react';
import { useCallback, useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { api, errorMessage } from '../../../providers/http.ts';

interface TwoFactorStatus {
  enabled: boolean;
  locked: boolean;
  backup_codes_remaining?: number;
}

interface Setup {
  secret: string;
  qr_code_data: string;
  backup_codes: string[];
}

/**
 * Two-factor sign-in (issue 19): set up (the otpauth link as a QR code to scan, the secret and the link for
 * typing or tapping it in an authenticator app, and the backup codes, shown once), enable with a code, make new backup codes, disable.
 */
export function TwoFactorCard() {
  const translate = useTranslate();
  const notify = useNotify();
  const [status, setStatus] = useState<TwoFactorStatus>();
  const [setup, setSetup] = useState<Setup>();
  const [freshCodes, setFreshCodes] = useState<string[]>();
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      setStatus(await api.get<TwoFactorStatus>('/api/user/2fa/status'));
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  }, [notify]);
  useEffect(() => {
    void load();
  }, [load]);

  /** Runs one call with the typed code; on success clears the code and reloads the status. */
  const act = async (call: () => Promise<void>, success?: string) => {
    setBusy(true);
    try {
      await call();
      setCode('');
      if (success) notify(success, { type: 'success' });
      await load();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  const start = () =>
    act(async () => {
      setFreshCodes(undefined);
      setSetup(await api.post<Setup>('/api/user/2fa/setup'));
    });
  const enable = () =>
    act(async () => {
      await api.post('/api/user/2fa/enable', { code: code.trim() });
      setSetup(undefined);
    }, 'personal.two_factor.enabled');
  const regenerate = () =>
    act(async () => {
      const answer = await api.post<{ backup_codes: string[] }>('/api/user/2fa/backup_codes', { code: code.trim() });
      setFreshCodes(answer.backup_codes);
    });
  const disable = () =>
    act(async () => {
      await api.post('/api/user/2fa/disable', { code: code.trim() });
      setFreshCodes(undefined);
    }, 'personal.two_factor.disabled');

  const codeField = (
    <TextField
      size="small"
      name="two_factor_code"
      label={translate('personal.two_factor.code')}
      helperText={status?.enabled ? translate('personal.two_factor.code_hint') : undefined}
      value={code}
      onChange={(event) => setCode(event.target.value)}
      autoComplete="one-time-code"
    />
  );
  const codeList = (codes: string[]) => (
    <Box data-testid="two-factor-backup-codes" sx={{ my: 1 }}>
      <Typography variant="body2" color="text.secondary">
        {translate('personal.two_factor.backup_codes')}
      </Typography>
      <Box component="pre" sx={{ fontFamily: 'monospace', m: 0, columns: 2 }}>
        {codes.join('\n')}
      </Box>
    </Box>
  );

  return (
    <Card data-testid="personal-two-factor">
      <CardContent>
        <Typography variant="subtitle1" sx={{ fontWeight: 600 }} gutterBottom>
          {translate('personal.two_factor.title')}
        </Typography>
        {status && (
          <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }} data-testid="two-factor-state">
            {status.enabled
              ? translate('personal.two_factor.on', { count: status.backup_codes_remaining ?? 0 })
              : translate('personal.two_factor.off')}
          </Typography>
        )}
        {status && !status.enabled && !setup && (
          <Button variant="outlined" onClick={start} disabled={busy} data-testid="two-factor-setup">
            {translate('personal.two_factor.setup')}
          </Button>
        )}
        {status && !status.enabled && setup && (
          <Stack spacing={1}>
            <Alert severity="info">{translate('personal.two_factor.scan')}</Alert>
            <QRCodeCanvas
              value={setup.qr_code_data}
              size={192}
              marginSize={4}
              title={translate('personal.two_factor.link')}
              data-testid="two-factor-qr"
            />
            <TextField
              size="small"
              label={translate('personal.two_factor.secret')}
              value={setup.secret}
              slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'two-factor-secret' } }}
            />
            <Link href={setup.qr_code_data} variant="body2" data-testid="two-factor-link">
              {translate('personal.two_factor.link')}
            </Link>
            {codeList(setup.backup_codes)}
            <Stack direction="row" spacing={1} sx={{ alignItems: 'flex-start' }}>
              {codeField}
              <Button
                variant="contained"
                onClick={enable}
                disabled={busy || code.trim() === ''}
                data-testid="two-factor-enable"
              >
                {translate('personal.two_factor.enable')}
              </Button>
            </Stack>
          </Stack>
        )}
        {status?.enabled && (
          <Stack spacing={1}>
            {freshCodes && codeList(freshCodes)}
            <Stack direction="row" spacing={1} sx={{ alignItems: 'flex-start', flexWrap: 'wrap' }}>
              {codeField}
              <Button
                variant="outlined"
                onClick={regenerate}
                disabled={busy || code.trim() === ''}
                data-testid="two-factor-regenerate"
              >
                {translate('personal.two_factor.regenerate')}
              </Button>
              <Button
                color="error"
                variant="outlined"
                onClick={disable}
                disabled={busy || code.trim() === ''}
                data-testid="two-factor-disable"
              >
                {translate('personal.two_factor.disable')}
              </Button>
            </Stack>
          </Stack>
        )}
      </CardContent>
    </Card>
  );
}
