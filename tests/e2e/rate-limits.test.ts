import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../gateway/src/config.ts';
import { estimatePromptTokens } from '../../gateway/src/domain/billing/index.ts';
import { applyManagedGroup } from '../../gateway/src/domain/groups/managed.ts';
import { type Gateway, startGateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { type GatewayProcess, gatewayEnv, hasRedis, spawnGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { eventually } from '../support/wait.ts';

// Two gateways on one Postgres and Redis, as two pods: every limit must hold across both. The rate
// limits' clock is injected and shared, so a test moves past a minute without waiting for one.
let clock = 1_000_000_000;
const nextMinute = () => {
  clock += 61_000;
};
let a: Gateway;
let b: Gateway;
let upstream: MockOpenAI;
let root: DashboardClient;
let drop: () => Promise<void>;
const MODEL = 'gpt-4o-mini';

describe.skipIf(!hasPostgres() || !hasRedis())('rate limits per token, user and group across two gateways', () => {
  beforeAll(async () => {
    upstream = await startMockOpenAI();
    const database = await createTestDatabase();
    drop = database.drop;
    const env = gatewayEnv(database.options, testNamespace(), { CRITICAL_RATE_LIMIT_ENABLE: 'false' });
    const start = () =>
      startGateway(loadConfig(env, 'test'), pino({ level: 'silent' }), { rateLimitClock: () => clock });
    [a, b] = await Promise.all([start(), start()]);
    root = await setupRoot(a.url);
    const channel = await root.post('/api/channel/', {
      name: 'mock',
      type: 1,
      key: 'sk-up',
      base_url: upstream.url,
      models: `${MODEL},gpt-4o`,
      group: 'default,team,vip',
    });
    expect(channel.body.success).toBe(true);
    await option('ModelRatio', JSON.stringify({ [MODEL]: 0.075, 'gpt-4o': 1.25 }));
    await option('GroupRatio', JSON.stringify({ default: 1, team: 1, vip: 1 }));
    // Both gateways serve the channel before any count starts.
    for (const gateway of [a, b]) {
      await eventually(
        async () => gateway.options.getJson<Record<string, number>>('GroupRatio').team,
        (ratio) => ratio === 1,
        3000,
      );
    }
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await upstream?.close();
    await drop?.();
  });

  it('accepts no more than T tokens a minute for a token across both gateways, the rest 429 in OpenAI shape', async () => {
    const key = await token({ '*': { tpm: 1000 } });
    const body = chatBody(200);
    const estimate = estimatePromptTokens('openai-chat', MODEL, body) + 200;
    // The upstream uses what was estimated, so the budget holds exactly floor(T / estimate) requests.
    upstream.behaviour = { usage: { prompt_tokens: estimate - 200, completion_tokens: 200 } };
    const before = chatRequests();
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => chat(i % 2 ? a : b, key, body)));
    const accepted = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status === 429);
    expect(accepted).toHaveLength(Math.floor(1000 / estimate));
    expect(refused).toHaveLength(12 - accepted.length);
    let tokens = 0;
    for (const answer of accepted)
      tokens += ((await answer.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
    expect(tokens).toBeLessThanOrEqual(1000);
    expect(chatRequests() - before).toBe(accepted.length);
    const error = ((await refused[0]!.json()) as { error: Record<string, unknown> }).error;
    expect(error).toMatchObject({ code: 'tpm_limit_exceeded', type: 'new_api_error' });
    expect(String(error.message)).toContain('1000 tokens per minute');
    // Nothing in the window leaves it before a minute: the wait is the whole minute, give or take a second.
    const retryAfter = Number(refused[0]!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(59);
    expect(retryAfter).toBeLessThanOrEqual(60);

    nextMinute();
    expect((await chat(a, key, body)).status).toBe(200);
  });

  it('counts a request without max_tokens as its prompt plus the completion budget of its model', async () => {
    await option('quota_setting.default_completion_tokens', JSON.stringify({ default: 2048, [MODEL]: 400 }));
    await eventually(
      async () => b.options.getJson<Record<string, number>>('quota_setting.default_completion_tokens')[MODEL],
      (tokens) => tokens === 400,
      2000,
    );
    const key = await token({ '*': { tpm: 1000 } });
    const body = chatBody();
    const estimate = estimatePromptTokens('openai-chat', MODEL, body) + 400;
    // The upstream uses what was estimated: two fit in 1000, the third does not.
    upstream.behaviour = { usage: { prompt_tokens: estimate - 400, completion_tokens: 400 } };
    expect((await chat(a, key, body)).status).toBe(200);
    expect((await chat(b, key, body)).status).toBe(200);
    expect((await chat(a, key, body)).status).toBe(429);
    await option('quota_setting.default_completion_tokens', JSON.stringify({ default: 2048 }));
    upstream.behaviour = {};
  });

  it('answers a refusal in the Claude and Gemini error shapes to those clients, with Retry-After', async () => {
    const key = await token({ '*': { rpm: 1 } });
    expect((await chat(a, key, chatBody())).status).toBe(200);
    const claude = await fetch(`${b.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(claude.status).toBe(429);
    expect(Number(claude.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await claude.json()).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
    const gemini = await fetch(`${a.url}/v1beta/models/${MODEL}:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    expect(gemini.status).toBe(429);
    expect(Number(gemini.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await gemini.json()).toMatchObject({ error: { code: 429 } });
  });

  it('limits requests per minute per token, with Retry-After until the oldest request leaves the minute', async () => {
    const key = await token({ '*': { rpm: 3 } });
    const before = chatRequests();
    const first = clock;
    expect((await chat(a, key, chatBody())).status).toBe(200);
    clock += 20_000;
    expect((await chat(b, key, chatBody())).status).toBe(200);
    expect((await chat(a, key, chatBody())).status).toBe(200);
    const refused = await chat(b, key, chatBody());
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');
    // The first request leaves the window 60 s after it was admitted: 40 s from now.
    expect(Number(refused.headers.get('retry-after'))).toBe(40);
    expect(chatRequests() - before).toBe(3);
    clock = first + 60_001;
    expect((await chat(b, key, chatBody())).status).toBe(200);
    expect((await chat(a, key, chatBody())).status).toBe(429);
  });

  it('lets a per-model entry beat "*": its own limit, counted apart from the other models', async () => {
    const key = await token({ '*': { rpm: 1 }, [MODEL]: { rpm: 3 } });
    for (let i = 0; i < 3; i++) expect((await chat(i % 2 ? a : b, key, chatBody())).status).toBe(200);
    expect((await chat(a, key, chatBody())).status).toBe(429);
    // gpt-4o falls under "*": one request a minute, not spent by the gpt-4o-mini ones.
    expect((await chat(b, key, { ...chatBody(), model: 'gpt-4o' })).status).toBe(200);
    expect((await chat(a, key, { ...chatBody(), model: 'gpt-4o' })).status).toBe(429);
  });

  it('gives back at settlement what a request was estimated above its real usage', async () => {
    const key = await token({ '*': { tpm: 1000 } });
    const body = chatBody(900);
    upstream.behaviour = { usage: { prompt_tokens: 5, completion_tokens: 10 } };
    expect((await chat(a, key, body)).status).toBe(200);
    // Held: ~905 estimated; used: 15. Another 900-token request fits only because the estimate was corrected.
    const second = await chat(b, key, body);
    expect(second.status).toBe(200);
    // Now 15 + ~905 are held until that one settles too (it has): 30 in all, so a third fits as well.
    expect((await chat(a, key, body)).status).toBe(200);
    // A request that fails gives back its whole estimate.
    upstream.behaviour = { failWith: { status: 400, message: 'bad', times: 1 } };
    expect((await chat(b, key, body)).status).toBe(400);
    upstream.behaviour = { usage: { prompt_tokens: 5, completion_tokens: 10 } };
    expect((await chat(a, key, body)).status).toBe(200);
  });

  it('keeps a request whose estimate fits but whose real usage is higher counted at its real usage', async () => {
    const key = await token({ '*': { tpm: 1000 } });
    upstream.behaviour = { usage: { prompt_tokens: 600, completion_tokens: 300 } };
    expect((await chat(a, key, chatBody(100))).status).toBe(200);
    upstream.behaviour = {};
    // 900 used: a request estimated above 100 tokens no longer fits this minute.
    expect((await chat(b, key, chatBody(100))).status).toBe(429);
    nextMinute();
    expect((await chat(b, key, chatBody(100))).status).toBe(200);
  });

  it('gives the estimate back when the reservation is refused: no quota, no tokens counted', async () => {
    const poor = await newUser('rl-poor', {}, 'default', 0);
    const created = await poor.post('/api/token/', {
      name: 'poor',
      unlimited_quota: true,
      rate_limits: { '*': { tpm: 1000 } },
    });
    const key = created.body.data.key as string;
    for (let i = 0; i < 3; i++) {
      const refused = await chat(i % 2 ? a : b, key, chatBody(900));
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toMatch(/quota/);
    }
  });

  it('limits requests per minute per user, over all of its tokens', async () => {
    const user = await newUser('rl-user', { '*': { rpm: 2 } });
    const one = await userToken(user);
    const two = await userToken(user);
    expect((await chat(a, one, chatBody())).status).toBe(200);
    expect((await chat(b, two, chatBody())).status).toBe(200);
    const refused = await chat(a, two, chatBody());
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('the user allows');
  });

  it('limits a group from rate_limit_setting.groups, over every user in it', async () => {
    expect((await option('rate_limit_setting.groups', JSON.stringify({ team: { '*': { rpm: 3 } } }))).success).toBe(
      true,
    );
    const first = await userToken(await newUser('rl-team-1', {}, 'team'));
    const second = await userToken(await newUser('rl-team-2', {}, 'team'));
    await eventually(
      async () => b.options.getJson<Record<string, unknown>>('rate_limit_setting.groups').team,
      (team) => team !== undefined,
      2000,
    );
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await chat(i % 2 ? a : b, i % 2 ? first : second, chatBody())).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    // Users of other groups are not counted in it.
    expect((await chat(a, await token({}), chatBody())).status).toBe(200);
  });

  it('limits a group declared by a Group resource (the operator writes the row)', async () => {
    const applied = await applyManagedGroup(
      { db: a.store.db, bus: a.cluster.bus },
      { namespace: 'ai', name: 'vip', uid: 'uid-vip' },
      { name: 'vip', ratio: 1, rateLimits: { [MODEL]: { tpm: 2000 } } },
    );
    expect(applied).toMatchObject({ ok: true });
    for (const gateway of [a, b]) {
      await eventually(
        async () => gateway.options.getJson<Record<string, unknown>>('rate_limit_setting.groups').vip,
        (vip) => vip !== undefined,
        2000,
      );
    }
    const key = await userToken(await newUser('rl-vip', {}, 'vip'));
    upstream.behaviour = { usage: { prompt_tokens: 10, completion_tokens: 1500 } };
    expect((await chat(a, key, chatBody(1500))).status).toBe(200);
    const refused = await chat(b, key, chatBody(1500));
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('the group allows');
  });

  it('counts refusals per scope and kind in the metrics, on the gateway that refused', async () => {
    const texts = await Promise.all([a, b].map(async (g) => (await fetch(`${g.metricsUrl}/metrics`)).text()));
    const refusals = (scope: string, kind: string) =>
      texts
        .flatMap((text) => text.split('\n'))
        .filter((line) => line.startsWith(`tollgate_relay_rate_limited_total{scope="${scope}",kind="${kind}"`))
        .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    // What the tests above were refused: token TPM in the first, second and seventh, token RPM 2 + 2 + 2, group TPM in the last.
    expect(refusals('token', 'tpm')).toBeGreaterThanOrEqual(8);
    expect(refusals('token', 'rpm')).toBe(6);
    expect(refusals('user', 'rpm')).toBe(1);
    expect(refusals('group', 'rpm')).toBe(2);
    expect(refusals('group', 'tpm')).toBe(1);
  });
});

async function option(key: string, value: string) {
  const answer = await root.put('/api/option/', { key, value });
  expect(answer.body.success, JSON.stringify(answer.body)).toBe(true);
  return answer.body as { success: boolean };
}

/** A new token of root's with these limits; its key. */
async function token(rateLimits: Record<string, { rpm?: number; tpm?: number }>): Promise<string> {
  const created = await root.post('/api/token/', { name: 'limited', unlimited_quota: true, rate_limits: rateLimits });
  expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  expect(created.body.data.rate_limits).toEqual(rateLimits);
  return created.body.data.key as string;
}

/** A user made by root, with quota, the given limits and group; signed in. */
async function newUser(
  username: string,
  rateLimits: object,
  group = 'default',
  quota = 50_000_000,
): Promise<DashboardClient> {
  expect((await root.post('/api/user/', { username, password: 'password-1' })).body.success).toBe(true);
  const found = await root.get(`/api/user/search?keyword=${username}`);
  const id = (found.body.data.items as Array<{ id: number; username: string }>).find(
    (u) => u.username === username,
  )!.id;
  const updated = await root.put('/api/user/', { id, quota, group, rate_limits: rateLimits });
  expect(updated.body.success, JSON.stringify(updated.body)).toBe(true);
  expect(updated.body.data.rate_limits).toEqual(rateLimits);
  const client = new DashboardClient(a.url);
  expect((await client.login(username, 'password-1')).body.success).toBe(true);
  return client;
}

async function userToken(user: DashboardClient): Promise<string> {
  const created = await user.post('/api/token/', { name: 'mine', unlimited_quota: true });
  expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  return created.body.data.key as string;
}

function chatBody(maxTokens?: number): Record<string, unknown> {
  return {
    model: MODEL,
    messages: [{ role: 'user', content: 'hi' }],
    ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
  };
}

function chat(gateway: Gateway, key: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'accept-language': 'en' },
    body: JSON.stringify(body),
  });
}

const chatRequests = () => upstream.requests.filter((r) => r.path === '/v1/chat/completions').length;

describe.skipIf(!hasPostgres() || !hasRedis())('a TPM limit across two gateway processes', () => {
  it('accepts no more than T tokens in the minute across both, the rest 429 with Retry-After', async () => {
    const mock = await startMockOpenAI();
    const database = await createTestDatabase();
    const env = gatewayEnv(database.options, testNamespace());
    const processes: GatewayProcess[] = await Promise.all([spawnGateway(env), spawnGateway(env)]);
    try {
      const [one, two] = processes as [GatewayProcess, GatewayProcess];
      const admin = await setupRoot(one.url);
      await admin.post('/api/channel/', { name: 'mock', type: 1, key: 'sk-up', base_url: mock.url, models: MODEL });
      await admin.put('/api/option/', { key: 'ModelRatio', value: JSON.stringify({ [MODEL]: 0.075 }) });
      const created = await admin.post('/api/token/', {
        name: 'tpm',
        unlimited_quota: true,
        rate_limits: { [MODEL]: { tpm: 2000 } },
      });
      const key = created.body.data.key as string;
      const body = chatBody(300);
      const estimate = estimatePromptTokens('openai-chat', MODEL, body) + 300;
      mock.behaviour = { usage: { prompt_tokens: estimate - 300, completion_tokens: 300 } };
      // Both processes serve the model before the count starts.
      for (const gateway of processes) {
        await eventually(
          async () => (await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status,
          (status) => status === 200,
          3000,
        );
      }
      const send = (url: string) =>
        fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => send(i % 2 ? one.url : two.url)));
      const accepted = answers.filter((r) => r.status === 200);
      expect(accepted).toHaveLength(Math.floor(2000 / estimate));
      expect(answers.filter((r) => r.status === 429)).toHaveLength(16 - accepted.length);
      let tokens = 0;
      for (const answer of accepted)
        tokens += ((await answer.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
      expect(tokens).toBeLessThanOrEqual(2000);
      const refused = answers.find((r) => r.status === 429)!;
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('tpm_limit_exceeded');
      expect(mock.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(accepted.length);
    } finally {
      for (const p of processes) await p.stop();
      await mock.close();
      await database.drop();
    }
  });
});
