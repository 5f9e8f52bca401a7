import { Alert, Box, Card, CardContent, CircularProgress, Typography } from '@mui/material';
import { useEffect, useRef, useState } from 'react';
import { useLogin, useNotify, useTranslate } from 'react-admin';
import { useNavigate, useParams, useSearchParams } from 'react-router';
import { type LoginParams, SECOND_STEP_PATH } from '../../providers/authProvider.ts';
import { api, errorMessage } from '../../providers/http.ts';
import { getStoredUser, type SessionUser } from '../../providers/session.ts';

/** How long the failure stays on screen before the redirect. */
const FAILURE_REDIRECT_MS = 1500;

/**
 * The OAuth callback (spec doc 1 §2 "OAuth callback screen"): a processing indicator while code and state
 * go to GET /api/oauth/{provider} (a built-in provider's name or a custom provider's slug). Message `bind`: the provider was bound to the signed-in account, which
 * goes back to its personal settings. Otherwise a sign-in: the user is stored and goes to /token. A failure
 * shows the message and leaves: to the personal settings when signed in (a failed bind), else to /login.
 * The spec's /setting is the original console's settings page, where bindings lived; here that is /personal.
 */
export function OAuthCallbackPage() {
  const provider = useParams().provider ?? '';
  const translate = useTranslate();
  const notify = useNotify();
  const navigate = useNavigate();
  const login = useLogin();
  const [params] = useSearchParams();
  const [failure, setFailure] = useState<string>();
  // The code works once: never call twice, even when React runs the effect twice in development.
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const signedIn = getStoredUser() !== undefined;
    const fail = (message: string) => {
      setFailure(message);
      notify(message, { type: 'error' });
      setTimeout(() => {
        notify(signedIn ? 'oauth.failed_back_to_personal' : 'oauth.failed_redirect', { type: 'warning' });
        navigate(signedIn ? '/personal' : '/login', { replace: true });
      }, FAILURE_REDIRECT_MS);
    };
    const code = params.get('code');
    const state = params.get('state') ?? '';
    if (!code) {
      fail(translate('oauth.missing_code'));
      return;
    }
    api
      .request<SessionUser | { require_2fa: true }>('GET', `/api/oauth/${encodeURIComponent(provider)}`, {
        query: { code, state },
        expireOn401: false,
      })
      .then(async (envelope) => {
        if (envelope.message === 'bind') {
          notify('oauth.bind_success', { type: 'success' });
          navigate('/personal', { replace: true });
          return;
        }
        if (!envelope.data) throw new Error(envelope.message);
        // Two-factor sign-in: the login page asks for the code (the pending sign-in is in a cookie).
        if ('require_2fa' in envelope.data) {
          navigate(SECOND_STEP_PATH, { replace: true });
          return;
        }
        await login({ user: envelope.data } satisfies LoginParams);
        notify(envelope.message || 'login.success', { type: 'success' });
      })
      .catch((error) => fail(errorMessage(error)));
  }, [provider, params, login, navigate, notify, translate]);

  return (
    <Box sx={{ display: 'flex', justifyContent: 'center', py: { xs: 2, sm: 6 } }}>
      <Card sx={{ width: '100%', maxWidth: 420 }} data-testid="oauth-page">
        <CardContent sx={{ textAlign: 'center' }}>
          {failure ? (
            <Alert severity="error" data-testid="oauth-failure" sx={{ textAlign: 'left' }}>
              {failure}
            </Alert>
          ) : (
            <>
              <CircularProgress sx={{ mb: 2 }} />
              <Typography>{translate('oauth.processing')}</Typography>
            </>
          )}
        </CardContent>
      </Card>
    </Box>
  );
}
