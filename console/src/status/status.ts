import { ApiError, api } from '../providers/http.ts';

/**
 * The public status object of `GET /api/status` (spec doc 1 §3): what the console needs before anything
 * else: setup done, branding, display settings, feature flags and sign-in options.
 */
export interface SiteStatus {
  version: string;
  start_time: number;
  /** First-run setup done. */
  setup: boolean;
  system_name: string;
  logo: string;
  footer_html: string;
  server_address: string;
  docs_link: string;
  chat_link: string;
  chat_link2: string;
  /** Saved chat clients: a list of `{name: link template}` maps. */
  chats: unknown;
  top_up_link: string;
  quota_per_unit: number;
  display_in_currency: boolean;
  /** USD, CNY, TOKENS or CUSTOM. */
  quota_display_type: string;
  custom_currency_symbol: string;
  custom_currency_exchange_rate: number;
  price: number;
  usd_exchange_rate: number;
  min_topup: number;
  pay_methods: unknown;
  enable_online_topup: boolean;
  enable_drawing: boolean;
  enable_task: boolean;
  enable_data_export: boolean;
  data_export_default_time: string;
  default_collapse_sidebar: boolean;
  mj_notify_enabled: boolean;
  self_use_mode_enabled: boolean;
  demo_site_enabled: boolean;
  default_use_auto_group: boolean;
  email_verification: boolean;
  turnstile_check: boolean;
  turnstile_site_key: string;
  github_oauth: boolean;
  github_client_id: string;
  oidc_enabled: boolean;
  oidc_client_id: string;
  oidc_authorization_endpoint: string;
  linuxdo_oauth: boolean;
  linuxdo_client_id: string;
  wechat_login: boolean;
  wechat_qrcode: string;
  telegram_oauth: boolean;
  telegram_bot_name: string;
  passkey_login: boolean;
  discord_oauth: boolean;
  discord_client_id: string;
  /** Enabled custom OAuth providers: a sign-in button each. */
  custom_oauth_providers: CustomOAuthProvider[];
  [key: string]: unknown;
}

/** A custom OAuth 2 / OIDC provider as /api/status lists it. */
export interface CustomOAuthProvider {
  id: number;
  name: string;
  slug: string;
  icon: string;
  client_id: string;
  authorization_endpoint: string;
  scopes: string;
}

/** Defaults for a status the server could not give (spec doc 1 §9: fallbacks for name, logo, flags). */
export const DEFAULT_STATUS: SiteStatus = {
  version: '',
  start_time: 0,
  setup: true,
  system_name: 'Tollgate',
  logo: '',
  footer_html: '',
  server_address: '',
  docs_link: '',
  chat_link: '',
  chat_link2: '',
  chats: [],
  top_up_link: '',
  quota_per_unit: 500_000,
  display_in_currency: true,
  quota_display_type: 'USD',
  custom_currency_symbol: '¤',
  custom_currency_exchange_rate: 1,
  price: 7.3,
  usd_exchange_rate: 7.3,
  min_topup: 1,
  pay_methods: [],
  enable_online_topup: false,
  enable_drawing: false,
  enable_task: false,
  enable_data_export: false,
  data_export_default_time: 'hour',
  default_collapse_sidebar: false,
  mj_notify_enabled: false,
  self_use_mode_enabled: false,
  demo_site_enabled: false,
  default_use_auto_group: false,
  email_verification: false,
  turnstile_check: false,
  turnstile_site_key: '',
  github_oauth: false,
  github_client_id: '',
  oidc_enabled: false,
  oidc_client_id: '',
  oidc_authorization_endpoint: '',
  linuxdo_oauth: false,
  linuxdo_client_id: '',
  wechat_login: false,
  wechat_qrcode: '',
  telegram_oauth: false,
  telegram_bot_name: '',
  passkey_login: false,
  discord_oauth: false,
  discord_client_id: '',
  custom_oauth_providers: [],
};

const STATUS_KEY = 'status';

/** Items the original console kept beside the status object (spec doc 1 §3 "Local storage items"). */
const MIRRORED_FLAGS = [
  'default_collapse_sidebar',
  'enable_data_export',
  'enable_drawing',
  'enable_task',
  'mj_notify_enabled',
] as const;

/**
 * The status as loaded, and when loading failed the message to show (spec doc 1 §8): the server answered
 * with a failure, "unable to connect to the server"; the call itself failed, "failed to load the status".
 */
export interface StatusLoad {
  status: SiteStatus;
  failure?: 'status.unreachable' | 'status.load_failed' | undefined;
}

/**
 * Reads the status once at start and caches it locally. When that fails, the cached copy (or the defaults)
 * is used and `failure` says what to show.
 */
export async function loadStatus(): Promise<StatusLoad> {
  try {
    const status = {
      ...DEFAULT_STATUS,
      ...(await api.get<Partial<SiteStatus>>('/api/status', { expireOn401: false })),
    };
    cacheStatus(status);
    return { status };
  } catch (error) {
    const answered = error instanceof ApiError && error.status < 400;
    return {
      status: cachedStatus() ?? DEFAULT_STATUS,
      failure: answered ? 'status.unreachable' : 'status.load_failed',
    };
  }
}

export function cachedStatus(): SiteStatus | undefined {
  try {
    const raw = localStorage.getItem(STATUS_KEY);
    return raw ? { ...DEFAULT_STATUS, ...(JSON.parse(raw) as Partial<SiteStatus>) } : undefined;
  } catch {
    return undefined;
  }
}

function cacheStatus(status: SiteStatus): void {
  try {
    localStorage.setItem(STATUS_KEY, JSON.stringify(status));
    for (const flag of MIRRORED_FLAGS) localStorage.setItem(flag, String(Boolean(status[flag])));
    localStorage.setItem('footer_html', status.footer_html ?? '');
    localStorage.setItem('chats', JSON.stringify(status.chats ?? []));
  } catch {
    // Storage full or disabled: the status still lives in memory.
  }
}

/** Saved chat clients as `{name, link}` pairs, or undefined when the saved value has the wrong shape. */
export function chatLinks(status: SiteStatus): Array<{ name: string; link: string }> | undefined {
  const chats = status.chats;
  if (chats === null || chats === undefined || chats === '') return [];
  if (!Array.isArray(chats)) return undefined;
  const links: Array<{ name: string; link: string }> = [];
  for (const entry of chats) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return undefined;
    for (const [name, link] of Object.entries(entry)) {
      if (typeof link !== 'string') return undefined;
      links.push({ name, link });
    }
  }
  return links;
}
