import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../gateway/src/config.ts';
import { type Gateway, startGateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { gatewayEnv, hasRedis, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { eventually } from '../support/wait.ts';

/**
 * Periodic quotas end to end (issue 17): two gateways on one Postgres and Redis, both reading one
 * injected clock, serve a key whose token may spend 5 calls' worth a day in Shanghai time. At the
 * zone's midnight the new day starts at zero — once, whichever gateway serves — and the books of the
 * consume logs, the user, the token, the channel and the period rows agree to the unit.
 */

const MODEL = 'gpt-4o-mini';
/** ModelPrice 0.002 USD × 500,000 quota per USD: every call reserves and is charged 1,000. */
const PER_CALL = 1_000;
const DAILY = 5 * PER_CALL;
const WALLET = 100 * PER_CALL;

let now = Date.parse('2026-11-26T15:59:00Z'); // 23:59 in Shanghai
let gateways: [Gateway, Gateway];
let upstream: MockOpenAI;
let db: pg.Client;
let drop: () => Promise<void>;
let root: DashboardClient;
let owner: DashboardClient;
let key: string;
let tokenId: number;
let userId: number;

const start = (env: Record<string, string>) =>
  startGateway(loadConfig(env, 'test'), pino({ level: 'silent' }), { clock: () => now });

beforeAll(async () => {
  upstream = await startMockOpenAI();
  const database = await createTestDatabase();
  drop = database.drop;
  db = new pg.Client({ connectionString: database.url });
  await db.connect();
  const env = gatewayEnv(database.options, testNamespace(), { GLOBAL_API_RATE_LIMIT: '100000' });
  gateways = (await Promise.all([start(env), start(env)])) as [Gateway, Gateway];
  const [a] = gateways;
  root = await setupRoot(a.url);
  const channel = await root.post('/api/channel/', {
    name: 'mock',
    type: 1,
    key: 'sk-up',
    base_url: upstream.url,
    models: MODEL,
  });
  expect(channel.body.success).toBe(true);
  for (const [option, value] of Object.entries({
    ModelPrice: JSON.stringify({ [MODEL]: 0.002 }),
    'quota_setting.period_timezone': 'Asia/Shanghai',
  })) {
    expect((await root.put('/api/option/', { key: option, value })).body.success).toBe(true);
  }
  expect((await root.post('/api/user/', { username: 'daily', password: 'password-1' })).body.success).toBe(true);
  userId = (await db.query<{ id: number }>(`select id from users where username = 'daily'`)).rows[0]!.id;
  expect((await root.put('/api/user/', { id: userId, quota: WALLET })).body.success).toBe(true);
  owner = new DashboardClient(a.url);
  expect((await owner.login('daily', 'password-1')).body.success).toBe(true);
  const token = await owner.post('/api/token/', { name: 'daily', unlimited_quota: true, daily_quota_limit: DAILY });
  expect(token.body).toMatchObject({ success: true, data: { daily_quota_limit: DAILY, weekly_quota_limit: 0 } });
  key = String(token.body.data.key);
  tokenId = token.body.data.id;
  // Both gateways know the channel, the price and the zone before the first request.
  for (const gateway of gateways) {
    await eventually(
      async () => (await new DashboardClient(gateway.url).get('/api/pricing')).body,
      (p) => p.data?.some((item: any) => item.model_name === MODEL && item.model_price === 0.002),
      5000,
    );
    await eventually(
      async () => gateway.options.get('quota_setting.period_timezone'),
      (zone) => zone === 'Asia/Shanghai',
      5000,
    );
  }
});

afterAll(async () => {
  await Promise.all(gateways?.map((g) => g.stop()) ?? []);
  await db?.end();
  await drop?.();
  await upstream?.close();
});

const chat = (gateway: Gateway, apiKey = key) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'accept-language': 'en' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
  });

/** `count` requests at once, alternating between the two gateways. */
async function burst(count: number) {
  const answers = await Promise.all(Array.from({ length: count }, (_, i) => chat(gateways[i % 2]!)));
  return Promise.all(
    answers.map(async (answer) => ({
      status: answer.status,
      retryAfter: answer.headers.get('retry-after'),
      body: (await answer.json()) as any,
    })),
  );
}

const periodRows = async () =>
  (
    await db.query<{ period: string; quota: string; requests: number }>(
      `select period, quota, requests from period_usage where holder_kind = 'token' and holder_id = $1 order by period`,
      [tokenId],
    )
  ).rows.map((r) => ({ period: r.period, quota: Number(r.quota), requests: r.requests }));

describe.skipIf(!hasPostgres() || !hasRedis())('a daily quota across midnight with two gateways', () => {
  it('admits exactly the daily quota from both gateways and refuses the rest 429 until midnight in the zone', async () => {
    const answers = await burst(12);
    const admitted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    expect(admitted).toHaveLength(5);
    expect(refused).toHaveLength(7);
    for (const answer of refused) {
      expect(answer.retryAfter).toBe('60');
      expect(answer.body.error).toMatchObject({ code: 'period_quota_exceeded' });
      expect(answer.body.error.message).toContain("token's daily quota limit is used up");
    }
    // The same refusal in Claude's shape on its route.
    const claude = await fetch(`${gateways[1].url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(claude.status).toBe(429);
    expect(claude.headers.get('retry-after')).toBe('60');
    expect(await claude.json()).toMatchObject({
      type: 'error',
      error: { message: expect.stringContaining('令牌的每日额度上限已用尽') },
    });

    const list = await owner.get('/api/token/');
    expect(list.body.data.items[0]).toMatchObject({
      id: tokenId,
      daily_quota_limit: DAILY,
      period_usage: {
        daily: { period: '2026-11-26', used_quota: DAILY, used_requests: 5, remain_quota: 0, quota_limit: DAILY },
      },
    });
  });

  it('starts the new day at zero once, on both gateways, at midnight of the zone', async () => {
    now = Date.parse('2026-11-26T16:00:00Z'); // 00:00 on the 27th in Shanghai
    const first = await burst(12);
    expect(first.filter((a) => a.status === 200)).toHaveLength(5);
    // Later that day, on either gateway, nothing resets again.
    now = Date.parse('2026-11-26T17:30:00Z');
    const later = await burst(4);
    expect(later.map((a) => a.status)).toEqual([429, 429, 429, 429]);
    expect(later[0]!.retryAfter).toBe(String(22.5 * 3600));
    expect(await periodRows()).toEqual([
      { period: 'd:2026-11-26', quota: DAILY, requests: 5 },
      { period: 'd:2026-11-27', quota: DAILY, requests: 5 },
    ]);
  });

  it('holds a user’s weekly request limit across both gateways and shows it on the personal page', async () => {
    const set = await root.put('/api/user/', { id: userId, weekly_request_limit: 3 });
    expect(set.body).toMatchObject({ success: true, data: { weekly_request_limit: 3, daily_quota_limit: 0 } });
    const bad = await root.put('/api/user/', { id: userId, monthly_quota_limit: 1.5 });
    expect(bad.body).toMatchObject({ success: false });
    // A second key of the same user, without limits of its own: the user's limit binds.
    const second = await owner.post('/api/token/', { name: 'second', unlimited_quota: true });
    const secondKey = String(second.body.data.key);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(gateways[i % 2]!, secondKey)));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
    const refused = answers.find((answer) => answer.status === 429)!;
    expect(((await refused.json()) as any).error.message).toContain("user's weekly request limit is used up");
    // Monday 30 November 00:00 in Shanghai.
    expect(refused.headers.get('retry-after')).toBe(String(Date.parse('2026-11-29T16:00:00Z') / 1000 - now / 1000));
    // The playground spends the same user's budget.
    const playground = await owner.post('/pg/chat/completions', {
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect([playground.status, playground.headers.get('retry-after')]).toEqual([
      429,
      refused.headers.get('retry-after'),
    ]);
    expect(JSON.stringify(playground.body)).toContain('period_quota_exceeded');
    const self = await owner.get('/api/user/self');
    expect(self.body.data).toMatchObject({
      weekly_request_limit: 3,
      period_usage: {
        weekly: { period: '2026-W48', used_requests: 3, request_limit: 3, remain_requests: 0, remain_quota: null },
      },
    });
  });

  it('balances the books: consume logs, user, token, channel and period rows agree to the unit', async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    const { rows } = await db.query<Record<string, string>>(
      `select (select coalesce(sum(quota), 0) from logs where type = 2) as logged,
              (select count(*) from logs where type = 2) as logs,
              (select used_quota from users where id = $1) as user_used,
              (select quota from users where id = $1) as wallet,
              (select used_quota from tokens where id = $2) as token_used,
              (select used_quota from channels limit 1) as channel_used,
              (select coalesce(sum(quota), 0) from period_usage where holder_kind = 'token' and holder_id = $2) as token_period,
              (select coalesce(sum(quota), 0) from period_usage where holder_kind = 'user' and holder_id = $1) as user_period`,
      [userId, tokenId],
    );
    const books = Object.fromEntries(Object.entries(rows[0]!).map(([k, v]) => [k, Number(v)]));
    // Ten calls on the first key over two days, three on the second under the user's weekly limit.
    const total = 2 * DAILY + 3 * PER_CALL;
    expect(books).toEqual({
      logged: total,
      logs: 13,
      user_used: total,
      wallet: WALLET - total,
      token_used: 2 * DAILY,
      channel_used: total,
      token_period: 2 * DAILY,
      user_period: 3 * PER_CALL,
    });
  });
});
