import { AppError } from '../../errors.ts';
import type { Keyring } from '../keyring.ts';
import { ACCOUNT_ERRORS } from './errors.ts';

/** The notification settings kept as JSON in users.setting (spec doc 1 §3). */
export interface UserSetting {
  notify_type: 'email' | 'webhook';
  quota_warning_threshold: number;
  webhook_url: string;
  /** Stored encrypted; never sent back to a client. */
  webhook_secret: string;
  notification_email: string;
  accept_unset_model_ratio_model: boolean;
}

export interface UserSettingInput {
  notify_type?: string | undefined;
  quota_warning_threshold?: number | undefined;
  webhook_url?: string | undefined;
  webhook_secret?: string | undefined;
  notification_email?: string | undefined;
  accept_unset_model_ratio_model?: boolean | undefined;
}

/** Spec doc 1 §9: 500,000 (1 USD) when loaded from a saved setting. */
export const DEFAULT_QUOTA_WARNING_THRESHOLD = 500_000;
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
  return {
    notify_type: raw.notify_type === 'webhook' ? 'webhook' : 'email',
    quota_warning_threshold:
      typeof raw.quota_warning_threshold === 'number' ? raw.quota_warning_threshold : DEFAULT_QUOTA_WARNING_THRESHOLD,
    webhook_url: typeof raw.webhook_url === 'string' ? raw.webhook_url : '',
    webhook_secret: secret ? keyring.decrypt(secret) : '',
    notification_email: typeof raw.notification_email === 'string' ? raw.notification_email : '',
    accept_unset_model_ratio_model: raw.accept_unset_model_ratio_model === true,
  };
}

/** Validates new settings against the current ones and returns the text to store. */
export function writeSetting(input: UserSettingInput, current: UserSetting, keyring: Keyring): string {
  const notifyType = input.notify_type ?? current.notify_type;
  if (notifyType !== 'email' && notifyType !== 'webhook') throw invalid('notify_type must be email or webhook');
  const threshold = input.quota_warning_threshold ?? current.quota_warning_threshold;
  if (!Number.isFinite(threshold) || threshold < 0) throw invalid('quota_warning_threshold must be a number ≥ 0');
  const webhookUrl = (input.webhook_url ?? current.webhook_url).trim();
  if (webhookUrl !== '' && !isHttps(webhookUrl)) throw invalid('webhook_url must be an https:// URL');
  if (notifyType === 'webhook' && webhookUrl === '') throw invalid('webhook_url is required for webhook notifications');
  const email = (input.notification_email ?? current.notification_email).trim();
  if (email !== '' && !EMAIL.test(email)) throw invalid('notification_email is not an email address');
  // An omitted secret keeps the current one; an empty string removes it.
  const secret = input.webhook_secret ?? current.webhook_secret;
  return JSON.stringify({
    notify_type: notifyType,
    quota_warning_threshold: threshold,
    webhook_url: webhookUrl,
    webhook_secret: secret ? keyring.encrypt(secret) : '',
    notification_email: email,
    accept_unset_model_ratio_model: input.accept_unset_model_ratio_model ?? current.accept_unset_model_ratio_model,
  });
}

/** The setting as clients see it: the webhook secret replaced by whether one is set. */
export function publicSetting(setting: UserSetting): string {
  const { webhook_secret, ...rest } = setting;
  return JSON.stringify({ ...rest, webhook_secret_set: webhook_secret !== '' });
}

function isHttps(text: string): boolean {
  try {
    return new URL(text).protocol === 'https:';
  } catch {
    return false;
  }
}
