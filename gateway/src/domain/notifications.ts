import type { SlidingWindowCounters } from '../cluster/index.ts';
import { AppError, defineErrors } from '../errors.ts';
import type { OutboundGuard } from '../http/outbound/guard.ts';
import { OutboundRefused } from '../http/outbound/policy.ts';
import type { UserRow } from '../store/database.ts';
import type { Mailer } from './accounts/mailer.ts';
import { readSetting } from './accounts/settings.ts';
import type { Keyring } from './keyring.ts';
import { pushBark, pushGotify } from './notification-push.ts';

export const NOTIFICATION_ERRORS = defineErrors({
  NOTIFY_WEBHOOK_FAILED: {
    status: 502,
    message: { zh: '通知 Webhook 调用失败：{detail}', en: 'The notification webhook failed: {detail}' },
  },
  NOTIFY_PUSH_FAILED: {
    status: 502,
    message: { zh: '{service} 推送失败：{detail}', en: 'The {service} push failed: {detail}' },
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
  /** The webhook is a user's URL: fetched only where fetch_setting.* allows. */
  outbound: OutboundGuard;
  /** At most `count` notifications of one type per user per window (reference §9.3). */
  limit: { count: number; windowMs: number };
}

/**
 * Tells a user about something (quota running low, a channel disabled) the way their settings ask:
 * an email, a JSON POST to their webhook with the optional secret as a bearer token, or a push
 * through their Bark or Gotify server (notification-push.ts).
 */
export class Notifier {
  readonly #deps: NotifierDeps;

  constructor(deps: NotifierDeps) {
    this.#deps = deps;
  }

  async notify(user: UserRow, notification: Notification): Promise<NotifyResult> {
    const { counters, limit, keyring, mailer, outbound } = this.#deps;
    const setting = readSetting(user.setting, keyring);
    const { allowed } = await counters.take(`notify:${user.id}:${notification.type}`, limit.windowMs, limit.count);
    if (!allowed) return 'throttled';
    if (setting.notify_type === 'webhook' && setting.webhook_url) {
      await postWebhook(outbound, setting.webhook_url, setting.webhook_secret, notification);
      return 'sent';
    }
    if (setting.notify_type === 'bark' && setting.bark_url) {
      await pushBark(outbound, setting.bark_url, notification);
      return 'sent';
    }
    if (setting.notify_type === 'gotify' && setting.gotify_url && setting.gotify_token) {
      await pushGotify(outbound, setting, notification);
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

/** Throws OutboundRefused (stable code OUTBOUND_URL_REFUSED) when fetch_setting.* forbids the URL. */
async function postWebhook(
  outbound: OutboundGuard,
  url: string,
  secret: string,
  notification: Notification,
): Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (secret) headers.authorization = `Bearer ${secret}`;
  let status: number;
  try {
    const response = await outbound.send({
      url,
      method: 'POST',
      headers,
      body: JSON.stringify({
        ...notification,
        values: notification.values ?? [],
        timestamp: Math.floor(Date.now() / 1000),
      }),
      signal: AbortSignal.timeout(10_000),
    });
    status = response.status;
    await response.body.dump();
  } catch (error) {
    if (error instanceof OutboundRefused) throw error;
    throw new AppError(NOTIFICATION_ERRORS.NOTIFY_WEBHOOK_FAILED, {
      detail: error instanceof Error ? error.message : 'unreachable',
    });
  }
  // A redirect is not followed (it could lead anywhere): like any other non-2xx, the call failed.
  if (status < 200 || status >= 300)
    throw new AppError(NOTIFICATION_ERRORS.NOTIFY_WEBHOOK_FAILED, { detail: `HTTP ${status}` });
}

function paragraphs(text: string): string {
  const escaped = text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return escaped
    .split(/\n{2,}/)
    .map((p) => `<p>${p.replace(/\n/g, '<br>')}</p>`)
    .join('');
}
