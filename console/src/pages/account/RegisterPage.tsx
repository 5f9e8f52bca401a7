import { Alert, Box, Button, Card, CardContent, InputAdornment, Link, Stack, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import { Form, PasswordInput, TextInput, useNotify, useTranslate } from 'react-admin';
import { useFormContext } from 'react-hook-form';
import { Link as RouterLink, useNavigate, useSearchParams } from 'react-router';
import { api, errorMessage } from '../../providers/http.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { useCountdown } from './parts/countdown.ts';
import { storeAffCode, storedAffCode } from './parts/oauth.tsx';
import { useTurnstile } from './parts/turnstile.tsx';

interface RegisterValues {
  username?: string;
  password?: string;
  password2?: string;
  email?: string;
  verification_code?: string;
}

/** Spec doc 1 §5 and §9: username up to 12 characters, password 8 to 20. */
export const USERNAME_MAX_LENGTH = 12;
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 20;

/** The messages of spec doc 1 §5 for registration, in the order the rules are checked. */
export function registrationProblem(values: RegisterValues, emailVerification: boolean): string | undefined {
  const username = values.username?.trim() ?? '';
  const password = values.password ?? '';
  if (!username || !password) return 'register.required';
  if ([...username].length > USERNAME_MAX_LENGTH) return 'register.username_too_long';
  if ([...password].length < PASSWORD_MIN_LENGTH) return 'register.password_too_short';
  if ([...password].length > PASSWORD_MAX_LENGTH) return 'register.password_too_long';
  if (password !== (values.password2 ?? '')) return 'register.password_mismatch';
  if (emailVerification && (!values.email?.trim() || !values.verification_code?.trim())) {
    return 'register.email_code_required';
  }
  return undefined;
}

/**
 * Registration (spec doc 1 §2 "Register screen"): username, password twice; email and a mailed code when
 * email verification is on (30 s resend lock); the invitation code from ?aff= or the stored one; the human
 * check. Success goes to /login with the server's message.
 */
export function RegisterPage() {
  const translate = useTranslate();
  const notify = useNotify();
  const navigate = useNavigate();
  const { status } = useStatus();
  const [params] = useSearchParams();
  const turnstile = useTurnstile();
  const [submitting, setSubmitting] = useState(false);
  /** The validation message of the last submit (spec doc 1 §5), shown in the form. */
  const [problem, setProblem] = useState<string>();
  const queryAff = params.get('aff') ?? '';

  useEffect(() => {
    if (queryAff) storeAffCode(queryAff);
  }, [queryAff]);

  const submit = async (values: RegisterValues) => {
    const found = registrationProblem(values, status.email_verification);
    if (found) {
      setProblem(found);
      return;
    }
    if (turnstile.enabled && !turnstile.token) {
      setProblem('login.turnstile_pending');
      return;
    }
    setProblem(undefined);
    setSubmitting(true);
    try {
      const { message } = await api.request('POST', '/api/user/register', {
        query: { turnstile: turnstile.token },
        body: {
          username: values.username?.trim(),
          password: values.password,
          password2: values.password2,
          email: status.email_verification ? values.email?.trim() : undefined,
          verification_code: status.email_verification ? values.verification_code?.trim() : undefined,
          aff_code: queryAff || storedAffCode() || undefined,
        },
        expireOn401: false,
      });
      notify(message || 'register.success', { type: 'success' });
      navigate('/login');
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
      if (turnstile.enabled) turnstile.reset();
    } finally {
      setSubmitting(false);
    }
  };

  return (
    <Box sx={{ display: 'flex', justifyContent: 'center', py: { xs: 2, sm: 6 } }}>
      <Card sx={{ width: '100%', maxWidth: 420 }} data-testid="register-page">
        <CardContent>
          <Typography variant="h5" component="h1" gutterBottom>
            {translate('register.title')}
          </Typography>
          <Form onSubmit={(values: object) => submit(values as RegisterValues)}>
            <TextInput
              source="username"
              label="register.username"
              helperText="register.username_hint"
              autoComplete="username"
              fullWidth
            />
            <PasswordInput
              source="password"
              label="register.password"
              helperText="register.password_hint"
              autoComplete="new-password"
              fullWidth
            />
            <PasswordInput source="password2" label="register.password2" autoComplete="new-password" fullWidth />
            {status.email_verification && <EmailCodeFields turnstile={turnstile} onProblem={setProblem} />}
            {turnstile.widget}
            {problem && (
              <Alert severity="error" sx={{ my: 1 }} data-testid="form-problem">
                {translate(problem, { max: USERNAME_MAX_LENGTH })}
              </Alert>
            )}
            <Button type="submit" variant="contained" fullWidth disabled={submitting} sx={{ mt: 1 }}>
              {translate('register.submit')}
            </Button>
          </Form>
          <Stack direction="row" sx={{ justifyContent: 'flex-end', mt: 2 }}>
            <Link component={RouterLink} to="/login" variant="body2" data-testid="register-login-link">
              {translate('register.have_account')}
            </Link>
          </Stack>
        </CardContent>
      </Card>
    </Box>
  );
}

/** Email and code, with the send-code button and its 30 s lock (spec doc 1 §2, §9). */
function EmailCodeFields(props: {
  turnstile: ReturnType<typeof useTurnstile>;
  onProblem(problem: string | undefined): void;
}) {
  const { turnstile, onProblem } = props;
  const translate = useTranslate();
  const notify = useNotify();
  const form = useFormContext<RegisterValues>();
  const lock = useCountdown();
  const [sending, setSending] = useState(false);

  const send = async () => {
    const email = form.getValues('email')?.trim();
    if (!email) {
      onProblem('register.email_required');
      return;
    }
    if (turnstile.enabled && !turnstile.token) {
      onProblem('login.turnstile_pending');
      return;
    }
    onProblem(undefined);
    setSending(true);
    try {
      const { message } = await api.request('GET', '/api/verification', {
        query: { email, turnstile: turnstile.token },
        expireOn401: false,
      });
      lock.start();
      notify(message || 'register.code_sent', { type: 'success' });
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setSending(false);
      if (turnstile.enabled) turnstile.reset();
    }
  };

  return (
    <>
      <TextInput
        source="email"
        type="email"
        label="register.email"
        autoComplete="email"
        fullWidth
        slotProps={{
          input: {
            endAdornment: (
              <InputAdornment position="end">
                <Button
                  size="small"
                  onClick={send}
                  disabled={sending || lock.remaining > 0}
                  data-testid="send-code"
                  sx={{ whiteSpace: 'nowrap' }}
                >
                  {lock.remaining > 0
                    ? translate('register.resend_in', { seconds: lock.remaining })
                    : translate('register.send_code')}
                </Button>
              </InputAdornment>
            ),
          },
        }}
      />
      <TextInput source="verification_code" label="register.verification_code" fullWidth />
    </>
  );
}
