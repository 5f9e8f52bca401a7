import Close from '@mui/icons-material/Close';
import MoreVert from '@mui/icons-material/MoreVert';
import PersonAdd from '@mui/icons-material/PersonAdd';
import {
  Alert,
  Box,
  Button,
  Chip,
  CircularProgress,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Divider,
  Drawer,
  IconButton,
  InputAdornment,
  Menu,
  MenuItem,
  Stack,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import { type ReactNode, useCallback, useEffect, useState } from 'react';
import {
  Datagrid,
  FunctionField,
  List,
  TextField as RaTextField,
  SelectInput,
  type SelectInputProps,
  TopToolbar,
  useNotify,
  useRefresh,
  useTranslate,
} from 'react-admin';
import { useNavigate, useParams } from 'react-router';
import { formatQuota } from '../../format/quota.ts';
import { withStepUp } from '../../layout/StepUpDialog.tsx';
import { api, errorMessage } from '../../providers/http.ts';
import { getStoredUser, storeUser, useSessionUser } from '../../providers/session.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import {
  AdminOnly,
  PAGE_SX,
  RememberedPagination,
  rememberedPageSize,
  SearchFilter,
  useConfirm,
} from '../admin-shared.tsx';
import { PeriodLimitTextFields } from '../periods/PeriodLimits.tsx';
import { invalidPeriodLimits, periodLimitBody, periodLimitValues, type WithPeriodLimits } from '../periods/periods.ts';
import { RateLimitsEditor } from '../rate-limits/RateLimitsEditor.tsx';
import { limitsOf, type RateLimitRow, rateRowsProblem, rowsOf } from '../rate-limits/rate-limits.ts';
import {
  addQuota,
  type ManageAction,
  type ManagedUser,
  rowActions,
  USER_ROLE,
  USER_STATUS,
  type UserFormValues,
  validateEditUser,
  validateNewUser,
} from './form.ts';
import { UserSessions } from './UserSessions.tsx';

function GroupFilter(props: Omit<SelectInputProps, 'choices'>) {
  const [groups, setGroups] = useState<string[]>([]);
  useEffect(() => {
    api
      .get<string[]>('/api/group/')
      .then((list) => setGroups(list ?? []))
      .catch(() => {});
  }, []);
  return <SelectInput {...props} choices={groups.map((group) => ({ id: group, name: group }))} />;
}

const filters = [
  <SearchFilter key="q" source="q" alwaysOn placeholder="user_admin.search" />,
  <GroupFilter key="group" source="group" label="user_admin.fields.group" alwaysOn emptyText="user_admin.all_groups" />,
];

/** /user: the user management screen (spec doc 1 §2 "User management screen", §4 row actions). */
export function UserList() {
  return <UserManagement />;
}

/** /user/edit/:id: the list with the edit drawer open; /user/edit: the signed-in administrator's own. */
export function UserEditPage() {
  const { id } = useParams();
  const target = id === undefined ? 'self' : Number(id);
  return (
    <AdminOnly>
      <UserManagement drawer={target === 'self' || (Number.isSafeInteger(target) && target > 0) ? target : undefined} />
    </AdminOnly>
  );
}

function UserManagement({ drawer }: { drawer?: number | 'self' }) {
  const navigate = useNavigate();
  const [adding, setAdding] = useState(false);
  return (
    <Box data-testid="user-page" sx={PAGE_SX}>
      <List
        resource="user"
        title="user_admin.title"
        filters={filters}
        empty={false}
        perPage={rememberedPageSize()}
        pagination={<RememberedPagination />}
        sort={{ field: 'id', order: 'DESC' }}
        actions={<Actions onAdd={() => setAdding(true)} />}
        disableSyncWithLocation={drawer !== undefined}
      >
        <UserGrid />
      </List>
      {adding && <AddUserDrawer onClose={() => setAdding(false)} />}
      {drawer !== undefined && <EditUserDrawer target={drawer} onClose={() => navigate('/user')} />}
    </Box>
  );
}

function Actions({ onAdd }: { onAdd: () => void }) {
  const translate = useTranslate();
  const navigate = useNavigate();
  return (
    <TopToolbar>
      <Button onClick={() => navigate('/user/edit')} data-testid="user-edit-self">
        {translate('user_admin.actions.edit_self')}
      </Button>
      <Button variant="contained" startIcon={<PersonAdd />} onClick={onAdd} data-testid="user-add">
        {translate('user_admin.actions.add')}
      </Button>
    </TopToolbar>
  );
}

const CONFIRM: Record<ManageAction, { title: string; content: string; danger?: boolean }> = {
  promote: { title: 'user_admin.confirm.promote_title', content: 'user_admin.confirm.promote' },
  demote: { title: 'user_admin.confirm.demote_title', content: 'user_admin.confirm.demote' },
  disable: { title: 'user_admin.confirm.disable_title', content: 'user_admin.confirm.disable', danger: true },
  enable: { title: 'user_admin.confirm.enable_title', content: 'user_admin.confirm.enable' },
  delete: { title: 'user_admin.confirm.delete_title', content: 'user_admin.confirm.delete', danger: true },
};

const ACTION_LABEL: Record<ManageAction | 'edit', string> = {
  promote: 'user_admin.actions.promote',
  demote: 'user_admin.actions.demote',
  disable: 'user_admin.actions.disable',
  enable: 'user_admin.actions.enable',
  delete: 'user_admin.actions.delete',
  edit: 'user_admin.actions.edit',
};

function UserGrid() {
  const translate = useTranslate();
  const notify = useNotify();
  const refresh = useRefresh();
  const navigate = useNavigate();
  const viewer = useSessionUser();
  const { status } = useStatus();
  const { ask, dialog } = useConfirm();

  const manage = (user: ManagedUser, action: ManageAction) =>
    ask({
      ...CONFIRM[action],
      values: { name: user.username },
      onConfirm: async () => {
        try {
          const envelope = await api.request<{ status: number; role: number }>('POST', '/api/user/manage', {
            body: { id: user.id, action },
          });
          notify(envelope.message || 'user_admin.messages.done', { type: 'success' });
          refresh();
        } catch (error) {
          notify(errorMessage(error), { type: 'error' });
        }
      },
    });

  /** An administrator removes a lower-ranked user's second factor (lost phone, no backup codes). */
  const resetTwoFactor = (user: ManagedUser) =>
    ask({
      title: 'user_admin.confirm.reset_2fa_title',
      content: 'user_admin.confirm.reset_2fa',
      danger: true,
      values: { name: user.username },
      onConfirm: async () => {
        try {
          const envelope = await api.request('DELETE', `/api/user/${user.id}/2fa`);
          notify(envelope.message || 'user_admin.messages.done', { type: 'success' });
        } catch (error) {
          notify(errorMessage(error), { type: 'error' });
        }
      },
    });

  /** An administrator removes a lower-ranked user's passkey (a lost device). */
  const resetPasskey = (user: ManagedUser) =>
    ask({
      title: 'user_admin.confirm.reset_passkey_title',
      content: 'user_admin.confirm.reset_passkey',
      danger: true,
      values: { name: user.username },
      onConfirm: async () => {
        try {
          const envelope = await api.request('DELETE', `/api/user/${user.id}/reset_passkey`);
          notify(envelope.message || 'user_admin.messages.done', { type: 'success' });
        } catch (error) {
          notify(errorMessage(error), { type: 'error' });
        }
      },
    });

  return (
    <>
      {/* A narrow window scrolls the table, not the page. */}
      <Box sx={{ overflowX: 'auto', width: '100%', contain: 'inline-size' }}>
        <Datagrid bulkActionButtons={false} rowClick={false}>
          <RaTextField source="id" label="user_admin.fields.id" />
          <FunctionField<ManagedUser>
            label="user_admin.fields.username"
            sortBy="username"
            render={(user) => (
              <Tooltip title={user.remark || ''}>
                <Box>
                  <Typography variant="body2" data-testid="user-name-cell">
                    {user.username}
                  </Typography>
                  {user.display_name && user.display_name !== user.username && (
                    <Typography variant="caption" color="text.secondary">
                      {user.display_name}
                    </Typography>
                  )}
                </Box>
              </Tooltip>
            )}
          />
          <FunctionField<ManagedUser>
            label="user_admin.fields.group"
            render={(user) => <Chip size="small" label={user.group || 'default'} />}
          />
          <FunctionField<ManagedUser>
            label="user_admin.fields.quota"
            sortBy="quota"
            render={(user) => (
              <Stack direction="row" spacing={0.5}>
                <Tooltip title={translate('user_admin.fields.remaining')}>
                  <Chip size="small" color="success" variant="outlined" label={formatQuota(user.quota, status)} />
                </Tooltip>
                <Tooltip title={translate('user_admin.fields.used')}>
                  <Chip size="small" variant="outlined" label={formatQuota(user.used_quota, status)} />
                </Tooltip>
                <Tooltip title={translate('user_admin.fields.requests')}>
                  <Chip size="small" variant="outlined" label={user.request_count} />
                </Tooltip>
              </Stack>
            )}
          />
          <FunctionField<ManagedUser>
            label="user_admin.fields.invite"
            render={(user) => (
              <Tooltip
                title={translate('user_admin.invite_summary', {
                  count: user.aff_count,
                  quota: formatQuota(user.aff_history_quota, status),
                  inviter: user.inviter_id || '-',
                })}
              >
                <Stack direction="row" spacing={0.5}>
                  <Chip size="small" variant="outlined" label={user.aff_count} />
                  <Chip size="small" variant="outlined" label={formatQuota(user.aff_history_quota, status)} />
                </Stack>
              </Tooltip>
            )}
          />
          <FunctionField<ManagedUser> label="user_admin.fields.role" render={(user) => <RoleChip role={user.role} />} />
          <FunctionField<ManagedUser>
            label="user_admin.fields.status"
            render={(user) => <UserStatusChip user={user} />}
          />
          <FunctionField<ManagedUser>
            label="user_admin.fields.actions"
            textAlign="right"
            render={(user) => (
              <Stack direction="row" spacing={0.5} sx={{ justifyContent: 'flex-end' }} data-user={user.username}>
                {rowActions(user, viewer?.role ?? 0, user.id === viewer?.id).map(({ action, disabled }) => (
                  <Button
                    key={action}
                    size="small"
                    disabled={disabled}
                    color={action === 'delete' || action === 'disable' ? 'error' : 'primary'}
                    data-testid={`user-${action}`}
                    onClick={() =>
                      action === 'edit'
                        ? navigate(user.id === viewer?.id ? '/user/edit' : `/user/edit/${user.id}`)
                        : manage(user, action)
                    }
                  >
                    {translate(ACTION_LABEL[action])}
                  </Button>
                ))}
                {(viewer?.role ?? 0) > user.role && (
                  <SecurityResets
                    onResetTwoFactor={() => resetTwoFactor(user)}
                    onResetPasskey={() => resetPasskey(user)}
                  />
                )}
              </Stack>
            )}
          />
        </Datagrid>
      </Box>
      {dialog}
    </>
  );
}

/** The rarer resets of a user's sign-in factors (a lost phone or device), behind one menu button. */
function SecurityResets({
  onResetTwoFactor,
  onResetPasskey,
}: {
  onResetTwoFactor: () => void;
  onResetPasskey: () => void;
}) {
  const translate = useTranslate();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const pick = (action: () => void) => () => {
    setAnchor(null);
    action();
  };
  return (
    <>
      <IconButton
        size="small"
        aria-label={translate('user_admin.actions.security')}
        title={translate('user_admin.actions.security')}
        data-testid="user-security-menu"
        onClick={(event) => setAnchor(event.currentTarget)}
      >
        <MoreVert fontSize="small" />
      </IconButton>
      <Menu anchorEl={anchor} open={anchor !== null} onClose={() => setAnchor(null)}>
        <MenuItem data-testid="user-reset-2fa" onClick={pick(onResetTwoFactor)}>
          {translate('user_admin.actions.reset_2fa')}
        </MenuItem>
        <MenuItem data-testid="user-reset-passkey" onClick={pick(onResetPasskey)}>
          {translate('user_admin.actions.reset_passkey')}
        </MenuItem>
      </Menu>
    </>
  );
}

function RoleChip({ role }: { role: number }) {
  const translate = useTranslate();
  if (role === USER_ROLE.user) return <Chip size="small" label={translate('user_admin.role.user')} />;
  if (role === USER_ROLE.admin) return <Chip size="small" color="warning" label={translate('user_admin.role.admin')} />;
  if (role === USER_ROLE.root) return <Chip size="small" color="error" label={translate('user_admin.role.root')} />;
  return <Chip size="small" label={translate('user_admin.role.unknown')} />;
}

function UserStatusChip({ user }: { user: ManagedUser }) {
  const translate = useTranslate();
  if (user.DeletedAt) return <Chip size="small" label={translate('user_admin.status.deleted')} />;
  if (user.status === USER_STATUS.enabled) {
    return <Chip size="small" color="success" label={translate('user_admin.status.enabled')} />;
  }
  if (user.status === USER_STATUS.banned) {
    return <Chip size="small" color="error" label={translate('user_admin.status.banned')} />;
  }
  return <Chip size="small" label={translate('user_admin.status.unknown')} />;
}

function DrawerFrame({
  title,
  testId,
  onClose,
  onSubmit,
  busy,
  children,
}: {
  title: string;
  testId: string;
  onClose: () => void;
  onSubmit: () => void;
  busy: boolean;
  children: ReactNode;
}) {
  const translate = useTranslate();
  return (
    <Drawer
      anchor="right"
      open
      onClose={onClose}
      slotProps={{ paper: { sx: { width: { xs: '100%', sm: 480 } } } }}
      data-testid={testId}
    >
      <Box sx={{ display: 'flex', alignItems: 'center', px: 2, py: 1.5 }}>
        <Typography variant="h6" sx={{ flex: 1 }}>
          {translate(title)}
        </Typography>
        <IconButton onClick={onClose} aria-label={translate('common.close')}>
          <Close />
        </IconButton>
      </Box>
      <Stack spacing={2} sx={{ px: 2, pb: 2, flex: 1, overflowY: 'auto' }}>
        {children}
      </Stack>
      <Box sx={{ display: 'flex', gap: 1, justifyContent: 'flex-end', p: 2, borderTop: 1, borderColor: 'divider' }}>
        <Button onClick={onClose}>{translate('common.cancel')}</Button>
        <Button variant="contained" onClick={onSubmit} disabled={busy} data-testid="user-submit">
          {translate('user_admin.form.submit')}
        </Button>
      </Box>
    </Drawer>
  );
}

/** The add-user drawer (spec doc 1 §5 "Add user"): username, display name, password. */
function AddUserDrawer({ onClose }: { onClose: () => void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const refresh = useRefresh();
  const [values, setValues] = useState({ username: '', display_name: '', password: '' });
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    const problem = validateNewUser(values);
    if (problem) {
      notify(problem, { type: 'error' });
      return;
    }
    setBusy(true);
    try {
      const envelope = await api.request('POST', '/api/user/', {
        body: { username: values.username.trim(), display_name: values.display_name.trim(), password: values.password },
      });
      notify(envelope.message || 'user_admin.messages.created', { type: 'success' });
      refresh();
      onClose();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };
  return (
    <DrawerFrame
      title="user_admin.form.add_title"
      testId="user-add-drawer"
      onClose={onClose}
      onSubmit={submit}
      busy={busy}
    >
      <TextField
        label={translate('user_admin.fields.username')}
        value={values.username}
        onChange={(event) => setValues({ ...values, username: event.target.value })}
        required
        slotProps={{ htmlInput: { 'data-testid': 'user-username' } }}
      />
      <TextField
        label={translate('user_admin.fields.display_name')}
        value={values.display_name}
        onChange={(event) => setValues({ ...values, display_name: event.target.value })}
        slotProps={{ htmlInput: { 'data-testid': 'user-display_name' } }}
      />
      <TextField
        label={translate('user_admin.fields.password')}
        type="password"
        value={values.password}
        onChange={(event) => setValues({ ...values, password: event.target.value })}
        required
        autoComplete="new-password"
        slotProps={{ htmlInput: { 'data-testid': 'user-password' } }}
      />
    </DrawerFrame>
  );
}

/** A custom provider's binding as GET /api/user/:id/oauth/bindings lists it (numeric provider_id). */
interface CustomBinding {
  provider_id: number | string;
  provider_name: string;
  provider_user_id: string;
}

/** Each bound account's field, label and, for third-party ones, the provider the unbind routes name. */
const BINDINGS = [
  ['email', 'user_admin.fields.email', undefined],
  ['github_id', 'user_admin.fields.github_id', 'github'],
  ['oidc_id', 'user_admin.fields.oidc_id', 'oidc'],
  ['wechat_id', 'user_admin.fields.wechat_id', 'wechat'],
  ['telegram_id', 'user_admin.fields.telegram_id', 'telegram'],
  ['linux_do_id', 'user_admin.fields.linux_do_id', 'linuxdo'],
  ['discord_id', 'user_admin.fields.discord_id', 'discord'],
] as const;

/**
 * The edit-user drawer (spec doc 1 §5 "Edit user", §6): username, display name, password, group, quota
 * (with an add-quota dialog), remark; bound third-party ids shown, each with unbind. `self` edits the signed-in
 * administrator through /api/user/self (new password needs the original).
 */
function EditUserDrawer({ target, onClose }: { target: number | 'self'; onClose: () => void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const refresh = useRefresh();
  const { status } = useStatus();
  const self = target === 'self';
  const [user, setUser] = useState<ManagedUser>();
  const [values, setValues] = useState<UserFormValues>({
    username: '',
    display_name: '',
    password: '',
    group: '',
    quota: '0',
    remark: '',
  });
  const [original, setOriginal] = useState('');
  const [limits, setLimits] = useState(periodLimitValues({}));
  const [rateRows, setRateRows] = useState<RateLimitRow[]>([]);
  const [groups, setGroups] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [adding, setAdding] = useState(false);
  const [delta, setDelta] = useState('');
  const [custom, setCustom] = useState<CustomBinding[]>([]);
  const bindingsPath = self ? '/api/user/oauth/bindings' : `/api/user/${target}/oauth/bindings`;
  const loadCustom = useCallback(
    () =>
      api
        .get<CustomBinding[]>(bindingsPath)
        .then((list) => setCustom(list.filter((item) => typeof item.provider_id === 'number')))
        .catch(() => setCustom([])),
    [bindingsPath],
  );
  useEffect(() => {
    void loadCustom();
  }, [loadCustom]);

  useEffect(() => {
    api
      .get<ManagedUser>(self ? '/api/user/self' : `/api/user/${target}`)
      .then((loaded) => {
        setUser(loaded);
        setValues({
          username: loaded.username,
          display_name: loaded.display_name ?? '',
          password: '',
          group: loaded.group ?? 'default',
          quota: String(loaded.quota ?? 0),
          remark: loaded.remark ?? '',
        });
        setLimits(periodLimitValues(loaded as WithPeriodLimits));
        setRateRows(rowsOf(loaded.rate_limits));
      })
      .catch((error) => {
        notify(errorMessage(error), { type: 'error' });
        onClose();
      });
    if (!self) {
      api
        .get<string[]>('/api/group/')
        .then((list) => setGroups(list ?? []))
        .catch(() => {});
    }
  }, [self, target, notify, onClose]);

  const set = (key: keyof UserFormValues, value: string) => setValues((current) => ({ ...current, [key]: value }));

  /** Removes a third-party binding (the server keeps an account's last way to sign in) and shows the result. */
  const unbind = async (provider: string) => {
    setBusy(true);
    try {
      const { message } = await api.request(
        'DELETE',
        self ? `/api/user/oauth/bindings/${provider}` : `/api/user/${target}/bindings/${provider}`,
      );
      notify(message || 'personal.bind.unbound', { type: 'success' });
      setUser(await api.get<ManagedUser>(self ? '/api/user/self' : `/api/user/${target}`));
      await loadCustom();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  const submit = async () => {
    const problem =
      validateEditUser(self ? { ...values, quota: '0' } : values) ??
      (self ? undefined : invalidPeriodLimits(limits).length > 0 ? 'periods.invalid' : rateRowsProblem(rateRows));
    if (problem) {
      notify(problem, { type: 'error' });
      return;
    }
    setBusy(true);
    try {
      const body: Record<string, unknown> = self
        ? {
            username: values.username.trim(),
            display_name: values.display_name.trim(),
            ...(values.password ? { password: values.password, original_password: original } : {}),
          }
        : {
            id: target,
            username: values.username.trim(),
            display_name: values.display_name.trim(),
            group: values.group,
            quota: Number(values.quota),
            remark: values.remark,
            ...periodLimitBody(limits),
            rate_limits: limitsOf(rateRows),
            ...(values.password ? { password: values.password } : {}),
          };
      // Changing another user's quota asks a two-factor administrator for a code first.
      const envelope = await withStepUp(() =>
        api.request<ManagedUser>('PUT', self ? '/api/user/self' : '/api/user/', { body }),
      );
      notify(envelope.message || 'user_admin.messages.updated', { type: 'success' });
      const stored = getStoredUser();
      if (self && envelope.data && stored) storeUser({ ...stored, ...envelope.data });
      refresh();
      onClose();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  return (
    <DrawerFrame
      title={self ? 'user_admin.form.edit_self_title' : 'user_admin.form.edit_title'}
      testId="user-edit-drawer"
      onClose={onClose}
      onSubmit={submit}
      busy={busy || !user}
    >
      {!user ? (
        <CircularProgress />
      ) : (
        <>
          <TextField
            label={translate('user_admin.fields.username')}
            value={values.username}
            onChange={(event) => set('username', event.target.value)}
            slotProps={{ htmlInput: { 'data-testid': 'user-username' } }}
          />
          <TextField
            label={translate('user_admin.fields.display_name')}
            value={values.display_name}
            onChange={(event) => set('display_name', event.target.value)}
            slotProps={{ htmlInput: { 'data-testid': 'user-display_name' } }}
          />
          {self && (
            <TextField
              label={translate('user_admin.fields.original_password')}
              type="password"
              value={original}
              onChange={(event) => setOriginal(event.target.value)}
              autoComplete="current-password"
            />
          )}
          <TextField
            label={translate('user_admin.fields.password')}
            type="password"
            value={values.password}
            onChange={(event) => set('password', event.target.value)}
            helperText={translate('user_admin.form.password_hint')}
            autoComplete="new-password"
            slotProps={{ htmlInput: { 'data-testid': 'user-password' } }}
          />
          {!self && (
            <>
              <TextField
                select
                label={translate('user_admin.fields.group')}
                value={values.group}
                onChange={(event) => set('group', event.target.value)}
                slotProps={{ htmlInput: { 'data-testid': 'user-group' } }}
              >
                {[...new Set([...groups, values.group])].map((group) => (
                  <MenuItem key={group} value={group}>
                    {group}
                  </MenuItem>
                ))}
              </TextField>
              <TextField
                label={translate('user_admin.fields.quota')}
                value={values.quota}
                onChange={(event) => set('quota', event.target.value)}
                helperText={/^-?\d+$/.test(values.quota.trim()) ? formatQuota(Number(values.quota), status) : ' '}
                slotProps={{
                  htmlInput: { 'data-testid': 'user-quota' },
                  input: {
                    endAdornment: (
                      <InputAdornment position="end">
                        <Button size="small" onClick={() => setAdding(true)} data-testid="user-add-quota">
                          {translate('user_admin.form.add_quota')}
                        </Button>
                      </InputAdornment>
                    ),
                  },
                }}
              />
              <TextField
                label={translate('user_admin.fields.remark')}
                value={values.remark}
                onChange={(event) => set('remark', event.target.value)}
                multiline
              />
              <PeriodLimitTextFields
                values={limits}
                onChange={(field, value) => setLimits((current) => ({ ...current, [field]: value }))}
              />
              <RateLimitsEditor
                rows={rateRows}
                onChange={setRateRows}
                error={rateRowsProblem(rateRows)}
                help="rate_limits.user_help"
              />
            </>
          )}
          {!self && <UserSessions userId={user.id} />}
          <Divider>{translate('user_admin.form.bindings')}</Divider>
          <Alert severity="info">{translate('user_admin.form.bindings_read_only')}</Alert>
          {BINDINGS.map(([field, label, provider]) => (
            <TextField
              key={field}
              label={translate(label)}
              value={user[field] || ''}
              placeholder={translate('user_admin.form.not_bound')}
              slotProps={{
                htmlInput: { readOnly: true, 'data-testid': `user-binding-${field}` },
                inputLabel: { shrink: true },
                input:
                  provider && user[field]
                    ? {
                        endAdornment: (
                          <InputAdornment position="end">
                            <Button
                              size="small"
                              color="warning"
                              disabled={busy}
                              onClick={() => void unbind(provider)}
                              data-testid={`user-unbind-${provider}`}
                            >
                              {translate('personal.bind.unbind')}
                            </Button>
                          </InputAdornment>
                        ),
                      }
                    : undefined,
              }}
              size="small"
            />
          ))}
          {custom.map((binding) => (
            <TextField
              key={binding.provider_id}
              label={binding.provider_name}
              value={binding.provider_user_id}
              slotProps={{
                htmlInput: { readOnly: true, 'data-testid': `user-binding-custom-${binding.provider_id}` },
                inputLabel: { shrink: true },
                input: {
                  endAdornment: (
                    <InputAdornment position="end">
                      <Button
                        size="small"
                        color="warning"
                        disabled={busy}
                        onClick={() => void unbind(String(binding.provider_id))}
                        data-testid={`user-unbind-custom-${binding.provider_id}`}
                      >
                        {translate('personal.bind.unbind')}
                      </Button>
                    </InputAdornment>
                  ),
                },
              }}
              size="small"
            />
          ))}
        </>
      )}
      <Dialog open={adding} onClose={() => setAdding(false)}>
        <DialogTitle>{translate('user_admin.form.add_quota')}</DialogTitle>
        <DialogContent>
          <TextField
            autoFocus
            label={translate('user_admin.form.add_quota_amount')}
            value={delta}
            onChange={(event) => setDelta(event.target.value)}
            helperText={translate('user_admin.form.add_quota_help')}
            sx={{ mt: 1 }}
            slotProps={{ htmlInput: { 'data-testid': 'user-add-quota-amount' } }}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setAdding(false)}>{translate('common.cancel')}</Button>
          <Button
            variant="contained"
            data-testid="user-add-quota-ok"
            onClick={() => {
              const next = addQuota(values.quota, delta);
              if (next === undefined) {
                notify('user_admin.validation.quota_integer', { type: 'error' });
                return;
              }
              set('quota', next);
              setDelta('');
              setAdding(false);
            }}
          >
            {translate('common.confirm')}
          </Button>
        </DialogActions>
      </Dialog>
    </DrawerFrame>
  );
}
