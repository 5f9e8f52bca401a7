import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Typography,
} from '@mui/material';
import { useEffect, useState } from 'react';
import { Form, PasswordInput, RadioButtonGroupInput, TextInput, useNotify, useTranslate } from 'react-admin';
import { useNavigate } from 'react-router';
import { ApiError, api } from '../../providers/http.ts';

/** GET /api/setup (spec doc 1 §3 "Setup status"). */
interface SetupState {
  status: boolean;
  root_init: boolean;
  database_type: string;
}

interface SetupValues {
  username?: string;
  password?: string;
  confirmPassword?: string;
  mode: 'external' | 'self' | 'demo';
}

/** Setup reloads the page this long after success (spec doc 1 §9). */
const RELOAD_DELAY_MS = 1500;
const PASSWORD_MIN_LENGTH = 8;
/** The embedded database (named 'sqlite', as new-api's front ends know it) lives in a folder a container may not keep. */
const EMBEDDED_DATABASE = 'sqlite';

const usernameRequired = (value?: string) => (value?.trim() ? undefined : 'setup.username_required');
const passwordLongEnough = (value?: string) =>
  (value ?? '').length >= PASSWORD_MIN_LENGTH ? undefined : 'setup.password_too_short';
const passwordsMatch = (value: string | undefined, values: SetupValues) =>
  value === values.password ? undefined : 'setup.password_mismatch';

/** First-run setup (spec doc 1 §2 "First-run setup screen", §5 validation, §8 messages). */
export function SetupPage() {
  const translate = useTranslate();
  const notify = useNotify();
  const navigate = useNavigate();
  const [setup, setSetup] = useState<SetupState>();
  const [helpOpen, setHelpOpen] = useState(false);
  const [submitting, setSubmitting] = useState(false);

  useEffect(() => {
    api
      .get<SetupState>('/api/setup')
      .then((state) => {
        if (state.status) navigate('/', { replace: true });
        else setSetup(state);
      })
      .catch(() => notify('status.setup_failed', { type: 'error' }));
  }, [navigate, notify]);

  const submit = async (values: SetupValues | undefined) => {
    // The form hands over its values; without them there is nothing to send (spec doc 1 §5).
    if (!values || typeof values !== 'object') {
      notify('setup.form_error', { type: 'error' });
      return;
    }
    setSubmitting(true);
    try {
      await api.post('/api/setup', {
        ...(setup?.root_init
          ? {}
          : { username: values.username?.trim(), password: values.password, confirmPassword: values.confirmPassword }),
        SelfUseModeEnabled: values.mode === 'self',
        DemoSiteEnabled: values.mode === 'demo',
      });
      notify('setup.success', { type: 'success' });
      setTimeout(() => window.location.reload(), RELOAD_DELAY_MS);
    } catch (error) {
      setSubmitting(false);
      notify(error instanceof ApiError ? error.message || 'setup.failed' : 'setup.network_failed', { type: 'error' });
    }
  };

  return (
    <Box sx={{ display: 'flex', justifyContent: 'center', py: { xs: 2, sm: 6 } }}>
      <Card sx={{ width: '100%', maxWidth: 520 }} data-testid="setup-page">
        <CardContent>
          <Typography variant="h5" component="h1" gutterBottom>
            {translate('setup.title')}
          </Typography>
          {setup?.database_type === EMBEDDED_DATABASE && (
            <Alert severity="warning" sx={{ mb: 2 }} data-testid="setup-database-warning">
              {translate('setup.sqlite_warning')}
            </Alert>
          )}
          <Form
            onSubmit={(values: object) => submit(values as SetupValues | undefined)}
            defaultValues={{ mode: 'external' }}
          >
            {setup?.root_init ? (
              <Alert severity="info" sx={{ mb: 2 }}>
                {translate('setup.root_initialized')}
              </Alert>
            ) : (
              <>
                <Typography variant="subtitle2" color="text.secondary">
                  {translate('setup.admin')}
                </Typography>
                <TextInput source="username" label="setup.username" validate={usernameRequired} fullWidth />
                <PasswordInput source="password" label="setup.password" validate={passwordLongEnough} fullWidth />
                <PasswordInput
                  source="confirmPassword"
                  label="setup.confirm_password"
                  validate={passwordsMatch}
                  fullWidth
                />
              </>
            )}
            <Box sx={{ display: 'flex', alignItems: 'center', gap: 1 }}>
              <RadioButtonGroupInput
                source="mode"
                label="setup.usage_mode"
                choices={[
                  { id: 'external', name: 'setup.mode_external' },
                  { id: 'self', name: 'setup.mode_self' },
                  { id: 'demo', name: 'setup.mode_demo' },
                ]}
              />
              <Button size="small" onClick={() => setHelpOpen(true)}>
                {translate('setup.mode_help')}
              </Button>
            </Box>
            <Button type="submit" variant="contained" fullWidth disabled={submitting || !setup} sx={{ mt: 1 }}>
              {translate('setup.submit')}
            </Button>
          </Form>
        </CardContent>
      </Card>
      <Dialog open={helpOpen} onClose={() => setHelpOpen(false)}>
        <DialogTitle>{translate('setup.mode_help')}</DialogTitle>
        <DialogContent>
          <Typography sx={{ mb: 2 }}>{translate('setup.mode_help_external')}</Typography>
          <Typography sx={{ mb: 2 }}>{translate('setup.mode_help_self')}</Typography>
          <Typography>{translate('setup.mode_help_demo')}</Typography>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setHelpOpen(false)}>{translate('common.close')}</Button>
        </DialogActions>
      </Dialog>
    </Box>
  );
}
