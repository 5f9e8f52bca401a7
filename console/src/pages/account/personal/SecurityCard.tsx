import {
  Alert,
  Button,
  Card,
  CardContent,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import { useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { useNavigate } from 'react-router';
import { api, errorMessage } from '../../../providers/http.ts';
import { clearStoredUser } from '../../../providers/session.ts';
import type { SelfUser } from './self.ts';

/**
 * Security (spec doc 1 §2, §5): the system access token (generated and copied), the password change
 * (original, new, confirmation) and the deletion of the account (typing the username to confirm).
 */
export function SecurityCard(props: {
  user: SelfUser;
  reload(): Promise<void>;
  copy(text: string, message?: string): Promise<boolean>;
}) {
  const translate = useTranslate();
  const notify = useNotify();
  const [token, setToken] = useState<string>();
  const [passwordOpen, setPasswordOpen] = useState(false);
  const [deleteOpen, setDeleteOpen] = useState(false);

  const generate = async () => {
    try {
      const fresh = await api.get<string>('/api/user/token');
      setToken(fresh);
      await props.copy(fresh, 'personal.token.copied');
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  };

  return (
    <Card data-testid="personal-security">
      <CardContent>
        <Typography variant="subtitle1" sx={{ fontWeight: 600 }} gutterBottom>
          {translate('personal.security_title')}
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
          {translate('personal.token.hint')}
        </Typography>
        {token && (
          <TextField
            size="small"
            label={translate('personal.token.label')}
            value={token}
            fullWidth
            sx={{ mb: 1 }}
            onClick={() => void props.copy(token, 'personal.token.copied')}
            slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'access-token' } }}
          />
        )}
        <Stack direction="row" spacing={1} sx={{ flexWrap: 'wrap', gap: 1 }} useFlexGap>
          <Button variant="outlined" onClick={generate} data-testid="token-generate">
            {translate('personal.token.generate')}
          </Button>
          <Button variant="outlined" onClick={() => setPasswordOpen(true)} data-testid="password-open">
            {translate('personal.password.title')}
          </Button>
          <Button variant="outlined" color="error" onClick={() => setDeleteOpen(true)} data-testid="delete-open">
            {translate('personal.delete.title')}
          </Button>
        </Stack>
      </CardContent>
      {passwordOpen && <PasswordDialog onClose={() => setPasswordOpen(false)} />}
      {deleteOpen && <DeleteDialog username={props.user.username} onClose={() => setDeleteOpen(false)} />}
    </Card>
  );
}

/** The problem with a password change (spec doc 1 §5), as an i18n key and the field it belongs to. */
export function passwordProblem(values: {
  original: string;
  password: string;
  confirm: string;
}): { field: 'original' | 'password' | 'confirm'; message: string } | undefined {
  if (!values.original) return { field: 'original', message: 'personal.password.original_required' };
  if (!values.password) return { field: 'password', message: 'personal.password.new_required' };
  if (values.password === values.original) return { field: 'password', message: 'personal.password.same' };
  if (values.confirm !== values.password) return { field: 'confirm', message: 'personal.password.mismatch' };
  return undefined;
}

function PasswordDialog({ onClose }: { onClose(): void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const [values, setValues] = useState({ original: '', password: '', confirm: '' });
  const [problem, setProblem] = useState<ReturnType<typeof passwordProblem>>();
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    const found = passwordProblem(values);
    setProblem(found);
    if (found) return;
    setBusy(true);
    try {
      const { message } = await api.request('PUT', '/api/user/self', {
        body: { original_password: values.original, password: values.password },
      });
      notify(message || 'personal.password.changed', { type: 'success' });
      onClose();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  const field = (name: keyof typeof values, label: string, autoComplete: string) => (
    <TextField
      type="password"
      label={translate(label)}
      value={values[name]}
      onChange={(event) => setValues({ ...values, [name]: event.target.value })}
      autoComplete={autoComplete}
      error={problem?.field === name}
      helperText={problem?.field === name ? translate(problem.message) : undefined}
      fullWidth
      margin="dense"
      slotProps={{ htmlInput: { 'data-testid': `password-${name}` } }}
    />
  );

  return (
    <Dialog open onClose={onClose} data-testid="password-dialog" maxWidth="xs" fullWidth>
      <DialogTitle>{translate('personal.password.title')}</DialogTitle>
      <DialogContent>
        {field('original', 'personal.password.original', 'current-password')}
        {field('password', 'personal.password.new', 'new-password')}
        {field('confirm', 'personal.password.confirm', 'new-password')}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('common.cancel')}</Button>
        <Button variant="contained" onClick={submit} disabled={busy} data-testid="password-submit">
          {translate('common.confirm')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

function DeleteDialog({ username, onClose }: { username: string; onClose(): void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const navigate = useNavigate();
  const [typed, setTyped] = useState('');
  const [problem, setProblem] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    if (typed.trim() !== username) {
      setProblem(translate('personal.delete.mismatch'));
      return;
    }
    setProblem(undefined);
    setBusy(true);
    try {
      const { message } = await api.request('DELETE', '/api/user/self', { body: { username: typed.trim() } });
      clearStoredUser();
      notify(message || 'personal.delete.done', { type: 'success' });
      navigate('/login');
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
      setBusy(false);
    }
  };

  return (
    <Dialog open onClose={onClose} data-testid="delete-dialog" maxWidth="xs" fullWidth>
      <DialogTitle>{translate('personal.delete.title')}</DialogTitle>
      <DialogContent>
        <Alert severity="error" sx={{ mb: 2 }}>
          {translate('personal.delete.warning')}
        </Alert>
        <TextField
          label={translate('personal.delete.prompt', { username })}
          value={typed}
          onChange={(event) => setTyped(event.target.value)}
          error={problem !== undefined}
          helperText={problem}
          fullWidth
          slotProps={{ htmlInput: { 'data-testid': 'delete-confirm' } }}
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('common.cancel')}</Button>
        <Button variant="contained" color="error" onClick={submit} disabled={busy} data-testid="delete-submit">
          {translate('personal.delete.submit')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
