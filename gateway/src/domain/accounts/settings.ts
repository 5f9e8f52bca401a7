import { AppError } from '../../errors.ts';
import type { Keyring } from '../keyring.ts';
import { ACCOUNT_ERRORS } from './errors.ts';

/** The notification settings kept as JSON in users.setting (spec doc 1 §3). */
export const NOTIFY_TYPES = ['email', 'webhook', 'bark', 'gotify'] as const;
export type NotifyType = (typeof NOTIFY_TYPES)[number];

export interface UserSetting {
  notify_type: NotifyType;
  quota_warning_threshold: number;
  webhook_url: string;
  /** Stored encrypted; never sent back to a client. */
  webhook_secret: string;
  notification_email: string;
  /** Bark push URL, e.g. https://api.day.app/<device key>/{{title}}/{{content}} (new-api's placeholders). */
  bark_url: string;
  /** Gotify server base URL; messages go to <url>/message. */
  gotify_url: string;
  /** Gotify application token. Stored encrypted; never sent back to a client. */
  gotify_token: string;
  /** Gotify message priority, 0-10. */
  gotify_priority: number;
  accept_unset_model_ratio_model: boolean;
}

export interface UserSettingInput {
  notify_type?: string | undefined;
  quota_warning_threshold?: number | undefined;
  webhook_url?: string | undefined;
  webhook_secret?: string | undefined;
  notification_email?: string | undefined;
  bark_url?: string | undefined;
  gotify_url?: string | undefined;
  gotify_token?: string | undefined;
  gotify_priority?: number | undefined;
  accept_unset_model_ratio_model?: boolean | undefined;
}

/** Spec doc 1 §9: 500,000 (1 USD) when loaded from a saved setting. */
export const DEFAULT_QUOTA_WARNING_THRESHOLD = 500_000;
/** Gotify's own default priority; new-api falls back to it outside 0-10. */
export const DEFAULT_GOTIFY_PRIORITY = 5;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const invalid = (detail: string) => new AppError(ACCOUNT_ERRORS.SETTING_INVALID, { detail });

/** Reads a stored setting, tolerating the empty string and fields written by older versions. */
export function readSetting(stored: string, keyring: Keyring): UserSetting {
  let raw: Record<string, unknown> = {};
  try {
    const parsed: unknown = stored ? JSON.parse(stored) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) raw = parsed as Record<string, unknown>;
  } catch {
    // A corrupt setting falls back to defaults rather than locking the user out of their profile.
  }
  const secret = typeof raw.webhook_secret === 'string' && raw.webhook_secret !== '' ? raw.webhook_secret : '';
  const gotifyToken = typeof raw.gotify_token === 'string' ? raw.gotify_token : '';
  const priority = raw.gotify_priority;
  return {
    notify_type: NOTIFY_TYPES.find((type) => type === raw.notify_type) ?? 'email',
    quota_warning_threshold:
      typeof raw.quota_warning_threshold === 'number' ? raw.quota_warning_threshold : DEFAULT_QUOTA_WARNING_THRESHOLD,
    webhook_url: typeof raw.webhook_url === 'string' ? raw.webhook_url : '',
    webhook_secret: secret ? keyring.decrypt(secret) : '',
    notification_email: typeof raw.notification_email === 'string' ? raw.notification_email : '',
    bark_url: typeof raw.bark_url === 'string' ? raw.bark_url : '',
    gotify_url: typeof raw.gotify_url === 'string' ? raw.gotify_url : '',
    gotify_token: gotifyToken ? keyring.decrypt(gotifyToken) : '',
    gotify_priority: isPriority(priority) ? priority : DEFAULT_GOTIFY_PRIORITY,
    accept_unset_model_ratio_model: raw.accept_unset_model_ratio_model === true,
  };
}

/** Validates new settings against the current ones and returns the text to store. */
export function writeSetting(input: UserSettingInput, current: UserSetting, keyring: Keyring): string {
  const notifyType = input.notify_type ?? current.notify_type;
  if (!NOTIFY_TYPES.includes(notifyType as NotifyType))
    throw invalid('notify_type must be email, webhook, bark or gotify');
  const threshold = input.quota_warning_threshold ?? current.quota_warning_threshold;
  if (!Number.isFinite(threshold) || threshold < 0) throw invalid('quota_warning_threshold must be a number ≥ 0');
  const webhookUrl = (input.webhook_url ?? current.webhook_url).trim();
  if (webhookUrl !== '' && !isHttps(webhookUrl)) throw invalid('webhook_url must be an https:// URL');
  if (notifyType === 'webhook' && webhookUrl === '') throw invalid('webhook_url is required for webhook notifications');
  const email = (input.notification_email ?? current.notification_email).trim();
  if (email !== '' && !EMAIL.test(email)) throw invalid('notification_email is not an email address');
  const barkUrl = (input.bark_url ?? current.bark_url).trim();
  if (barkUrl !== '' && !isHttp(barkUrl)) throw invalid('bark_url must be an http:// or https:// URL');
  if (notifyType === 'bark' && barkUrl === '') throw invalid('bark_url is required for Bark notifications');
  const gotifyUrl = (input.gotify_url ?? current.gotify_url).trim();
  if (gotifyUrl !== '' && !isHttp(gotifyUrl)) throw invalid('gotify_url must be an http:// or https:// URL');
  // An omitted secret or token keeps the current one; an empty string removes it.
  const gotifyToken = (input.gotify_token ?? current.gotify_token).trim();
  if (notifyType === 'gotify' && (gotifyUrl === '' || gotifyToken === ''))
    throw invalid('gotify_url and gotify_token are required for Gotify notifications');
  const priority = input.gotify_priority ?? current.gotify_priority;
  if (!isPriority(priority)) throw invalid('gotify_priority must be an integer from 0 to 10');
  const secret = input.webhook_secret ?? current.webhook_secret;
  return JSON.stringify({
    notify_type: notifyType,
    quota_warning_threshold: threshold,
    webhook_url: webhookUrl,
    webhook_secret: secret ? keyring.encrypt(secret) : '',
    notification_email: email,
    bark_url: barkUrl,
    gotify_url: gotifyUrl,
    gotify_token: gotifyToken ? keyring.encrypt(gotifyToken) : '',
    gotify_priority: priority,
    accept_unset_model_ratio_model: input.accept_unset_model_ratio_model ?? current.accept_unset_model_ratio_model,
  });
}

/** The setting as clients see it: the webhook secret and Gotify token replaced by whether one is set. */
export function publicSetting(setting: UserSetting): string {
  const { webhook_secret, gotify_token, ...rest } = setting;
  return JSON.stringify({ ...rest, webhook_secret_set: webhook_secret !== '', gotify_token_set: gotify_token !== '' });
}

function isPriority(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 10;
}

/** Bark and Gotify servers are often self-hosted on plain http; fetch_setting.* still decides where calls may go. */
function isHttp(text: string): boolean {
  try {
    const protocol = new URL(text).protocol;
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

function isHttps(text: string): boolean {
  try {
    return new URL(text).protocol === 'https:';
  } catch {
    return false;
  }
}
