import VpnKey from '@mui/icons-material/VpnKey';
import { Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField, Typography } from '@mui/material';
import { useEffect, useRef, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { api, errorMessage } from '../../../providers/http.ts';
import type { CustomOAuthProvider, SiteStatus } from '../../../status/status.ts';

/** Where an invitation code from /register?aff= is kept until registration (spec doc 1 §2). */
export const AFF_KEY = 'aff';

export function storedAffCode(): string {
  try {
    return localStorage.getItem(AFF_KEY) ?? '';
  } catch {
    return '';
  }
}

export function storeAffCode(code: string): void {
  try {
    localStorage.setItem(AFF_KEY, code);
  } catch {
    // Storage disabled: the code still travels in the query of this visit.
  }
}

/**
 * Providers whose sign-in goes through an authorization page and /oauth/{slug}?code&state: a built-in
 * one by name, or a custom provider from the status.
 */
export type RedirectProvider = 'github' | 'oidc' | 'linuxdo' | 'discord' | CustomOAuthProvider;

/** The site's own address for callbacks: the configured server address, else where the console runs. */
export function siteAddress(status: SiteStatus): string {
  return (status.server_address || window.location.origin).replace(/\/+$/, '');
}

/** The provider's authorization page for this state (the gateway checks state and code on the callback). */
export function authorizeUrl(provider: RedirectProvider, status: SiteStatus, state: string): string {
  if (typeof provider === 'object') {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: provider.client_id,
      redirect_uri: `${siteAddress(status)}/oauth/${provider.slug}`,
      scope: provider.scopes,
      state,
    });
    const endpoint = provider.authorization_endpoint;
    return `${endpoint}${endpoint.includes('?') ? '&' : '?'}${query}`;
  }
  switch (provider) {
    case 'github': {
      const query = new URLSearchParams({ client_id: status.github_client_id, state, scope: 'user:email' });
      return `https://github.com/login/oauth/authorize?${query}`;
    }
    case 'oidc': {
      const query = new URLSearchParams({
        client_id: status.oidc_client_id,
        redirect_uri: `${siteAddress(status)}/oauth/oidc`,
        response_type: 'code',
        scope: 'openid profile email',
        state,
      });
      const endpoint = status.oidc_authorization_endpoint;
      return `${endpoint}${endpoint.includes('?') ? '&' : '?'}${query}`;
    }
    case 'linuxdo': {
      const query = new URLSearchParams({ response_type: 'code', client_id: status.linuxdo_client_id, state });
      return `https://connect.linux.do/oauth2/authorize?${query}`;
    }
    case 'discord': {
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: status.discord_client_id,
        redirect_uri: `${siteAddress(status)}/oauth/discord`,
        scope: 'identify',
        state,
      });
      return `https://discord.com/oauth2/authorize?${query}`;
    }
  }
}

/** Asks the gateway for a one-time state (remembering the invitation code), then leaves for the provider. */
export async function startOAuth(provider: RedirectProvider, status: SiteStatus): Promise<void> {
  const state = await api.get<string>('/api/oauth/state', { query: { aff: storedAffCode() }, expireOn401: false });
  window.location.assign(authorizeUrl(provider, status, state));
}

/** The providers the status enables (spec doc 1 §2: a button for each). */
export function enabledProviders(status: SiteStatus) {
  return {
    github: Boolean(status.github_oauth && status.github_client_id),
    oidc: Boolean(status.oidc_enabled && status.oidc_client_id && status.oidc_authorization_endpoint),
    linuxdo: Boolean(status.linuxdo_oauth && status.linuxdo_client_id),
    discord: Boolean(status.discord_oauth && status.discord_client_id),
    telegram: Boolean(status.telegram_oauth && status.telegram_bot_name),
    wechat: Boolean(status.wechat_login),
  };
}

/** The enabled custom providers that can send a browser to their authorization page. */
export function customProviders(status: SiteStatus): CustomOAuthProvider[] {
  const listed = Array.isArray(status.custom_oauth_providers) ? status.custom_oauth_providers : [];
  return listed.filter((provider) => provider.client_id && provider.authorization_endpoint);
}

/**
 * A custom provider's icon: an image when the administrator gave an http(s) URL; otherwise (new-api's
 * front end names icons of a library the console does not ship) a key.
 */
export function ProviderIcon({ icon }: { icon: string }) {
  if (/^https?:\/\//i.test(icon)) {
    return <Box component="img" src={icon} alt="" sx={{ width: 20, height: 20, objectFit: 'contain' }} />;
  }
  return <VpnKey />;
}

/** What Telegram's login widget hands over; sent to the gateway as the query. */
export type TelegramFields = Record<string, string | number>;

declare global {
  interface Window {
    __tollgateTelegramAuth?: (user: TelegramFields) => void;
  }
}

/**
 * Telegram's login widget (status `telegram_bot_name`): the script draws its button in place; the answer
 * comes back through a global callback and goes to `onAuth`.
 */
export function TelegramButton({ botName, onAuth }: { botName: string; onAuth(fields: TelegramFields): void }) {
  const container = useRef<HTMLDivElement>(null);
  const onAuthRef = useRef(onAuth);
  onAuthRef.current = onAuth;
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    window.__tollgateTelegramAuth = (user) => onAuthRef.current(user);
    const script = document.createElement('script');
    script.async = true;
    script.src = 'https://telegram.org/js/telegram-widget.js?22';
    script.setAttribute('data-telegram-login', botName);
    script.setAttribute('data-size', 'medium');
    script.setAttribute('data-request-access', 'write');
    script.setAttribute('data-onauth', '__tollgateTelegramAuth(user)');
    element.appendChild(script);
    return () => {
      element.replaceChildren();
      delete window.__tollgateTelegramAuth;
    };
  }, [botName]);
  return <Box ref={container} data-testid="telegram-widget" sx={{ display: 'inline-flex', minHeight: 28 }} />;
}

/** Telegram's fields as a query for /api/oauth/telegram/{login,bind}. */
export function telegramQuery(fields: TelegramFields): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, String(value)]));
}

/**
 * The WeChat dialog (spec doc 1 §2, §4): the official account's QR code, and the code it replies with
 * (valid three minutes). `onCode` signs in or binds; the dialog stays open when that fails.
 */
export function WeChatDialog(props: {
  open: boolean;
  qrcode: string;
  submitLabel: string;
  onClose(): void;
  onCode(code: string): Promise<void>;
}) {
  const { open, qrcode, submitLabel, onClose, onCode } = props;
  const translate = useTranslate();
  const notify = useNotify();
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    if (!code.trim()) {
      notify('login.wechat.code_required', { type: 'error' });
      return;
    }
    setBusy(true);
    try {
      await onCode(code.trim());
      setCode('');
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open={open} onClose={onClose} data-testid="wechat-dialog" maxWidth="xs" fullWidth>
      <DialogTitle>{translate('login.wechat.title')}</DialogTitle>
      <DialogContent>
        {qrcode && (
          <Box component="img" src={qrcode} alt="" sx={{ display: 'block', mx: 'auto', width: 200, height: 200 }} />
        )}
        <Typography variant="body2" color="text.secondary" sx={{ my: 1 }}>
          {translate('login.wechat.hint')}
        </Typography>
        <TextField
          label={translate('login.wechat.code')}
          value={code}
          onChange={(event) => setCode(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter') void submit();
          }}
          fullWidth
          autoFocus
          slotProps={{ htmlInput: { 'data-testid': 'wechat-code' } }}
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('common.cancel')}</Button>
        <Button variant="contained" onClick={submit} disabled={busy} data-testid="wechat-submit">
          {submitLabel}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
