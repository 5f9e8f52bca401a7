import { AppError } from '../errors.ts';
import type { OutboundGuard, OutboundRequest } from '../http/outbound/guard.ts';
import { OutboundRefused } from '../http/outbound/policy.ts';
import type { UserSetting } from './accounts/settings.ts';
import { NOTIFICATION_ERRORS, type Notification } from './notifications.ts';

/**
 * Bark: the user's push URL holds their device key; `{{title}}` and `{{content}}` in it are replaced
 * by the URL-encoded title and text (new-api's convention). A URL without them gets both appended as
 * path segments, Bark's own `/<key>/<title>/<body>` form.
 */
export function barkAddress(template: string, notification: Notification): string {
  const title = encodeURIComponent(notification.title);
  const content = encodeURIComponent(notification.content);
  if (template.includes('{{title}}') || template.includes('{{content}}'))
    return template.replaceAll('{{title}}', title).replaceAll('{{content}}', content);
  return `${template.replace(/\/+$/, '')}/${title}/${content}`;
}

export async function pushBark(outbound: OutboundGuard, template: string, notification: Notification): Promise<void> {
  await push('Bark', outbound, { url: barkAddress(template, notification), method: 'GET', headers: {} });
}

/** Gotify: POST <server>/message with the application token in X-Gotify-Key (kept out of URLs and logs). */
export async function pushGotify(
  outbound: OutboundGuard,
  setting: Pick<UserSetting, 'gotify_url' | 'gotify_token' | 'gotify_priority'>,
  notification: Notification,
): Promise<void> {
  await push('Gotify', outbound, {
    url: `${setting.gotify_url.replace(/\/+$/, '')}/message`,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gotify-key': setting.gotify_token },
    body: JSON.stringify({
      title: notification.title,
      message: notification.content,
      priority: setting.gotify_priority,
    }),
  });
}

/** Throws OutboundRefused when fetch_setting.* forbids the address, NOTIFY_PUSH_FAILED when the service says no. */
async function push(service: string, outbound: OutboundGuard, request: Omit<OutboundRequest, 'signal'>): Promise<void> {
  let status: number;
  try {
    const response = await outbound.send({ ...request, signal: AbortSignal.timeout(10_000) });
    status = response.status;
    await response.body.dump();
  } catch (error) {
    if (error instanceof OutboundRefused) throw error;
    throw new AppError(NOTIFICATION_ERRORS.NOTIFY_PUSH_FAILED, {
      service,
      detail: error instanceof Error ? error.message : 'unreachable',
    });
  }
  if (status < 200 || status >= 300)
    throw new AppError(NOTIFICATION_ERRORS.NOTIFY_PUSH_FAILED, { service, detail: `HTTP ${status}` });
}
