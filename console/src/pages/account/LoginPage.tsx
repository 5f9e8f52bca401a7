import { Alert, Box, Button, Card, CardContent, Typography } from '@mui/material';
import { useState } from 'react';
import { Form, PasswordInput, TextInput, useLogin, useNotify, useTranslate } from 'react-admin';
import { useSearchParams } from 'react-router';
import { errorMessage } from '../../providers/http.ts';

interface LoginValues {
  username?: string;
  password?: string;
}

/**
 * Sign-in with username (or email) and password (spec doc 1 §2 "Login screen"): on success the user is
 * stored, the header rebuilt and the browser goes to /token. Still to come with the account pages: the
 * human check, third-party sign-in buttons and the register link.
 */
export function LoginPage() {
  const translate = useTranslate();
  const notify = useNotify();
  const login = useLogin();
  const [params] = useSearchParams();
  const [submitting, setSubmitting] = useState(false);
  const expired = params.get('expired') === 'true';

  const submit = async (values: LoginValues) => {
    if (!values.username || !values.password) {
      notify('login.required', { type: 'error' });
      return;
    }
    setSubmitting(true);
    try {
      const result = (await login({ username: values.username, password: values.password })) as
        | { message?: string }
        | undefined;
      notify(result?.message || 'login.success', { type: 'success' });
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setSubmitting(false);
    }
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
          <Form onSubmit={(values: object) => submit(values as LoginValues)}>
            <TextInput source="username" label="login.username" autoComplete="username" fullWidth />
            <PasswordInput source="password" label="login.password" autoComplete="current-password" fullWidth />
            <Button type="submit" variant="contained" fullWidth disabled={submitting} sx={{ mt: 1 }}>
              {translate('login.submit')}
            </Button>
          </Form>
        </CardContent>
      </Card>
    </Box>
  );
}
