import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryClusterState } from '../cluster/index.ts';
import { OutboundGuard } from '../http/outbound/guard.ts';
import { type FetchSettings, fetchSettings } from '../http/outbound/policy.ts';
import type { UserRow } from '../store/database.ts';
import type { Mailer, MailMessage } from './accounts/mailer.ts';
import { Keyring } from './keyring.ts';
import { Notifier } from './notifications.ts';
import { findOptionDefinition } from './options/index.ts';

const keyring = new Keyring('notification-test-secret');
const received: Array<{ headers: IncomingHttpHeaders; body: any }> = [];
let status = 200;
const hook = createServer((request, response) => {
  let body = '';
  request.on('data', (c) => {
    body += c;
  });
  request.on('end', () => {
    received.push({ headers: request.headers, body: JSON.parse(body) });
    response.statusCode = status;
    response.end();
  });
});
let hookUrl = '';

/** fetch_setting.* as the defaults have them; each test says what it changes. */
const stored = (key: string) => findOptionDefinition(key)!.default;
const defaults = fetchSettings({
  getBoolean: (key: string) => stored(key) === 'true',
  getJson: (key: string) => JSON.parse(stored(key)),
} as never);
/** The local hook server: loopback on a random port. */
const localHooks: FetchSettings = { ...defaults, allowPrivateIp: true, ports: [] };
let settings = localHooks;
const outbound = new OutboundGuard({ settings: () => settings });

beforeAll(async () => {
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
});
afterAll(() => hook.close());

/** Mail goes to a list, so the test sees exactly what would be sent. */
class RecordingMailer implements Mailer {
  readonly configured = true;
  readonly sent: MailMessage[] = [];
  async send(message: MailMessage) {
    this.sent.push(message);
  }
}

function userWith(setting: object, email = ''): UserRow {
  const stored: Record<string, unknown> = { ...setting };
  if (typeof stored.webhook_secret === 'string') stored.webhook_secret = keyring.encrypt(stored.webhook_secret);
  return { id: Math.floor(Math.random() * 1e9), email, setting: JSON.stringify(stored) } as UserRow;
}

function notifier(mailer = new RecordingMailer(), count = 2) {
  return new Notifier({
    mailer,
    keyring,
    counters: createMemoryClusterState().counters,
    outbound,
    limit: { count, windowMs: 60_000 },
  });
}

const note = {
  type: 'quota_exceed' as const,
  title: 'Quota low',
  content: 'Only 1 USD left.\n\nTop up <soon>.',
  values: [1],
};

describe('notifications', () => {
  it('posts to the webhook with the secret as a bearer token', async () => {
    received.length = 0;
    const user = userWith({ notify_type: 'webhook', webhook_url: hookUrl, webhook_secret: 'hook-secret' });
    expect(await notifier().notify(user, note)).toBe('sent');
    expect(received).toHaveLength(1);
    expect(received[0]!.headers.authorization).toBe('Bearer hook-secret');
    expect(received[0]!.body).toMatchObject({
      type: 'quota_exceed',
      title: 'Quota low',
      content: note.content,
      values: [1],
    });
    expect(Math.abs(received[0]!.body.timestamp - Date.now() / 1000)).toBeLessThan(60);
  });

  it('sends no authorization header without a secret, and reports a failing webhook', async () => {
    received.length = 0;
    const user = userWith({ notify_type: 'webhook', webhook_url: hookUrl });
    await notifier().notify(user, note);
    expect(received[0]!.headers.authorization).toBeUndefined();
    status = 500;
    await expect(notifier().notify(user, note)).rejects.toMatchObject({ code: 'NOTIFY_WEBHOOK_FAILED' });
    status = 200;
  });

  it('refuses a webhook on 127.0.0.1 by default, and delivers it once private addresses are allowed', async () => {
    received.length = 0;
    const user = userWith({ notify_type: 'webhook', webhook_url: hookUrl });
    settings = { ...defaults, ports: [] };
    await expect(notifier().notify(user, note)).rejects.toMatchObject({
      code: 'OUTBOUND_URL_REFUSED',
      reason: 'private_ip',
    });
    settings = defaults;
    await expect(notifier().notify(user, note)).rejects.toMatchObject({ code: 'OUTBOUND_URL_REFUSED', reason: 'port' });
    expect(received).toHaveLength(0);
    settings = { ...defaults, allowPrivateIp: true, ports: [] };
    expect(await notifier().notify(user, note)).toBe('sent');
    settings = { ...defaults, enabled: false };
    expect(await notifier().notify(user, note)).toBe('sent');
    expect(received).toHaveLength(2);
    settings = localHooks;
  });

  it('does not follow a webhook that redirects', async () => {
    received.length = 0;
    status = 302;
    const user = userWith({ notify_type: 'webhook', webhook_url: hookUrl });
    await expect(notifier().notify(user, note)).rejects.toMatchObject({
      code: 'NOTIFY_WEBHOOK_FAILED',
      message: expect.stringContaining('HTTP 302'),
    });
    status = 200;
    expect(received).toHaveLength(1);
  });

  it('mails the notification address, else the account email, with escaped HTML', async () => {
    const mailer = new RecordingMailer();
    const n = notifier(mailer, 10);
    await n.notify(
      userWith({ notify_type: 'email', notification_email: 'alerts@example.com' }, 'me@example.com'),
      note,
    );
    await n.notify(userWith({}, 'me@example.com'), note);
    expect(await n.notify(userWith({}), note)).toBe('no-address');
    expect(mailer.sent.map((m) => m.to)).toEqual(['alerts@example.com', 'me@example.com']);
    expect(mailer.sent[0]!.html).toBe('<p>Only 1 USD left.</p><p>Top up &#60;soon&#62;.</p>');
  });

  it('throttles each type per user', async () => {
    const mailer = new RecordingMailer();
    const n = notifier(mailer, 2);
    const user = userWith({}, 'me@example.com');
    const results = [await n.notify(user, note), await n.notify(user, note), await n.notify(user, note)];
    expect(results).toEqual(['sent', 'sent', 'throttled']);
    expect(await n.notify(user, { ...note, type: 'channel_update' })).toBe('sent');
  });
});
