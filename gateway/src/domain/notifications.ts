import type { SlidingWindowCounters } from '../cluster/index.ts';
import { AppError, defineErrors } from '../errors.ts';
import type { UserRow } from '../store/database.ts';
import type { Mailer } from './accounts/mailer.ts';
import { readSetting } from './accounts/settings.ts';
import type { Keyring } from './keyring.ts';

export const NOTIFICATION_ERRORS = defineErrors({
  NOTIFY_WEBHOOK_FAILED: {
    status: 502,
    message: { zh: '通知 Webhook 调用失败：{detail}', en: 'The notification webhook failed: {detail}' },
  },
});

export type NotificationType = 'quota_exceed' | 'channel_update' | 'channel_test';

export interface Notification {
  type: NotificationType;
  title: string;
  content: string;
  values?: unknown[];
}

export type NotifyResult = 'sent' | 'throttled' | 'no-address';

export interface NotifierDeps {
  mailer: Mailer;
  keyring: Keyring;
  counters: SlidingWindowCounters;
  /** At most `count` notifications of one type per user per window (reference §9.3). */
  limit: { count: number; windowMs: number };
}

/**
 * Tells a user about something (quota running low, a channel disabled) the way their settings ask:
 * an email, or a JSON POST to their webhook with the optional secret as a bearer token.
 */
export class Notifier {
  readonly #deps: NotifierDeps;

  constructor(deps: NotifierDeps) {
    this.#deps = deps;
  }

  async notify(user: UserRow, notification: Notification): Promise<NotifyResult> {
    const { counters, limit, keyring, mailer } = this.#deps;
    const setting = readSetting(user.setting, keyring);
    const { allowed } = await counters.take(`notify:${user.id}:${notification.type}`, limit.windowMs, limit.count);
    if (!allowed) return 'throttled';
    if (setting.notify_type === 'webhook' && setting.webhook_url) {
      await postWebhook(setting.webhook_url, setting.webhook_secret, notification);
      return 'sent';
    }
    const to = setting.notification_email || user.email;
    if (!to) return 'no-address';
    await mailer.send({
      to,
      subject: notification.title,
      text: notification.content,
      html: paragraphs(notification.content),
    });
    return 'sent';
  }
}

async function postWebhook(url: string, secret: string, notification: Notification): Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (secret) headers.authorization = `Bearer ${secret}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        ...notification,
        values: notification.values ?? [],
        timestamp: Math.floor(Date.now() / 1000),
      }),
      signal: AbortSignal.timeout(10_000),
      redirect: 'error',
    });
  } catch (error) {
    throw new AppError(NOTIFICATION_ERRORS.NOTIFY_WEBHOOK_FAILED, {
      detail: error instanceof Error ? error.message : 'unreachable',
    });
  }
  await response.body?.cancel();
  if (!response.ok)
    throw new AppError(NOTIFICATION_ERRORS.NOTIFY_WEBHOOK_FAILED, { detail: `HTTP ${response.status}` });
}

function paragraphs(text: string): string {
  const escaped = text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return escaped
    .split(/\n{2,}/)
    .map((p) => `<p>${p.replace(/\n/g, '<br>')}</p>`)
    .join('');
}
