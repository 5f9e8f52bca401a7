import Chat from '@mui/icons-material/Chat';
import Fingerprint from '@mui/icons-material/Fingerprint';
import Forum from '@mui/icons-material/Forum';
import GitHub from '@mui/icons-material/GitHub';
import Key from '@mui/icons-material/Key';
import QrCode2 from '@mui/icons-material/QrCode2';
import { Alert, Box, Button, Card, CardContent, Divider, Link, Stack, TextField, Typography } from '@mui/material';
import { useState } from 'react';
import { Form, PasswordInput, TextInput, useLogin, useNotify, useTranslate } from 'react-admin';
import { Link as RouterLink, useSearchParams } from 'react-router';
import { type LoginParams, SecondFactorNeeded } from '../../providers/authProvider.ts';
import { api, errorMessage } from '../../providers/http.ts';
import { signInWithPasskey } from '../../providers/passkey.ts';
import type { SessionUser } from '../../providers/session.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import {
  customProviders,
  enabledProviders,
  ProviderIcon,
  type RedirectProvider,
  startOAuth,
  TelegramButton,
  type TelegramFields,
  telegramQuery,
  WeChatDialog,
} from './parts/oauth.tsx';
import { useTurnstile } from './parts/turnstile.tsx';

interface LoginValues {
  username?: string;
  password?: string;
}

/**
 * Sign-in (spec doc 1 §2 "Login screen", §5): username or email and password, the human check when the
 * status turns it on, a button per enabled third-party provider, links to registration and password reset.
 * On success the user is stored, the header rebuilt and the browser goes to /token.
 */
export function LoginPage() {
  const translate = useTranslate();
  const notify = useNotify();
  const login = useLogin();
  const { status } = useStatus();
  const [params] = useSearchParams();
  const [submitting, setSubmitting] = useState(false);
  const [wechatOpen, setWechatOpen] = useState(false);
  /** The validation message of the last submit (spec doc 1 §5), shown in the form. */
  const [problem, setProblem] = useState<string>();
  /** The password passed for a user with two-factor sign-in: the form asks for the code next. */
  const [secondStep, setSecondStep] = useState(params.get('two_factor') === '1');
  const [code, setCode] = useState('');
  const turnstile = useTurnstile();
  const expired = params.get('expired') === 'true';
  const providers = enabledProviders(status);
  const customs = customProviders(status);
  const anyProvider = Object.values(providers).some(Boolean) || customs.length > 0 || status.passkey_login;

  /** Signs in with what the gateway answered (third-party sign-in): store the user, go to /token. */
  const signInAs = async (envelope: { message: string; data?: SessionUser | { require_2fa: true } }) => {
    if (!envelope.data) throw new Error(envelope.message);
    if ('require_2fa' in envelope.data) {
      setSecondStep(true);
      return;
    }
    await login({ user: envelope.data } satisfies LoginParams);
    notify(envelope.message || 'login.success', { type: 'success' });
  };

  const submit = async (values: LoginValues) => {
    if (!values.username || !values.password) {
      setProblem('login.required');
      return;
    }
    if (turnstile.enabled && !turnstile.token) {
      setProblem('login.turnstile_pending');
      return;
    }
    setProblem(undefined);
    setSubmitting(true);
    try {
      const result = (await login({
        username: values.username,
        password: values.password,
        turnstile: turnstile.token,
      } satisfies LoginParams)) as { message?: string } | undefined;
      notify(result?.message || 'login.success', { type: 'success' });
    } catch (error) {
      if (error instanceof SecondFactorNeeded) {
        setSecondStep(true);
        return;
      }
      notify(errorMessage(error), { type: 'error' });
      if (turnstile.enabled) turnstile.reset();
    } finally {
      setSubmitting(false);
    }
  };

  /** The second step: a code of the authenticator app, or a backup code (the pending sign-in is in a cookie). */
  const submitCode = async () => {
    if (code.trim() === '') {
      setProblem('login.two_factor.required');
      return;
    }
    setProblem(undefined);
    setSubmitting(true);
    try {
      const envelope = await api.request<SessionUser>('POST', '/api/user/login/2fa', {
        body: { code: code.trim() },
        expireOn401: false,
      });
      await signInAs(envelope);
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setSubmitting(false);
    }
  };

  /** Passkey sign-in: the authenticator offers the passkey, no password is typed (no second factor either). */
  const passkey = async () => {
    setSubmitting(true);
    setProblem(undefined);
    try {
      await signInAs(await signInWithPasskey());
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setSubmitting(false);
    }
  };

  const redirect = (provider: RedirectProvider) => {
    startOAuth(provider, status).catch((error) => notify(errorMessage(error), { type: 'error' }));
  };

  const telegram = (fields: TelegramFields) => {
    api
      .request<SessionUser | { require_2fa: true }>('GET', '/api/oauth/telegram/login', {
        query: telegramQuery(fields),
        expireOn401: false,
      })
      .then(signInAs)
      .catch((error) => notify(errorMessage(error), { type: 'error' }));
  };

  const wechat = async (code: string) => {
    const envelope = await api.request<SessionUser | { require_2fa: true }>('GET', '/api/oauth/wechat', {
      query: { code },
      expireOn401: false,
    });
    setWechatOpen(false);
    await signInAs(envelope);
  };

  return (
    <Box sx={{ display: 'flex', justifyContent: 'center', py: { xs: 2, sm: 6 } }}>
      <Card sx={{ width: '100%', maxWidth: 420 }} data-testid="login-page">
        <CardContent>
          <Typography variant="h5" component="h1" gutterBottom>
            {translate('login.title')}
          </Typography>
          {expired && (
            <Alert severity="warning" sx={{ mb: 2 }} data-testid="login-expired">
              {translate('login.expired')}
            </Alert>
          )}
          {secondStep ? (
            <Box
              component="form"
              data-testid="login-two-factor"
              onSubmit={(event) => {
                event.preventDefault();
                void submitCode();
              }}
            >
              <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
                {translate('login.two_factor.hint')}
              </Typography>
              <TextField
                name="two_factor_code"
                label={translate('login.two_factor.code')}
                value={code}
                onChange={(event) => setCode(event.target.value)}
                autoComplete="one-time-code"
                autoFocus
                fullWidth
              />
              {problem && (
                <Alert severity="error" sx={{ my: 1 }} data-testid="form-problem">
                  {translate(problem)}
                </Alert>
              )}
              <Button type="submit" variant="contained" fullWidth disabled={submitting} sx={{ mt: 1 }}>
                {translate('login.two_factor.submit')}
              </Button>
              <Button
                fullWidth
                sx={{ mt: 1 }}
                onClick={() => {
                  setSecondStep(false);
                  setCode('');
                }}
              >
                {translate('login.two_factor.back')}
              </Button>
            </Box>
          ) : (
            <Form onSubmit={(values: object) => submit(values as LoginValues)}>
              <TextInput source="username" label="login.username" autoComplete="username" fullWidth />
              <PasswordInput source="password" label="login.password" autoComplete="current-password" fullWidth />
              {turnstile.widget}
              {problem && (
                <Alert severity="error" sx={{ my: 1 }} data-testid="form-problem">
                  {translate(problem)}
                </Alert>
              )}
              <Button type="submit" variant="contained" fullWidth disabled={submitting} sx={{ mt: 1 }}>
                {translate('login.submit')}
              </Button>
            </Form>
          )}
          <Stack direction="row" sx={{ justifyContent: 'space-between', mt: 2 }}>
            <Link component={RouterLink} to="/reset" variant="body2" data-testid="login-reset-link">
              {translate('login.forgot')}
            </Link>
            {!status.self_use_mode_enabled && (
              <Link component={RouterLink} to="/register" variant="body2" data-testid="login-register-link">
                {translate('login.no_account')}
              </Link>
            )}
          </Stack>
          {anyProvider && (
            <>
              <Divider sx={{ my: 2 }}>{translate('login.or')}</Divider>
              <Stack spacing={1} data-testid="third-party">
                {status.passkey_login && (
                  <Button
                    variant="outlined"
                    startIcon={<Fingerprint />}
                    onClick={passkey}
                    disabled={submitting}
                    data-testid="login-passkey"
                  >
                    {translate('login.with_passkey')}
                  </Button>
                )}
                {providers.github && (
                  <Button variant="outlined" startIcon={<GitHub />} onClick={() => redirect('github')}>
                    {translate('login.with_github')}
                  </Button>
                )}
                {providers.oidc && (
                  <Button variant="outlined" startIcon={<Key />} onClick={() => redirect('oidc')}>
                    {translate('login.with_oidc')}
                  </Button>
                )}
                {providers.linuxdo && (
                  <Button variant="outlined" startIcon={<Forum />} onClick={() => redirect('linuxdo')}>
                    {translate('login.with_linuxdo')}
                  </Button>
                )}
                {providers.discord && (
                  <Button
                    variant="outlined"
                    startIcon={<Chat />}
                    onClick={() => redirect('discord')}
                    data-testid="login-discord"
                  >
                    {translate('login.with_discord')}
                  </Button>
                )}
                {customs.map((provider) => (
                  <Button
                    key={provider.id}
                    variant="outlined"
                    startIcon={<ProviderIcon icon={provider.icon} />}
                    onClick={() => redirect(provider)}
                    data-testid={`login-custom-${provider.slug}`}
                  >
                    {translate('login.with_provider', { name: provider.name })}
                  </Button>
                ))}
                {providers.wechat && (
                  <Button variant="outlined" startIcon={<QrCode2 />} onClick={() => setWechatOpen(true)}>
                    {translate('login.with_wechat')}
                  </Button>
                )}
                {providers.telegram && (
                  <Box sx={{ display: 'flex', justifyContent: 'center' }}>
                    <TelegramButton botName={status.telegram_bot_name} onAuth={telegram} />
                  </Box>
                )}
              </Stack>
            </>
          )}
        </CardContent>
      </Card>
      {providers.wechat && (
        <WeChatDialog
          open={wechatOpen}
          qrcode={status.wechat_qrcode}
          submitLabel={translate('login.submit')}
          onClose={() => setWechatOpen(false)}
          onCode={wechat}
        />
      )}
    </Box>
  );
}
