import pg from 'pg';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { type GatewayProcess, gatewayEnv, hasRedis, spawnGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { eventually, sleep } from '../support/wait.ts';

/**
 * The must-hold load test of the quota ledger (DESIGN.md §3): two gateway processes on one Postgres
 * and one Redis spend one account's quota under 500 concurrent requests. After a graceful stop of
 * both, the books must balance to the unit: what the account lost is what the consume logs say,
 * what the user, token and channel counters say, and at most one request's settle above its quota.
 */

const MODEL = 'gpt-4o-mini';
/** ModelPrice in USD per call: 0.002 × 500,000 quota per USD = 1,000 quota, reserved and settled alike. */
const PRICE_USD = 0.002;
/** What every successful request is charged, in either pricing mode. */
const PER_CALL = 1_000;
/**
 * Ratio pricing: the mock reports 100 prompt and 150 completion tokens, billed (100 + 150 × 2) × 2.5
 * = 1,000; the request sends max_tokens 200, so it reserves (500 PreConsumedQuota + 200) × 2.5 = 1,750
 * and gives 750 back when it settles.
 */
const RATIO = { model: 2.5, completion: 2, usage: { prompt_tokens: 100, completion_tokens: 150 }, maxTokens: 200 };
const RATIO_RESERVE = 1_750;
/**
 * Ratio pricing that reserves less than it charges: no max_tokens and no completion budget
 * (quota_setting.default_completion_tokens 0), so a request reserves the PreConsumedQuota floor
 * (500 tokens × ratio 1 = 500) and is charged (1,000 + 1,000) × 1 = 2,000.
 */
const UNDER = { usage: { prompt_tokens: 1000, completion_tokens: 1000 }, settle: 2_000 };
/** Enough for 100 requests out of the 500 sent. */
const QUOTA = 100 * PER_CALL;
const REQUESTS = 500;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

interface Cluster {
  gateways: [GatewayProcess, GatewayProcess];
  db: pg.Client;
  upstream: MockOpenAI;
  pricing: Pricing;
  /** The API key the load uses, its token and user. */
  key: string;
  tokenId: number;
  userId: number;
  channelId: number;
}

type Binding = 'token' | 'wallet';
/** `per-call`: reserved == settled; `ratio`: each request reserves more than it is charged; `under`: less. */
type Pricing = 'per-call' | 'ratio' | 'under';

/**
 * A fresh database, two gateway processes on it and the test Redis, a mock upstream as the only
 * channel, a price (`pricing`), and a key whose spendable quota is `quota`: the token's own quota
 * (`token`, the owner root with a wallet of 100,000,000), or the wallet of a user whose token is
 * unlimited (`wallet`).
 */
async function startCluster(binding: Binding, pricing: Pricing = 'per-call', quota = QUOTA): Promise<Cluster> {
  const upstream = await startMockOpenAI();
  cleanups.push(() => upstream.close());
  // Streams take a few chunk delays, so requests overlap and some are in flight at any moment.
  upstream.behaviour = { chunkDelayMs: 10, usage: pricing === 'under' ? UNDER.usage : RATIO.usage };
  const database = await createTestDatabase();
  cleanups.push(database.drop);
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  cleanups.push(() => db.end());
  const env = gatewayEnv(database.options, testNamespace(), { DATABASE_POOL_MAX: '10' });
  const started = await Promise.all([spawnGateway(env), spawnGateway(env)]);
  for (const gateway of started) {
    cleanups.push(async () => {
      if (gateway.child.exitCode === null && gateway.child.signalCode === null) await gateway.stop('SIGKILL');
    });
  }
  const gateways = started as [GatewayProcess, GatewayProcess];
  const [a] = gateways;

  const root = await setupRoot(a.url);
  const channel = await root.post('/api/channel/', {
    name: 'mock',
    type: 1,
    key: 'sk-up',
    base_url: upstream.url,
    models: MODEL,
  });
  expect(channel.body.success).toBe(true);
  const ratio = pricing === 'under' ? { model: 1, completion: 1 } : RATIO;
  const prices =
    pricing === 'per-call'
      ? { ModelPrice: { [MODEL]: PRICE_USD } }
      : {
          ModelPrice: {},
          ModelRatio: { [MODEL]: ratio.model },
          CompletionRatio: { [MODEL]: ratio.completion },
          ...(pricing === 'under' ? { 'quota_setting.default_completion_tokens': { default: 0 } } : {}),
        };
  for (const [key, value] of Object.entries(prices)) {
    expect((await root.put('/api/option/', { key, value: JSON.stringify(value) })).body.success).toBe(true);
  }

  let owner = root;
  if (binding === 'wallet') {
    const created = await root.post('/api/user/', { username: 'wallet', password: 'password-1' });
    expect(created.body.success).toBe(true);
    const { rows } = await db.query<{ id: number }>(`select id from users where username = 'wallet'`);
    const id = rows[0]!.id;
    expect((await root.put('/api/user/', { id, quota })).body.success).toBe(true);
    owner = new DashboardClient(a.url);
    expect((await owner.login('wallet', 'password-1')).body.success).toBe(true);
  }
  const token = await owner.post(
    '/api/token/',
    binding === 'token'
      ? { name: 'load', remain_quota: quota, unlimited_quota: false }
      : { name: 'load', unlimited_quota: true },
  );
  expect(token.body.success).toBe(true);
  const key = String(token.body.data.key);
  const { rows: ids } = await db.query<{ token_id: number; user_id: number; channel_id: number }>(
    `select t.id as token_id, t.user_id, (select id from channels limit 1) as channel_id from tokens t where t.name = 'load'`,
  );

  // Both processes know the channel and the price before the load starts (changes travel over the bus).
  for (const gateway of gateways) {
    const models = await eventually(
      async () => {
        const answer = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
        return (await answer.json()) as { data?: unknown[] };
      },
      (m) => m.data?.length === 1,
      5000,
    );
    expect(models.data).toHaveLength(1);
    const expected =
      pricing === 'per-call'
        ? { model_name: MODEL, quota_type: 1, model_price: PRICE_USD }
        : { model_name: MODEL, quota_type: 0, model_ratio: ratio.model, completion_ratio: ratio.completion };
    const catalogue = await eventually(
      async () => (await new DashboardClient(gateway.url).get('/api/pricing')).body,
      (p) => p.data?.some((item: any) => Object.entries(expected).every(([k, v]) => item[k] === v)),
      5000,
    );
    expect(catalogue.data).toContainEqual(expect.objectContaining(expected));
  }
  return {
    gateways,
    db,
    upstream,
    pricing,
    key,
    tokenId: ids[0]!.token_id,
    userId: ids[0]!.user_id,
    channelId: ids[0]!.channel_id,
  };
}

interface Answer {
  gateway: number;
  stream: boolean;
  /** The HTTP status, when one arrived. */
  status?: number;
  body?: string;
  /** A connection error (no status), or a body cut after the status (with it). */
  error?: string;
  /** When the answer was complete (performance.now()). */
  at?: number;
}

/**
 * Sends `count` chat requests, alternating between the gateways, every third one streamed. All
 * start at once unless `spreadMs` spaces their starts over that long. `onAnswer` sees each answer.
 */
async function load(
  cluster: Cluster,
  options: { count: number; spreadMs?: number; onAnswer?: (answered: number) => void },
): Promise<Answer[]> {
  const agent = new Agent({ connections: REQUESTS + 10, keepAliveTimeout: 30_000 });
  cleanups.push(() => agent.close());
  let answered = 0;
  const one = async (i: number): Promise<Answer> => {
    const gateway = i % 2;
    const stream = i % 3 === 0;
    if (options.spreadMs) await sleep((options.spreadMs * i) / options.count);
    const answer: Answer = { gateway, stream };
    try {
      const response = await request(`${cluster.gateways[gateway]!.url}/v1/chat/completions`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${cluster.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: MODEL,
          messages: [{ role: 'user', content: `hello ${i}` }],
          stream,
          ...(cluster.pricing === 'ratio' ? { max_tokens: RATIO.maxTokens } : {}),
        }),
        signal: AbortSignal.timeout(60_000),
      });
      answer.status = response.statusCode;
      answer.body = await response.body.text();
    } catch (error) {
      answer.error = String((error as { code?: string }).code ?? (error as Error).message);
    }
    answer.at = performance.now();
    options.onAnswer?.(++answered);
    return answer;
  };
  return Promise.all(Array.from({ length: options.count }, (_, i) => one(i)));
}

/** A complete successful answer: the whole JSON completion, or a stream through to [DONE]. */
function completed(answer: Answer): boolean {
  if (answer.status !== 200 || answer.error !== undefined || answer.body === undefined) return false;
  if (answer.stream) return answer.body.trimEnd().endsWith('data: [DONE]');
  return (JSON.parse(answer.body) as { choices?: unknown[] }).choices?.length === 1;
}

const REFUSAL_CODES: Record<Binding, string> = {
  token: 'pre_consume_token_quota_failed',
  wallet: 'insufficient_user_quota',
};

/** Refusals are OpenAI-shaped errors with the ledger's code, never a 5xx. */
function expectRefusal(answer: Answer, binding: Binding): void {
  expect(answer.status).toBe(403);
  const body = JSON.parse(answer.body ?? '{}') as { error?: Record<string, unknown> };
  expect(body.error).toMatchObject({ code: REFUSAL_CODES[binding], type: expect.any(String) });
  expect(body.error?.message).toEqual(expect.stringMatching(/\S/));
}

interface Books {
  token: { remain: number; used: number };
  user: { quota: number; used: number; requests: number };
  channelUsed: number;
  logs: { count: number; quota: number };
  leases: number;
}

async function books(cluster: Cluster): Promise<Books> {
  const q = async (text: string, values: unknown[]) => (await cluster.db.query(text, values)).rows[0] as any;
  const token = await q('select remain_quota, used_quota from tokens where id = $1', [cluster.tokenId]);
  const user = await q('select quota, used_quota, request_count from users where id = $1', [cluster.userId]);
  const channel = await q('select used_quota from channels where id = $1', [cluster.channelId]);
  const logs = await q(
    'select count(*)::int as count, coalesce(sum(quota), 0)::bigint as quota from logs where type = 2 and token_id = $1',
    [cluster.tokenId],
  );
  const leases = await q('select count(*)::int as count from quota_leases', []);
  return {
    token: { remain: Number(token.remain_quota), used: Number(token.used_quota) },
    user: { quota: Number(user.quota), used: Number(user.used_quota), requests: Number(user.request_count) },
    channelUsed: Number(channel.used_quota),
    logs: { count: Number(logs.count), quota: Number(logs.quota) },
    leases: Number(leases.count),
  };
}

/** The log lines of a gateway at level error or worse (pino: 50 and up). */
const errorLogs = (gateway: GatewayProcess) =>
  gateway.logs
    .filter((line) => Number(line.level) >= 50)
    .map((line) => `${line.msg}: ${(line.err as { message?: string } | undefined)?.message ?? ''}`);

/** Every invariant of the ledger after both gateways flushed and stopped. */
function expectBalancedBooks(
  after: Books,
  initial: { token: number; wallet: number },
  expected: { binding: Binding; successes: number; settle?: number; quota?: number },
): void {
  const { binding, successes, settle = PER_CALL, quota = QUOTA } = expected;
  const charged = after.logs.quota;
  // Every successful answer has its consume log, and each log is one settle of the known cost.
  expect(after.logs.count).toBe(successes);
  expect(charged).toBe(successes * settle);
  // The counters agree with the logs: nothing lost, nothing counted twice.
  expect(after.token.used).toBe(charged);
  expect(after.user.used).toBe(charged);
  expect(after.channelUsed).toBe(charged);
  expect(after.user.requests).toBe(successes);
  // What the accounts lost is what was charged, to the unit, and every lease was given back.
  expect(after.leases).toBe(0);
  if (binding === 'token') expect(after.token.remain + after.token.used).toBe(initial.token);
  expect(after.user.quota + after.user.used).toBe(initial.wallet);
  // The binding quota is never exceeded by more than one request's settle.
  expect(charged).toBeLessThanOrEqual(quota + settle);
}

async function initialBalances(cluster: Cluster): Promise<{ token: number; wallet: number }> {
  const before = await books(cluster);
  expect(before.leases).toBe(0);
  expect(before.logs.count).toBe(0);
  return { token: before.token.remain, wallet: before.user.quota };
}

function tally(answers: Answer[]) {
  return {
    ok: answers.filter(completed),
    refused: answers.filter((a) => a.status === 403),
    closing: answers.filter((a) => a.status === 503),
    connection: answers.filter((a) => a.status === undefined),
    other: answers.filter((a) => a.status !== undefined && ![200, 403, 503].includes(a.status)),
    cut: answers.filter((a) => a.status === 200 && !completed(a)),
  };
}

describe.skipIf(!hasPostgres() || !hasRedis())('the quota ledger under load across two gateway processes', () => {
  const cases: Array<{ binding: Binding; pricing: Pricing }> = [
    { binding: 'token', pricing: 'per-call' },
    { binding: 'wallet', pricing: 'per-call' },
    { binding: 'token', pricing: 'ratio' },
  ];
  for (const { binding, pricing } of cases) {
    it(`charges exactly what the consume logs say and never overspends (${binding} quota, ${pricing} price)`, async () => {
      const cluster = await startCluster(binding, pricing);
      const initial = await initialBalances(cluster);
      expect(binding === 'token' ? initial.token : initial.wallet).toBe(QUOTA);

      const answers = await load(cluster, { count: REQUESTS });
      const t = tally(answers);
      expect(t.other.map((a) => `${a.status} ${a.body}`)).toEqual([]);
      expect(t.connection.map((a) => a.error)).toEqual([]);
      expect(t.closing).toHaveLength(0);
      expect(t.cut).toHaveLength(0);
      expect(t.ok.length + t.refused.length).toBe(REQUESTS);
      for (const refusal of t.refused) expectRefusal(refusal, binding);
      // Both gateways served some: the quota really was shared between processes.
      expect(new Set(t.ok.map((a) => a.gateway)).size).toBe(2);
      if (pricing === 'per-call') {
        // Nothing was refused while quota was left: all of it was spent, by exactly 100 requests.
        expect(t.ok.length).toBe(QUOTA / PER_CALL);
      } else {
        // A request needs its whole reservation: each gateway may be left with less than one.
        expect(t.ok.length * PER_CALL).toBeGreaterThan(QUOTA - 2 * RATIO_RESERVE);
      }

      const [a, b] = cluster.gateways;
      const codes = await Promise.all([a.stop(), b.stop()]);
      expect(codes).toEqual([0, 0]);
      expect([...errorLogs(a), ...errorLogs(b)]).toEqual([]);
      expectBalancedBooks(await books(cluster), initial, { binding, successes: t.ok.length });
      expect(cluster.upstream.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(t.ok.length);
    }, 120_000);
  }

  it('keeps the books balanced when one gateway is stopped while the load is in flight', async () => {
    const cluster = await startCluster('token');
    const initial = await initialBalances(cluster);
    const [a, b] = cluster.gateways;
    let bStopped: Promise<number | null> | undefined;
    let bExitedAt = Number.POSITIVE_INFINITY;
    let leasedAtStop: Promise<Array<{ holder: string; amount: string }>> | undefined;
    // Starts spread over two seconds, so the stop lands while requests arrive and others are in flight,
    // and while both gateways still hold leases with quota left.
    const answers = await load(cluster, {
      count: REQUESTS,
      spreadMs: 2000,
      onAnswer: (answered) => {
        if (answered !== 40) return;
        leasedAtStop = cluster.db.query('select holder, amount from quota_leases').then((r) => r.rows);
        bStopped = b.stop().then((code) => {
          bExitedAt = performance.now();
          return code;
        });
      },
    });
    expect(bStopped).toBeDefined();
    expect(await bStopped).toBe(0);
    const leases = await leasedAtStop!;
    const t = tally(answers);
    expect(t.other.map((x) => `${x.status} ${x.body}`)).toEqual([]);
    for (const refusal of t.refused) expectRefusal(refusal, 'token');
    // Only the stopped process may fail a request: with a closed connection, or 503 while it drains.
    expect([...t.connection, ...t.closing].filter((x) => x.gateway !== 1)).toEqual([]);
    // A request that arrived while it drained is told so in OpenAI's error shape, to retry elsewhere.
    for (const closing of t.closing)
      expect(JSON.parse(closing.body ?? '')).toMatchObject({ error: { code: 'server_draining' } });
    expect(t.cut).toHaveLength(0);
    expect(t.ok.length + t.refused.length + t.closing.length + t.connection.length).toBe(REQUESTS);
    expect(t.ok.filter((x) => x.gateway === 1).length).toBeGreaterThan(0);
    expect(t.ok.filter((x) => x.gateway === 0).length).toBeGreaterThan(0);
    // The stopped gateway gave its lease back: the other one may spend what it had left.
    expect(t.ok.length).toBeLessThanOrEqual(QUOTA / PER_CALL);

    expect(await a.stop()).toBe(0);
    expect([...errorLogs(a), ...errorLogs(b)]).toEqual([]);
    expectBalancedBooks(await books(cluster), initial, { binding: 'token', successes: t.ok.length });
    const okAfterExit = t.ok.filter((x) => x.gateway === 0 && x.at! > bExitedAt).length;
    console.log(
      `stop in flight: ${t.ok.length} ok (${okAfterExit} on the other gateway after the stopped one exited), ${t.refused.length} refused, ` +
        `${t.closing.length} answered 503 while closing, ${t.connection.length} connection errors; leases at the stop: ${JSON.stringify(leases)}`,
    );
  }, 120_000);

  it('logs a request whose settle waits for the database when its gateway stops right after answering', async () => {
    // The token covers the reservation but not the charge: settling takes the rest from the database,
    // after the answer was sent, while the stop is already under way.
    const quota = 600;
    const cluster = await startCluster('token', 'under', quota);
    const initial = await initialBalances(cluster);
    const [a, b] = cluster.gateways;
    const response = await request(`${a.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cluster.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hello' }] }),
    });
    const stopped = a.stop();
    expect(response.statusCode).toBe(200);
    await response.body.text();
    expect(await stopped).toBe(0);
    expect(await b.stop()).toBe(0);
    expect([...errorLogs(a), ...errorLogs(b)]).toEqual([]);
    expectBalancedBooks(await books(cluster), initial, { binding: 'token', successes: 1, settle: UNDER.settle, quota });
  }, 120_000);
});
