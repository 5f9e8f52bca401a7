import Add from '@mui/icons-material/Add';
import {
  Alert,
  Box,
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  FormControlLabel,
  MenuItem,
  Paper,
  Stack,
  Switch,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  TextField,
  Typography,
} from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { api, errorMessage } from '../../providers/http.ts';
import { useConfirm } from '../../resources/admin-shared.tsx';
import { useStatus } from '../../status/StatusContext.tsx';
import { siteAddress } from '../account/parts/oauth.tsx';

/** A provider as GET /api/custom-oauth-provider/ answers it (never with its client secret). */
interface Provider {
  id: number;
  name: string;
  slug: string;
  icon: string;
  enabled: boolean;
  client_id: string;
  authorization_endpoint: string;
  token_endpoint: string;
  user_info_endpoint: string;
  scopes: string;
  user_id_field: string;
  username_field: string;
  display_name_field: string;
  email_field: string;
  well_known: string;
  auth_style: number;
}

type Draft = Omit<Provider, 'id'> & { client_secret: string };

const EMPTY: Draft = {
  name: '',
  slug: '',
  icon: '',
  enabled: true,
  client_id: '',
  client_secret: '',
  authorization_endpoint: '',
  token_endpoint: '',
  user_info_endpoint: '',
  scopes: 'openid profile email',
  user_id_field: 'sub',
  username_field: 'preferred_username',
  display_name_field: 'name',
  email_field: 'email',
  well_known: '',
  auth_style: 0,
};

/** The form's text fields, in order, with their label keys. */
const TEXT_FIELDS: Array<[keyof Draft, string]> = [
  ['name', 'settings.custom_oauth.name'],
  ['slug', 'settings.custom_oauth.slug'],
  ['icon', 'settings.custom_oauth.icon'],
  ['client_id', 'settings.fields.client_id'],
  ['client_secret', 'settings.fields.client_secret'],
  ['authorization_endpoint', 'settings.custom_oauth.authorization_endpoint'],
  ['token_endpoint', 'settings.custom_oauth.token_endpoint'],
  ['user_info_endpoint', 'settings.custom_oauth.user_info_endpoint'],
  ['scopes', 'settings.custom_oauth.scopes'],
  ['user_id_field', 'settings.custom_oauth.user_id_field'],
  ['username_field', 'settings.custom_oauth.username_field'],
  ['display_name_field', 'settings.custom_oauth.display_name_field'],
  ['email_field', 'settings.custom_oauth.email_field'],
  ['well_known', 'settings.custom_oauth.well_known'],
];

const AUTH_STYLES = [
  [0, 'settings.custom_oauth.auth_style_auto'],
  [1, 'settings.custom_oauth.auth_style_form'],
  [2, 'settings.custom_oauth.auth_style_basic'],
] as const;

/**
 * Custom OAuth 2 / OIDC providers (root, /api/custom-oauth-provider): a list with an on/off switch, a
 * form to create or edit one (the secret is write-only: empty keeps it) whose Discover button fills the
 * endpoints from an issuer, and delete (refused by the gateway while users are bound).
 */
export function CustomOAuthProviders() {
  const translate = useTranslate();
  const notify = useNotify();
  const { ask, dialog } = useConfirm();
  const { status, refresh: refreshStatus } = useStatus();
  const [providers, setProviders] = useState<Provider[]>([]);
  const [editing, setEditing] = useState<{ id?: number; draft: Draft }>();

  const load = useCallback(async () => {
    try {
      setProviders(await api.get<Provider[]>('/api/custom-oauth-provider/'));
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  }, [notify]);
  useEffect(() => {
    void load();
  }, [load]);

  const changed = async () => {
    await load();
    await refreshStatus();
  };
  const toggle = async (provider: Provider) => {
    try {
      await api.put(`/api/custom-oauth-provider/${provider.id}`, { enabled: !provider.enabled });
      await changed();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  };
  const remove = (provider: Provider) =>
    ask({
      title: 'settings.custom_oauth.delete_title',
      content: 'settings.custom_oauth.delete_confirm',
      values: { name: provider.name },
      danger: true,
      onConfirm: async () => {
        try {
          const { message } = await api.request('DELETE', `/api/custom-oauth-provider/${provider.id}`);
          notify(message || 'settings.custom_oauth.deleted', { type: 'success' });
          await changed();
        } catch (error) {
          notify(errorMessage(error), { type: 'error' });
        }
      },
    });

  return (
    <Paper variant="outlined" sx={{ p: 2, mb: 2 }} data-testid="custom-oauth">
      <Stack direction="row" sx={{ alignItems: 'center', mb: 1 }}>
        <Typography variant="subtitle1" sx={{ fontWeight: 600, flex: 1 }}>
          {translate('settings.custom_oauth.title')}
        </Typography>
        <Button
          startIcon={<Add />}
          variant="outlined"
          onClick={() => setEditing({ draft: EMPTY })}
          data-testid="custom-oauth-add"
        >
          {translate('settings.custom_oauth.add')}
        </Button>
      </Stack>
      <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
        {translate('settings.custom_oauth.help', { server: siteAddress(status) })}
      </Typography>
      {providers.length === 0 ? (
        <Alert severity="info">{translate('settings.custom_oauth.empty')}</Alert>
      ) : (
        <Table size="small">
          <TableHead>
            <TableRow>
              <TableCell>{translate('settings.custom_oauth.name')}</TableCell>
              <TableCell>{translate('settings.custom_oauth.slug')}</TableCell>
              <TableCell>{translate('settings.custom_oauth.enabled')}</TableCell>
              <TableCell />
            </TableRow>
          </TableHead>
          <TableBody>
            {providers.map((provider) => (
              <TableRow key={provider.id} data-testid={`custom-oauth-row-${provider.slug}`}>
                <TableCell>{provider.name}</TableCell>
                <TableCell>{provider.slug}</TableCell>
                <TableCell>
                  <Switch
                    checked={provider.enabled}
                    onChange={() => void toggle(provider)}
                    slotProps={{ input: { 'data-testid': `custom-oauth-enabled-${provider.slug}` } as object }}
                  />
                </TableCell>
                <TableCell align="right">
                  <Button
                    size="small"
                    onClick={() => {
                      const { id, ...rest } = provider;
                      setEditing({ id, draft: { ...rest, client_secret: '' } });
                    }}
                    data-testid={`custom-oauth-edit-${provider.slug}`}
                  >
                    {translate('ra.action.edit')}
                  </Button>
                  <Button
                    size="small"
                    color="error"
                    onClick={() => remove(provider)}
                    data-testid={`custom-oauth-delete-${provider.slug}`}
                  >
                    {translate('ra.action.delete')}
                  </Button>
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      )}
      {editing && (
        <ProviderDialog
          id={editing.id}
          initial={editing.draft}
          onClose={() => setEditing(undefined)}
          onSaved={async () => {
            setEditing(undefined);
            await changed();
          }}
        />
      )}
      {dialog}
    </Paper>
  );
}

/** Discovery's answer: the OpenID configuration the issuer published. */
interface Discovery {
  well_known_url: string;
  discovery: Record<string, unknown>;
}

function ProviderDialog(props: { id?: number | undefined; initial: Draft; onClose(): void; onSaved(): Promise<void> }) {
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const [draft, setDraft] = useState<Draft>(props.initial);
  const [issuer, setIssuer] = useState('');
  const [busy, setBusy] = useState(false);
  const set = (key: keyof Draft, value: string | number | boolean) => setDraft((d) => ({ ...d, [key]: value }));

  const discover = async () => {
    setBusy(true);
    try {
      const { discovery, well_known_url } = await api.post<Discovery>('/api/custom-oauth-provider/discovery', {
        issuer_url: issuer,
      });
      const text = (key: string) => (typeof discovery[key] === 'string' ? (discovery[key] as string) : '');
      const supported = Array.isArray(discovery.scopes_supported) ? discovery.scopes_supported : [];
      const scopes = ['openid', 'profile', 'email'].filter((scope) => supported.includes(scope));
      setDraft((d) => ({
        ...d,
        well_known: well_known_url,
        authorization_endpoint: text('authorization_endpoint') || d.authorization_endpoint,
        token_endpoint: text('token_endpoint') || d.token_endpoint,
        user_info_endpoint: text('userinfo_endpoint') || d.user_info_endpoint,
        scopes: scopes.length > 0 ? scopes.join(' ') : d.scopes,
      }));
      notify('settings.custom_oauth.discovered', { type: 'success' });
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  const save = async () => {
    setBusy(true);
    try {
      const { message } =
        props.id === undefined
          ? await api.request('POST', '/api/custom-oauth-provider/', { body: draft })
          : await api.request('PUT', `/api/custom-oauth-provider/${props.id}`, { body: draft });
      notify(message || 'settings.custom_oauth.saved', { type: 'success' });
      await props.onSaved();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog open onClose={props.onClose} maxWidth="sm" fullWidth data-testid="custom-oauth-dialog">
      <DialogTitle>
        {translate(props.id === undefined ? 'settings.custom_oauth.create_title' : 'settings.custom_oauth.edit_title')}
      </DialogTitle>
      <DialogContent>
        <Stack direction="row" spacing={1} sx={{ alignItems: 'center', mt: 1 }}>
          <TextField
            label={translate('settings.custom_oauth.issuer')}
            value={issuer}
            onChange={(event) => setIssuer(event.target.value)}
            size="small"
            fullWidth
            slotProps={{ htmlInput: { 'data-testid': 'custom-oauth-issuer' } }}
          />
          <Button onClick={discover} disabled={busy || !issuer.trim()} data-testid="custom-oauth-discover">
            {translate('settings.custom_oauth.discover')}
          </Button>
        </Stack>
        <Stack spacing={1.5} sx={{ mt: 2 }}>
          {TEXT_FIELDS.map(([key, label]) => (
            <TextField
              key={key}
              label={translate(label)}
              value={draft[key]}
              onChange={(event) => set(key, event.target.value)}
              size="small"
              type={key === 'client_secret' ? 'password' : 'text'}
              helperText={
                key === 'client_secret' && props.id !== undefined
                  ? translate('settings.custom_oauth.secret_keep')
                  : key === 'slug' && draft.slug
                    ? translate('settings.custom_oauth.callback', {
                        url: `${siteAddress(status)}/oauth/${draft.slug}`,
                      })
                    : undefined
              }
              slotProps={{ htmlInput: { 'data-testid': `custom-oauth-field-${key}` } }}
            />
          ))}
          <TextField
            select
            label={translate('settings.custom_oauth.auth_style')}
            value={draft.auth_style}
            onChange={(event) => set('auth_style', Number(event.target.value))}
            size="small"
          >
            {AUTH_STYLES.map(([value, label]) => (
              <MenuItem key={value} value={value}>
                {translate(label)}
              </MenuItem>
            ))}
          </TextField>
          <Box>
            <FormControlLabel
              control={
                <Switch
                  checked={draft.enabled}
                  onChange={(event) => set('enabled', event.target.checked)}
                  slotProps={{ input: { 'data-testid': 'custom-oauth-field-enabled' } as object }}
                />
              }
              label={translate('settings.custom_oauth.enabled')}
            />
          </Box>
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={props.onClose}>{translate('common.cancel')}</Button>
        <Button variant="contained" onClick={save} disabled={busy} data-testid="custom-oauth-save">
          {translate('ra.action.save')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
