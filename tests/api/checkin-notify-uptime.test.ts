import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckinService } from '../../gateway/src/domain/checkins/index.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { type MockPushServer, startMockBark, startMockGotify } from '../support/mock-push.ts';
import { type MockUptimeKuma, startMockUptimeKuma } from '../support/mock-uptime-kuma.ts';
import { waitFor } from '../support/wait.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let upstream: MockOpenAI;
let bark: MockPushServer;
let gotify: MockPushServer;
let kuma: MockUptimeKuma;
let addressCounter = 0;
let userCounter = 0;

const BARK_KEY = 'bark-device-key-1';
const GOTIFY_TOKEN = 'AbCdEf.gotify-app-token';

const client = (language = 'en') =>
  new DashboardClient(gateway.url, { 'x-forwarded-for': `10.19.5.${++addressCounter}`, 'accept-language': language });

beforeAll(async () => {
  [upstream, bark, gotify, kuma] = await Promise.all([
    startMockOpenAI(),
    startMockBark(BARK_KEY),
    startMockGotify(GOTIFY_TOKEN),
    startMockUptimeKuma(),
  ]);
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { TRUST_PROXY: 'true', GLOBAL_API_RATE_LIMIT: '100000' }),
  );
  root = await setupRoot(gateway.url);
  root.headers['x-forwarded-for'] = '10.19.6.1';
  const channel = await root.post('/api/channel/', {
    name: 'mock',
    type: 1,
    key: 'sk-upstream',
    base_url: upstream.url,
    models: 'gpt-4o',
    group: 'default',
  });
  expect(channel.body.success).toBe(true);
  // The mock push servers listen on loopback ports.
  await gateway.options.setMany({
    'fetch_setting.allow_private_ip': 'true',
    'fetch_setting.allowed_ports': '[]',
    ModelRatio: JSON.stringify({ 'gpt-4o': 1.25 }),
    CompletionRatio: JSON.stringify({ 'gpt-4o': 4 }),
  });
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await Promise.all([upstream?.close(), bark?.close(), gotify?.close(), kuma?.close()]);
});

async function user(language = 'en'): Promise<DashboardClient> {
  const username = `h5u${++userCounter}`;
  expect((await client().post('/api/user/register', { username, password: 'password-1' })).body.success).toBe(true);
  const c = client(language);
  expect((await c.login(username, 'password-1')).body.success).toBe(true);
  return c;
}

const db = () => gateway.store.db;
const quotaOf = async (userId: number) =>
  (await db().selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow()).quota;
const status = async () => (await client().get('/api/status')).body.data;

describe('daily check-in', () => {
  it('is off by default: the status flag says so and both calls refuse with a stable code', async () => {
    expect((await status()).checkin_enabled).toBe(false);
    const u = await user();
    for (const answer of [await u.get('/api/user/checkin'), await u.post('/api/user/checkin')]) {
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ success: false, code: 'CHECKIN_DISABLED' });
    }
    expect((await client().post('/api/user/checkin')).status).toBe(401);
  });

  it('credits a reward within the bounds once a day, logged, and reports it in the month', async () => {
    await gateway.options.setMany({
      'checkin_setting.enabled': 'true',
      'checkin_setting.min_quota': '2000',
      'checkin_setting.max_quota': '3000',
    });
    expect((await status()).checkin_enabled).toBe(true);
    const u = await user();
    const before = await quotaOf(u.userId!);
    const answer = await u.post('/api/user/checkin');
    expect(answer.body).toMatchObject({ success: true, message: 'Checked in' });
    const { quota_awarded, checkin_date } = answer.body.data;
    expect(quota_awarded).toBeGreaterThanOrEqual(2000);
    expect(quota_awarded).toBeLessThanOrEqual(3000);
    expect(checkin_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(await quotaOf(u.userId!)).toBe(before + quota_awarded);

    const again = await u.post('/api/user/checkin');
    expect(again.body).toMatchObject({ success: false, code: 'CHECKIN_ALREADY_DONE' });
    expect(await quotaOf(u.userId!)).toBe(before + quota_awarded);

    const logs = await db()
      .selectFrom('logs')
      .selectAll()
      .where('user_id', '=', u.userId!)
      .where('type', '=', 4)
      .execute();
    expect(logs).toHaveLength(1);
    expect(logs[0]!.quota).toBe(quota_awarded);
    expect(logs[0]!.content).toContain('签到');

    const stats = await u.get('/api/user/checkin');
    expect(stats.body).toMatchObject({
      success: true,
      data: {
        enabled: true,
        min_quota: 2000,
        max_quota: 3000,
        stats: {
          total_quota: quota_awarded,
          total_checkins: 1,
          checkin_count: 1,
          checked_in_today: true,
          records: [{ checkin_date, quota_awarded }],
        },
      },
    });
    const otherMonth = await u.get('/api/user/checkin?month=2001-01');
    expect(otherMonth.body.data.stats).toMatchObject({ checkin_count: 0, records: [], total_checkins: 1 });
    const bad = await u.get('/api/user/checkin?month=2026-13');
    expect(bad.body).toMatchObject({ success: false, code: 'CHECKIN_MONTH_INVALID' });
  });

  it('credits exactly once when many check-ins race', async () => {
    const u = await user();
    const before = await quotaOf(u.userId!);
    const answers = await Promise.all(Array.from({ length: 8 }, () => u.post('/api/user/checkin')));
    const won = answers.filter((a) => a.body.success);
    expect(won).toHaveLength(1);
    expect(answers.filter((a) => a.body.code === 'CHECKIN_ALREADY_DONE')).toHaveLength(7);
    expect(await quotaOf(u.userId!)).toBe(before + won[0]!.body.data.quota_awarded);
    const rows = await db().selectFrom('checkins').selectAll().where('user_id', '=', u.userId!).execute();
    expect(rows).toHaveLength(1);
    const logs = await db()
      .selectFrom('logs')
      .select('id')
      .where('user_id', '=', u.userId!)
      .where('type', '=', 4)
      .execute();
    expect(logs).toHaveLength(1);
  });

  it('starts a new day at midnight of quota_setting.period_timezone, and reads inverted bounds in order', async () => {
    const u = await user();
    let now = Date.parse('2026-03-10T15:59:00Z'); // 23:59 in Shanghai
    const service = new CheckinService({ db: db(), options: gateway.options, now: () => now });
    await gateway.options.setMany({
      'quota_setting.period_timezone': 'Asia/Shanghai',
      'checkin_setting.min_quota': '500',
      'checkin_setting.max_quota': '100',
    });
    try {
      const who = { id: u.userId!, username: 'x' };
      const first = await service.checkIn(who);
      expect(first.checkin_date).toBe('2026-03-10');
      expect(first.quota_awarded).toBeGreaterThanOrEqual(100);
      expect(first.quota_awarded).toBeLessThanOrEqual(500);
      await expect(service.checkIn(who)).rejects.toMatchObject({ code: 'CHECKIN_ALREADY_DONE' });
      now += 2 * 60_000; // 00:01 the next day in Shanghai, still 2026-03-10 in UTC
      expect((await service.checkIn(who)).checkin_date).toBe('2026-03-11');
      const stats = await service.stats(who.id, '2026-03');
      expect(stats.records.map((r) => r.checkin_date)).toEqual(['2026-03-11', '2026-03-10']);
      expect(stats.checked_in_today).toBe(true);
    } finally {
      await gateway.options.setMany({
        'quota_setting.period_timezone': 'UTC',
        'checkin_setting.min_quota': '2000',
        'checkin_setting.max_quota': '3000',
      });
    }
  });
});

describe('Bark and Gotify notifications', () => {
  it('saves Bark and Gotify settings, keeps the Gotify token secret, and refuses incomplete ones', async () => {
    const u = await user();
    const barkUrl = `${bark.url}/${BARK_KEY}/{{title}}/{{content}}`;
    expect((await u.put('/api/user/setting', { notify_type: 'bark', bark_url: barkUrl })).body.success).toBe(true);
    let setting = JSON.parse((await u.get('/api/user/self')).body.data.setting);
    expect(setting).toMatchObject({ notify_type: 'bark', bark_url: barkUrl });

    const missing = await u.put('/api/user/setting', { notify_type: 'gotify', gotify_url: gotify.url });
    expect(missing.body).toMatchObject({ success: false, code: 'SETTING_INVALID' });
    const badPriority = await u.put('/api/user/setting', {
      notify_type: 'gotify',
      gotify_url: gotify.url,
      gotify_token: GOTIFY_TOKEN,
      gotify_priority: 11,
    });
    expect(badPriority.body).toMatchObject({ success: false, code: 'SETTING_INVALID' });
    const saved = await u.put('/api/user/setting', {
      notify_type: 'gotify',
      gotify_url: gotify.url,
      gotify_token: GOTIFY_TOKEN,
      gotify_priority: 8,
    });
    expect(saved.body.success).toBe(true);
    setting = JSON.parse((await u.get('/api/user/self')).body.data.setting);
    expect(setting).toMatchObject({
      notify_type: 'gotify',
      gotify_url: gotify.url,
      gotify_priority: 8,
      gotify_token_set: true,
    });
    expect(JSON.stringify(setting)).not.toContain(GOTIFY_TOKEN);
    const stored = await db()
      .selectFrom('users')
      .select('setting')
      .where('id', '=', u.userId!)
      .executeTakeFirstOrThrow();
    expect(stored.setting).not.toContain(GOTIFY_TOKEN);

    expect((await u.put('/api/user/setting', { notify_type: 'bark', bark_url: 'ftp://x' })).body.code).toBe(
      'SETTING_INVALID',
    );
    expect((await u.put('/api/user/setting', { notify_type: 'pigeon' })).body.code).toBe('SETTING_INVALID');
  });

  /** A user whose wallet is just above the alert threshold, with a token; each call costs 1000. */
  async function lowWallet(setting: Record<string, unknown>) {
    const u = await user();
    const threshold = 100_000;
    expect(
      (await root.put('/api/user/', { id: u.userId, username: `h5u${userCounter}`, quota: threshold + 500 })).body
        .success,
    ).toBe(true);
    const saved = await u.put('/api/user/setting', { quota_warning_threshold: threshold, ...setting });
    expect(saved.body, JSON.stringify(saved.body)).toMatchObject({ success: true });
    const token = await u.post('/api/token/', { name: 'alerts', unlimited_quota: true });
    const openai = new OpenAI({ apiKey: token.body.data.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    upstream.behaviour = { usage: { prompt_tokens: 200, completion_tokens: 200 } };
    return () => openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  }

  it('pushes the low-quota alert through Bark with the device key in the path', async () => {
    const pushed = bark.pushes.length;
    const ask = await lowWallet({ notify_type: 'bark', bark_url: `${bark.url}/${BARK_KEY}/{{title}}/{{content}}` });
    await ask();
    await waitFor(() => bark.pushes.length === pushed + 1, 10_000);
    const push = bark.pushes.at(-1)!;
    expect(push.title).toContain('quota is running low');
    expect(push.body).toContain('below your alert threshold');
    expect(bark.refused).toBe(0);
  });

  it('pushes the low-quota alert through Gotify with the token and priority', async () => {
    const pushed = gotify.pushes.length;
    const ask = await lowWallet({
      notify_type: 'gotify',
      gotify_url: `${gotify.url}/`,
      gotify_token: GOTIFY_TOKEN,
      gotify_priority: 7,
    });
    await ask();
    await waitFor(() => gotify.pushes.length === pushed + 1, 10_000);
    expect(gotify.pushes.at(-1)).toMatchObject({ priority: 7, title: expect.stringContaining('quota') });
    expect(gotify.refused).toBe(0);
  });

  it('a wrong Bark key or Gotify token reaches the service and is refused there, not delivered', async () => {
    const [barkRefused, gotifyRefused] = [bark.refused, gotify.refused];
    const askBark = await lowWallet({ notify_type: 'bark', bark_url: `${bark.url}/wrong-key/{{title}}/{{content}}` });
    const askGotify = await lowWallet({ notify_type: 'gotify', gotify_url: gotify.url, gotify_token: 'wrong' });
    const pushed = bark.pushes.length + gotify.pushes.length;
    await Promise.all([askBark(), askGotify()]);
    await waitFor(() => bark.refused === barkRefused + 1 && gotify.refused === gotifyRefused + 1, 10_000);
    expect(bark.pushes.length + gotify.pushes.length).toBe(pushed);
  });
});

describe('Uptime Kuma status', () => {
  it('is off and empty until configured, then answers each page’s monitors in new-api’s shape, cached briefly', async () => {
    expect((await status()).uptime_kuma_enabled).toBe(false);
    expect((await client().get('/api/uptime/status')).body).toEqual({ success: true, message: '', data: [] });

    kuma.pages.set('main', {
      groups: [
        {
          name: 'APIs',
          monitors: [
            { id: 1, name: 'Gateway', beats: [0, 1, 1], uptime: 0.995 },
            { id: 2, name: 'Console', beats: [1, 1, 0], uptime: 0.5 },
          ],
        },
        { name: 'Empty', monitors: [] },
      ],
    });
    await gateway.options.setMany({
      'console_setting.uptime_kuma_enabled': 'true',
      'console_setting.uptime_kuma_groups': JSON.stringify([
        { url: `${kuma.url}/`, slug: 'main', categoryName: 'Core' },
        { url: kuma.url, slug: 'missing', categoryName: 'Gone' },
      ]),
    });
    expect((await status()).uptime_kuma_enabled).toBe(true);
    const answer = await client().get('/api/uptime/status');
    expect(answer.body).toEqual({
      success: true,
      message: '',
      data: [
        {
          categoryName: 'Core',
          monitors: [
            { name: 'Gateway', uptime: 0.995, status: 1, group: 'APIs' },
            { name: 'Console', uptime: 0.5, status: 0, group: 'APIs' },
          ],
        },
        { categoryName: 'Gone', monitors: [] },
      ],
    });
    expect(kuma.calls).toEqual(
      expect.arrayContaining(['/api/status-page/main', '/api/status-page/heartbeat/main', '/api/status-page/missing']),
    );
    const calls = kuma.calls.length;
    await client().get('/api/uptime/status');
    expect(kuma.calls.length).toBe(calls);
  });

  it('refuses a malformed page list with a stable code', async () => {
    const answer = await root.put('/api/option/', {
      key: 'console_setting.uptime_kuma_groups',
      value: JSON.stringify([{ url: kuma.url }]),
    });
    expect(answer.body).toMatchObject({ success: false, code: 'OPTION_INVALID_SHAPE' });
  });
});
