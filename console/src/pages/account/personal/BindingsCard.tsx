import Chat from '@mui/icons-material/Chat';
import Email from '@mui/icons-material/Email';
import Forum from '@mui/icons-material/Forum';
import GitHub from '@mui/icons-material/GitHub';
import Key from '@mui/icons-material/Key';
import QrCode2 from '@mui/icons-material/QrCode2';
import Telegram from '@mui/icons-material/Telegram';
import {
  Box,
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
import { type ReactElement, useCallback, useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { api, errorMessage } from '../../../providers/http.ts';
import { useStatus } from '../../../status/StatusContext.tsx';
import type { CustomOAuthProvider } from '../../../status/status.ts';
import { useCountdown } from '../parts/countdown.ts';
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
} from '../parts/oauth.tsx';
import type { SelfUser } from './self.ts';

interface Binding {
  key: string;
  /** A translation key. */
  label: string;
  /** A custom provider's own name, shown as it is instead of the label. */
  title?: string;
  icon: ReactElement;
  /** The bound account, '' when none. */
  value: string;
  enabled: boolean;
  /** What the bind button starts: a built-in provider's name or a custom provider. */
  provider?: RedirectProvider;
  /** What DELETE /api/user/oauth/bindings/:provider_id names: a built-in slug or a custom provider's id. */
  unbindId?: string;
}

/** One item of GET /api/user/oauth/bindings (new-api's shape). */
interface BindingItem {
  provider_id: number | string;
  provider_name: string;
  provider_slug: string;
  provider_icon: string;
  provider_user_id: string;
}

/**
 * Account bindings (spec doc 1 §2, §4): email (a mailed code, 30 s resend lock), WeChat (a code from the
 * official account), GitHub, OIDC, LinuxDO, Discord and the custom providers (the provider's page with a
 * server-issued state), Telegram
 * (its widget). A bind button is disabled once bound or when the provider is not enabled; a bound provider
 * can be unbound (DELETE /api/user/oauth/bindings/:provider); the email can be changed.
 */
export function BindingsCard({ user, reload }: { user: SelfUser; reload(): Promise<void> }) {
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const providers = enabledProviders(status);
  const [emailOpen, setEmailOpen] = useState(false);
  const [wechatOpen, setWechatOpen] = useState(false);
  const [customBound, setCustomBound] = useState<BindingItem[]>([]);
  const loadCustom = useCallback(async () => {
    try {
      const items = await api.get<BindingItem[]>('/api/user/oauth/bindings');
      setCustomBound(items.filter((item) => typeof item.provider_id === 'number'));
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  }, [notify]);
  useEffect(() => {
    void loadCustom();
  }, [loadCustom]);

  const bindings: Binding[] = [
    { key: 'email', label: 'personal.bind.email', icon: <Email />, value: user.email, enabled: true },
    {
      key: 'wechat',
      label: 'personal.bind.wechat',
      icon: <QrCode2 />,
      value: user.wechat_id,
      enabled: providers.wechat,
    },
    {
      key: 'github',
      label: 'personal.bind.github',
      icon: <GitHub />,
      value: user.github_id,
      enabled: providers.github,
    },
    { key: 'oidc', label: 'personal.bind.oidc', icon: <Key />, value: user.oidc_id, enabled: providers.oidc },
    {
      key: 'telegram',
      label: 'personal.bind.telegram',
      icon: <Telegram />,
      value: user.telegram_id,
      enabled: providers.telegram,
    },
    {
      key: 'linuxdo',
      label: 'personal.bind.linuxdo',
      icon: <Forum />,
      value: user.linux_do_id,
      enabled: providers.linuxdo,
    },
    {
      key: 'discord',
      label: 'personal.bind.discord',
      icon: <Chat />,
      value: user.discord_id,
      enabled: providers.discord,
    },
    ...customBindings(customProviders(status), customBound),
  ];

  const redirect = (provider: RedirectProvider) => {
    startOAuth(provider, status).catch((error) => notify(errorMessage(error), { type: 'error' }));
  };
  const bound = async (message?: string) => {
    notify(message && message !== 'bind' ? message : 'personal.bind.success', { type: 'success' });
    await Promise.all([reload(), loadCustom()]);
  };
  const telegram = (fields: TelegramFields) => {
    api
      .request('GET', '/api/oauth/telegram/bind', { query: telegramQuery(fields) })
      .then((envelope) => bound(envelope.message))
      .catch((error) => notify(errorMessage(error), { type: 'error' }));
  };

  /** The server refuses the last way to sign in (no password, no other binding) with its own message. */
  const unbind = async (provider: string) => {
    try {
      const { message } = await api.request('DELETE', `/api/user/oauth/bindings/${provider}`);
      notify(message || 'personal.bind.unbound', { type: 'success' });
      await Promise.all([reload(), loadCustom()]);
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  };

  const action = (binding: Binding) => {
    if (binding.key === 'email') {
      return (
        <Button size="small" variant="outlined" onClick={() => setEmailOpen(true)} data-testid="bind-email">
          {translate(binding.value ? 'personal.bind.change' : 'personal.bind.bind')}
        </Button>
      );
    }
    if (binding.key === 'telegram' && binding.enabled && !binding.value) {
      return <TelegramButton botName={status.telegram_bot_name} onAuth={telegram} />;
    }
    const onClick = () => {
      if (binding.key === 'wechat') setWechatOpen(true);
      else redirect(binding.provider ?? (binding.key as RedirectProvider));
    };
    return (
      <Button
        size="small"
        variant="outlined"
        disabled={!binding.enabled || Boolean(binding.value)}
        onClick={onClick}
        data-testid={`bind-${binding.key}`}
      >
        {translate(binding.value ? 'personal.bind.bound' : 'personal.bind.bind')}
      </Button>
    );
  };

  return (
    <Card data-testid="personal-bindings">
      <CardContent>
        <Typography variant="subtitle1" sx={{ fontWeight: 600 }} gutterBottom>
          {translate('personal.bind.title')}
        </Typography>
        <Stack spacing={1}>
          {bindings.map((binding) => (
            <Stack
              key={binding.key}
              direction="row"
              spacing={2}
              sx={{ alignItems: 'center' }}
              data-testid={`binding-${binding.key}`}
            >
              <Box sx={{ color: 'text.secondary', display: 'flex' }}>{binding.icon}</Box>
              <Box sx={{ flex: 1, minWidth: 0 }}>
                <Typography variant="body2">{binding.title ?? translate(binding.label)}</Typography>
                <Typography variant="caption" color="text.secondary" noWrap component="div">
                  {binding.value ||
                    translate(binding.enabled ? 'personal.bind.not_bound' : 'personal.bind.not_enabled')}
                </Typography>
              </Box>
              {action(binding)}
              {binding.key !== 'email' && binding.value && (
                <Button
                  size="small"
                  color="warning"
                  onClick={() => void unbind(binding.unbindId ?? binding.key)}
                  data-testid={`unbind-${binding.key}`}
                >
                  {translate('personal.bind.unbind')}
                </Button>
              )}
            </Stack>
          ))}
        </Stack>
      </CardContent>
      {emailOpen && (
        <EmailBindDialog
          current={user.email}
          onClose={() => setEmailOpen(false)}
          onBound={async (message) => {
            setEmailOpen(false);
            await bound(message);
          }}
        />
      )}
      {providers.wechat && (
        <WeChatDialog
          open={wechatOpen}
          qrcode={status.wechat_qrcode}
          submitLabel={translate('personal.bind.bind')}
          onClose={() => setWechatOpen(false)}
          onCode={async (code) => {
            const envelope = await api.request('GET', '/api/oauth/wechat/bind', { query: { code } });
            setWechatOpen(false);
            await bound(envelope.message);
          }}
        />
      )}
    </Card>
  );
}

/**
 * A row per custom provider: the enabled ones (bindable), and any other the user is still bound to (a
 * disabled provider: unbind only).
 */
function customBindings(enabled: CustomOAuthProvider[], bound: BindingItem[]): Binding[] {
  const rows = enabled.map((provider) => ({
    key: `custom-${provider.slug}`,
    label: 'personal.bind.custom',
    title: provider.name,
    icon: <ProviderIcon icon={provider.icon} />,
    value: bound.find((item) => item.provider_id === provider.id)?.provider_user_id ?? '',
    enabled: true,
    provider,
    unbindId: String(provider.id),
  }));
  const others = bound
    .filter((item) => !enabled.some((provider) => provider.id === item.provider_id))
    .map((item) => ({
      key: `custom-${item.provider_slug}`,
      label: 'personal.bind.custom',
      title: item.provider_name,
      icon: <ProviderIcon icon={item.provider_icon} />,
      value: item.provider_user_id,
      enabled: false,
      unbindId: String(item.provider_id),
    }));
  return [...rows, ...others];
}

/** Email binding: send a code to the address (30 s lock), then bind with address and code. */
function EmailBindDialog(props: { current: string; onClose(): void; onBound(message: string): Promise<void> }) {
  const translate = useTranslate();
  const notify = useNotify();
  const lock = useCountdown();
  const [email, setEmail] = useState(props.current);
  const [code, setCode] = useState('');
  const [problem, setProblem] = useState<string>();
  const [busy, setBusy] = useState(false);

  const send = async () => {
    if (!email.trim()) {
      setProblem(translate('personal.bind.email_required'));
      return;
    }
    setProblem(undefined);
    setBusy(true);
    try {
      const { message } = await api.request('GET', '/api/oauth/email/bind/code', { query: { email: email.trim() } });
      lock.start();
      notify(message || 'register.code_sent', { type: 'success' });
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  const bind = async () => {
    if (!email.trim() || !code.trim()) {
      setProblem(translate('personal.bind.email_code_required'));
      return;
    }
    setProblem(undefined);
    setBusy(true);
    try {
      const { message } = await api.request('GET', '/api/oauth/email/bind', {
        query: { email: email.trim(), code: code.trim() },
      });
      await props.onBound(message);
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog open onClose={props.onClose} data-testid="email-dialog" maxWidth="xs" fullWidth>
      <DialogTitle>{translate('personal.bind.email_title')}</DialogTitle>
      <DialogContent>
        <Stack direction="row" spacing={1} sx={{ alignItems: 'center', mt: 1 }}>
          <TextField
            type="email"
            label={translate('register.email')}
            value={email}
            onChange={(event) => setEmail(event.target.value)}
            fullWidth
            slotProps={{ htmlInput: { 'data-testid': 'bind-email-address' } }}
          />
          <Button
            onClick={send}
            disabled={busy || lock.remaining > 0}
            sx={{ whiteSpace: 'nowrap' }}
            data-testid="bind-email-send"
          >
            {lock.remaining > 0
              ? translate('register.resend_in', { seconds: lock.remaining })
              : translate('register.send_code')}
          </Button>
        </Stack>
        <TextField
          label={translate('register.verification_code')}
          value={code}
          onChange={(event) => setCode(event.target.value)}
          fullWidth
          sx={{ mt: 2 }}
          error={problem !== undefined}
          helperText={problem}
          slotProps={{ htmlInput: { 'data-testid': 'bind-email-code' } }}
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={props.onClose}>{translate('common.cancel')}</Button>
        <Button variant="contained" onClick={bind} disabled={busy} data-testid="bind-email-submit">
          {translate('personal.bind.bind')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
