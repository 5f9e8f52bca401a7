import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../gateway/src/config.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { closedPort, secretWatch } from '../support/secrets.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let admin: DashboardClient;
let member: DashboardClient;
let upstream: Server;
let upstreamUrl: string;
let deadUrl: string;

/** Every plain key handed to the gateway, and every answer it gave: no answer may contain a key. */
const watch = secretWatch();
const { secret, recording } = watch;
/** What the mock providers were asked (path and query). */
const asked: string[] = [];

/**
 * Mock providers, each under its own path prefix, speaking its real balance protocol: OpenAI's legacy
 * dashboard, DeepSeek, OpenRouter, SiliconFlow and Moonshot. Keys not starting with sk-good are refused
 * the way OpenAI refuses them, naming the key.
 */
function startProviders(): Promise<Server> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://upstream');
    asked.push(url.pathname + url.search);
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    const bearer = request.headers.authorization?.replace(/^Bearer /, '') ?? '';
    if (url.pathname.startsWith('/bad-json/')) return response.end('<html>502 Bad Gateway</html>');
    if (url.pathname.startsWith('/wrong-shape/')) return json(200, { object: 'list', data: [] });
    if (!bearer.startsWith('sk-good')) {
      return json(401, { error: { message: `Incorrect API key provided: ${bearer}`, type: 'invalid_request_error' } });
    }
    switch (url.pathname) {
      case '/openai/v1/dashboard/billing/subscription':
        return json(200, {
          object: 'billing_subscription',
          has_payment_method: url.searchParams.size === 0 && bearer.includes('payg'),
          soft_limit_usd: 100,
          hard_limit_usd: 120,
          system_hard_limit_usd: 120,
          access_until: 0,
        });
      case '/openai/v1/dashboard/billing/usage':
        if (!/^\d{4}-\d{2}-\d{2}$/.test(url.searchParams.get('start_date') ?? '')) return json(400, { error: 'dates' });
        if (!/^\d{4}-\d{2}-\d{2}$/.test(url.searchParams.get('end_date') ?? '')) return json(400, { error: 'dates' });
        return json(200, { object: 'list', daily_costs: [], total_usage: 2050 });
      case '/deepseek/user/balance':
        return json(200, {
          is_available: true,
          balance_infos: [
            { currency: 'CNY', total_balance: '110.00', granted_balance: '10.00', topped_up_balance: '100.00' },
            { currency: 'USD', total_balance: '5.50', granted_balance: '0.00', topped_up_balance: '5.50' },
          ],
        });
      case '/openrouter/v1/credits':
        return json(200, { data: { total_credits: 100.5, total_usage: 25.75 } });
      case '/siliconflow/v1/user/info':
        return json(200, {
          code: 20000,
          message: 'OK',
          status: true,
          data: {
            id: 'userid',
            name: 'username',
            isAdmin: false,
            balance: '0.88',
            status: 'normal',
            chargeBalance: '88.00',
            totalBalance: '88.88',
          },
        });
      case '/moonshot/v1/users/me/balance':
        return json(200, {
          code: 0,
          data: { available_balance: 49.6, voucher_balance: 46.6, cash_balance: 3 },
          scode: '0x0',
          status: true,
        });
    }
    json(404, { error: { message: 'no such path' } });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let counter = 0;
async function create(type: number, base: string, extra: Record<string, unknown> = {}): Promise<number> {
  const answer = await root.post('/api/channel/', {
    name: `balance-${++counter}`,
    type,
    key: secret(),
    base_url: base,
    models: 'gpt-4o-mini',
    ...extra,
  });
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ success: true });
  return answer.body.data.id;
}

const clearChannels = () => gateway.store.db.deleteFrom('channels').execute();
const nowSeconds = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  upstream = await startProviders();
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  deadUrl = `http://127.0.0.1:${await closedPort()}`;

  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { GLOBAL_API_RATE_LIMIT_ENABLE: 'false' }),
  );
  root = recording(await setupRoot(gateway.url));
  // 8 yuan to the dollar keeps the expected amounts exact.
  expect((await root.put('/api/option/', { key: 'USDExchangeRate', value: '8' })).body.success).toBe(true);
  member = new DashboardClient(gateway.url);
  expect((await member.post('/api/user/register', { username: 'member', password: 'password-1' })).body.success).toBe(
    true,
  );
  expect((await member.login('member', 'password-1')).body.success).toBe(true);
  admin = recording(new DashboardClient(gateway.url));
  expect((await admin.post('/api/user/register', { username: 'baladmin', password: 'password-1' })).body.success).toBe(
    true,
  );
  expect((await admin.login('baladmin', 'password-1')).body.success).toBe(true);
  expect((await root.post('/api/user/manage', { id: admin.userId, action: 'promote' })).body.success).toBe(true);
});

afterAll(async () => {
  // No answer ever carried a channel key, not even the ones upstreams echoed in their refusals.
  expect(watch.leaks()).toEqual([]);
  await gateway?.stop();
  await drop?.();
  upstream?.closeAllConnections();
  upstream?.close();
});

beforeEach(async () => {
  await clearChannels();
  asked.length = 0;
});

describe('access', () => {
  it.each(['/api/channel/update_balance/1', '/api/channel/update_balance'])(
    'refuses a normal user: %s',
    async (path) => {
      const answer = await member.get(path);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ success: false, code: 'FORBIDDEN' });
    },
  );

  it('refuses callers who are not signed in', async () => {
    expect((await new DashboardClient(gateway.url).get('/api/channel/update_balance')).status).toBe(401);
  });
});

describe('GET /api/channel/update_balance/:id', () => {
  it.each([
    ['OpenAI legacy dashboard: hard limit minus usage in cents', 1, '/openai', 120 - 20.5],
    ['OpenAI-style Custom upstream with a /v1 base URL', 8, '/openai/v1', 99.5],
    ['DeepSeek: yuan and dollars added up', 43, '/deepseek', 110 / 8 + 5.5],
    ['OpenRouter: credits minus usage', 20, '/openrouter', 100.5 - 25.75],
    ['SiliconFlow: yuan', 40, '/siliconflow', 88.88 / 8],
    ['Moonshot: yuan', 25, '/moonshot', 49.6 / 8],
  ])('%s', async (_name, type, path, expected) => {
    const id = await create(type, upstreamUrl + path);
    const before = nowSeconds();
    const answer = await admin.get(`/api/channel/update_balance/${id}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: true, message: '' });
    expect(answer.body.balance).toBeCloseTo(expected, 6);
    expect(answer.body.data).toMatchObject({ id, balance: answer.body.balance });
    expect(answer.body.data.balance_updated_time).toBeGreaterThanOrEqual(before);

    // Stored on the channel, and shown with the channel.
    const channel = (await admin.get(`/api/channel/${id}`)).body.data;
    expect(channel.balance).toBeCloseTo(expected, 6);
    expect(channel.balance_updated_time).toBe(answer.body.data.balance_updated_time);
  });

  it('asks the legacy usage endpoint over the last 100 days', async () => {
    const id = await create(1, `${upstreamUrl}/openai`);
    expect((await admin.get(`/api/channel/update_balance/${id}/`)).body.success).toBe(true);
    const usage = asked.find((line) => line.startsWith('/openai/v1/dashboard/billing/usage?'));
    const query = new URL(`http://x${usage}`).searchParams;
    const days =
      (Date.parse(query.get('end_date') as string) - Date.parse(query.get('start_date') as string)) / 86_400_000;
    expect(days).toBe(100);
    expect(Date.parse(query.get('end_date') as string)).toBeGreaterThan(Date.now());
  });

  it('uses the new exchange rate as soon as it changes', async () => {
    const id = await create(40, `${upstreamUrl}/siliconflow`);
    expect((await root.put('/api/option/', { key: 'USDExchangeRate', value: '4' })).body.success).toBe(true);
    try {
      expect((await admin.get(`/api/channel/update_balance/${id}`)).body.balance).toBeCloseTo(22.22, 6);
    } finally {
      await root.put('/api/option/', { key: 'USDExchangeRate', value: '8' });
    }
  });

  it('asks a Tollgate upstream with a token key through its legacy billing endpoints', async () => {
    // $10 of quota at the default 500,000 quota per dollar, nothing used yet.
    const token = await root.post('/api/token/', { name: 'upstream', remain_quota: 5_000_000, unlimited_quota: false });
    expect(token.body.success).toBe(true);
    const key = token.body.data.key as string;
    // Creating a token answers its key to its owner, rightly; every later answer must not.
    watch.forgetLastAnswer();
    watch.remember(key);
    const id = await create(8, gateway.url, { key });
    await expect
      .poll(async () => (await admin.get(`/api/channel/update_balance/${id}`)).body.balance, { timeout: 5_000 })
      .toBeCloseTo(10, 6);
  });

  it('asks with the first enabled key of a multi-key channel', async () => {
    const bad = secret('sk-bad');
    const good = secret();
    const id = await create(43, `${upstreamUrl}/deepseek`, { key: `${bad}\n${good}` });
    const refused = await admin.get(`/api/channel/update_balance/${id}`);
    expect(refused.body.code).toBe('UPSTREAM_REFUSED');
    // The first key is disabled: the second one is asked.
    await gateway.store.db
      .updateTable('channels')
      .set({
        channel_info: JSON.stringify({
          is_multi_key: true,
          multi_key_size: 2,
          multi_key_status_list: { 0: 3 },
          multi_key_polling_index: 0,
          multi_key_mode: 'random',
        }),
      })
      .where('id', '=', id)
      .execute();
    const answer = await admin.get(`/api/channel/update_balance/${id}`);
    expect(answer.body.balance).toBeCloseTo(110 / 8 + 5.5, 6);
  });

  it('refuses types without a balance API clearly, never a 500', async () => {
    const id = await create(14, upstreamUrl); // Anthropic
    const answer = await root.call('GET', `/api/channel/update_balance/${id}`, undefined, { 'accept-language': 'zh' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: false, code: 'CHANNEL_BALANCE_UNSUPPORTED' });
    expect(answer.body.message).toContain('14 Anthropic');
    expect(asked).toEqual([]);
    expect((await admin.get(`/api/channel/${id}`)).body.data.balance_updated_time).toBe(0);
  });

  it('passes on the upstream’s refusal without the key it echoed', async () => {
    const key = secret('sk-bad');
    const id = await create(1, `${upstreamUrl}/openai`, { key });
    const answer = await admin.get(`/api/channel/update_balance/${id}`);
    expect(answer.status).toBe(200);
    expect(answer.body.code).toBe('UPSTREAM_REFUSED');
    expect(answer.body.message).toContain('HTTP 401');
    expect(answer.body.message).toContain('Incorrect API key provided: ***');
    expect(answer.body.message).not.toContain(key);
    expect((await admin.get(`/api/channel/${id}`)).body.data.balance_updated_time).toBe(0);
  });

  it('says clearly when the upstream is down', async () => {
    const id = await create(43, deadUrl);
    const answer = await admin.get(`/api/channel/update_balance/${id}`);
    expect(answer.status).toBe(200);
    expect(answer.body.code).toBe('UPSTREAM_UNREACHABLE');
    expect(answer.body.message).toContain(deadUrl);
  });

  it.each([
    ['not JSON', '/bad-json', 20],
    ['JSON of another shape', '/wrong-shape', 43],
    ['JSON of another shape (legacy dashboard)', '/wrong-shape', 1],
  ])('says the balance is unreadable when the upstream answers %s', async (_name, path, type) => {
    const id = await create(type, upstreamUrl + path);
    const answer = await admin.get(`/api/channel/update_balance/${id}`);
    expect(answer.status).toBe(200);
    expect(answer.body.code).toBe('UPSTREAM_BALANCE_UNREADABLE');
  });

  it('answers not found for a channel that does not exist', async () => {
    const answer = await admin.get('/api/channel/update_balance/999999');
    expect(answer.status).toBe(200);
    expect(answer.body.code).toBe('CHANNEL_NOT_FOUND');
  });
});

describe('GET /api/channel/update_balance', () => {
  it('refreshes every enabled channel; failures and unsupported types do not stop the rest', async () => {
    const openai = await create(1, `${upstreamUrl}/openai`);
    const deepseek = await create(43, `${upstreamUrl}/deepseek`);
    const moonshot = await create(25, `${upstreamUrl}/moonshot`);
    const refused = await create(20, `${upstreamUrl}/openrouter`, { key: secret('sk-bad') });
    const down = await create(40, deadUrl);
    const anthropic = await create(14, upstreamUrl);
    const disabled = await create(20, `${upstreamUrl}/openrouter`, { status: 2 });

    const answer = await admin.get('/api/channel/update_balance');
    expect(answer.status).toBe(200);
    expect(answer.body.success).toBe(true);
    expect(answer.body.data).toMatchObject({ total: 6, updated: 3, skipped: 1 });
    expect(answer.body.data.failed).toEqual([
      expect.objectContaining({ id: refused, code: 'UPSTREAM_REFUSED' }),
      expect.objectContaining({ id: down, code: 'UPSTREAM_UNREACHABLE' }),
    ]);
    expect(answer.body.message).toContain('3');

    const channel = async (id: number) => (await admin.get(`/api/channel/${id}`)).body.data;
    expect((await channel(openai)).balance).toBeCloseTo(99.5, 6);
    expect((await channel(deepseek)).balance).toBeCloseTo(19.25, 6);
    expect((await channel(moonshot)).balance).toBeCloseTo(6.2, 6);
    for (const id of [refused, down, anthropic, disabled]) {
      expect((await channel(id)).balance_updated_time).toBe(0);
    }
    // The disabled channel's upstream was never asked.
    expect(asked.filter((line) => line.startsWith('/openrouter/'))).toHaveLength(1);
  });

  it('answers an empty summary when there is no channel', async () => {
    const answer = await admin.get('/api/channel/update_balance');
    expect(answer.body).toMatchObject({
      success: true,
      data: { total: 0, updated: 0, skipped: 0, failed: [] },
    });
  });
});

describe('CHANNEL_UPDATE_FREQUENCY', () => {
  it('is off unless set, in minutes when set, and refused when not a positive integer', () => {
    expect(loadConfig({}).channelBalanceIntervalMs).toBeUndefined();
    expect(loadConfig({ CHANNEL_UPDATE_FREQUENCY: '30' }).channelBalanceIntervalMs).toBe(1_800_000);
    for (const bad of ['0', '-5', '1.5', 'hourly']) {
      expect(() => loadConfig({ CHANNEL_UPDATE_FREQUENCY: bad })).toThrow(ConfigError);
    }
  });
});
