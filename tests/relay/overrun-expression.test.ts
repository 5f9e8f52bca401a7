import pg from 'pg';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTextTokens, estimatePromptTokens } from '../../gateway/src/domain/billing/index.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { gatewayEnv, hasRedis, startTestGateway, testNamespace } from '../support/gateway.ts';
import { parseSamples, scrapeMetrics } from '../support/metrics.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { eventually } from '../support/wait.ts';

/**
 * The overrun bound for a model priced by a billing expression (tiered_expr): streams without max_tokens
 * on a token that can pay for a few answers, across two gateways (pods) on one Postgres and one Redis.
 * Each reserves the expression's cost of the prompt and of a 16-token completion budget, tops it up as
 * its output grows (into the dearer tier past 30 tokens) and is cut when the token cannot cover more.
 */
const MODEL = 'overrun-expr-model';
// QuotaPerUnit 500,000 and group ratio 1: the expression's cost N (USD per 1M × tokens) is N / 2 quota.
// Quota: the prompt at 1 a token, the first 30 completion tokens at 2, every one past them at 6.
const EXPR = 'c <= 30 ? tier("short", p * 2 + c * 4) : tier("long", p * 2 + 120 + (c - 30) * 12)';
const quotaOf = (prompt: number, completion: number) =>
  prompt + (completion <= 30 ? 2 * completion : 60 + 6 * (completion - 30));
/** What the mock streams: 60 chunks of 5 characters, each one token. */
const CHUNK_TEXT = ' tick';
const CHUNKS = 60;
const REPLY = CHUNK_TEXT.repeat(CHUNKS);
/** The most one chunk costs: its tokens at the dearer tier's 6. */
const CHUNK_QUOTA = countTextTokens(MODEL, CHUNK_TEXT) * 6;
const BODY = { model: MODEL, messages: [{ role: 'user', content: 'count to sixty' }], stream: true };
const PROMPT = estimatePromptTokens('openai-chat', MODEL, BODY);
const COMPLETION = countTextTokens(MODEL, REPLY);
const BUDGET_TOKENS = 16;
/** What a request without max_tokens reserves: the prompt's cost and the budget's on top of it. */
const RESERVED = quotaOf(PROMPT, BUDGET_TOKENS);
/** One whole stream's charge, as the mock reports its usage. */
const FULL = quotaOf(PROMPT, COMPLETION);
const STREAMS = 40;
const QUOTA = 4 * FULL;

let gateway: Gateway;
/** A second pod on the same database and Redis. */
let other: Gateway;
let upstream: MockOpenAI;
let root: DashboardClient;
let db: pg.Client;
let drop: () => Promise<void>;
let stopped = false;
let initialWallet: number;

beforeAll(async () => {
  if (!hasPostgres() || !hasRedis()) return;
  upstream = await startMockOpenAI();
  upstream.behaviour = {
    reply: REPLY,
    chunkDelayMs: 5,
    usage: { prompt_tokens: PROMPT, completion_tokens: COMPLETION },
  };
  const database = await createTestDatabase();
  drop = database.drop;
  db = new pg.Client({ connectionString: database.url });
  await db.connect();
  const env = gatewayEnv(database.options, testNamespace());
  [gateway, other] = await Promise.all([startTestGateway(env), startTestGateway(env)]);
  root = await setupRoot(gateway.url);
  initialWallet = Number((await db.query(`select quota from users where username = 'root'`)).rows[0].quota);
  const channel = await root.post('/api/channel/', {
    name: 'mock',
    type: 1,
    key: 'sk-up',
    base_url: upstream.url,
    models: MODEL,
  });
  expect(channel.body.success).toBe(true);
  await gateway.options.setMany({
    QuotaPerUnit: '500000',
    GroupRatio: JSON.stringify({ default: 1 }),
    PreConsumedQuota: '0',
    'quota_setting.default_completion_tokens': JSON.stringify({ default: BUDGET_TOKENS }),
  });
  // Through /api/option/ as the console saves them.
  for (const [key, value] of [
    ['billing_setting.billing_mode', { [MODEL]: 'tiered_expr' }],
    ['billing_setting.billing_expr', { [MODEL]: EXPR }],
  ] as const) {
    const saved = await root.put('/api/option/', { key, value: JSON.stringify(value) });
    expect(saved.body).toMatchObject({ success: true });
  }
});

afterAll(async () => {
  if (!stopped) await Promise.all([gateway?.stop(), other?.stop()]);
  await db?.end();
  await drop?.();
  await upstream?.close();
});

/** A token of root's with `quota`, its key and id. */
async function token(name: string, quota: number) {
  const created = await root.post('/api/token/', { name, remain_quota: quota, unlimited_quota: false });
  expect(created.body.success).toBe(true);
  const { rows } = await db.query<{ id: number; user_id: number }>('select id, user_id from tokens where name = $1', [
    name,
  ]);
  return { key: String(created.body.data.key), id: rows[0]!.id, userId: rows[0]!.user_id };
}

/** The consume logs of a token: quota, stream end reason, tier. */
async function logsOf(tokenId: number) {
  const { rows } = await db.query<{ quota: number; other: string }>(
    'select quota, other from logs where type = 2 and token_id = $1',
    [tokenId],
  );
  return rows.map((row) => {
    const other = JSON.parse(row.other);
    return {
      quota: Number(row.quota),
      endReason: other.stream_status?.end_reason,
      mode: other.billing_mode,
      tier: other.matched_tier,
    };
  });
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

const cutCount = (metrics: string) =>
  parseSamples(metrics, 'tollgate_relay_stream_cuts_total')
    .filter((s) => s.labels.model === MODEL)
    .reduce((total, s) => total + s.value, 0);

const OPENAI_CUT =
  /data: \{"error":\{"message":"quota exhausted[^"]*","type":"insufficient_quota","param":null,"code":"quota_exhausted"\}\}\n\ndata: \[DONE\]\n\n$/;

/** The text a chat stream delivered. */
const text = (body: string) =>
  body
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: {'))
    .map((frame) => JSON.parse(frame.slice(6)).choices?.[0]?.delta?.content ?? '')
    .join('');

const stream = (pod: Gateway, key: string, dispatcher?: Agent) =>
  request(`${pod.url}/v1/chat/completions`, {
    method: 'POST',
    ...(dispatcher ? { dispatcher } : {}),
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(BODY),
  }).then(async (response) => ({ status: response.statusCode, body: await response.body.text() }));

describe.skipIf(!hasPostgres() || !hasRedis())('the overrun bound of expression-priced streams', () => {
  it('reserves the expression’s cost of the completion budget, and cuts a stream the token cannot pay on', async () => {
    // The budget is held: a token one short of prompt + budget is refused before anything is sent.
    const short = await token('expr-short', RESERVED - 1);
    const refused = await stream(gateway, short.key);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'pre_consume_token_quota_failed' } });

    const exact = await token('expr-exact', RESERVED);
    const answer = await stream(gateway, exact.key);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatch(OPENAI_CUT);
    expect(text(answer.body).length).toBeLessThan(REPLY.length);
    const [log] = await eventually(
      () => logsOf(exact.id),
      (rows) => rows.length === 1,
      5000,
    );
    expect(log).toMatchObject({ endReason: 'quota_exhausted', mode: 'tiered_expr', tier: 'short' });
    expect(log!.quota).toBeGreaterThan(PROMPT);
    expect(log!.quota).toBeLessThanOrEqual(RESERVED + CHUNK_QUOTA);
    // The bill is the expression's for what was delivered.
    expect(log!.quota).toBe(quotaOf(PROMPT, countTextTokens(MODEL, text(answer.body))));
  });

  it(`${STREAMS} concurrent streams on a token with quota for 4: within the quota plus a chunk each, books balanced`, async () => {
    const { key, id: tokenId, userId } = await token('expr-overrun', QUOTA);
    const pods = [gateway, other];
    await eventually(
      async () => (await (await fetch(`${other.url}/api/pricing`)).json()) as { data?: any[] },
      (p) => Boolean(p.data?.some((m) => m.model_name === MODEL && m.billing_mode === 'tiered_expr')),
      5000,
    );
    await eventually(
      async () => (await fetch(`${other.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status,
      (status) => status === 200,
      5000,
    );
    const cutsBefore = sum((await Promise.all(pods.map((pod) => scrapeMetrics(pod)))).map(cutCount));
    const agent = new Agent({ connections: STREAMS + 10 });
    const answers = await Promise.all(Array.from({ length: STREAMS }, (_, i) => stream(pods[i % 2]!, key, agent)));
    await agent.close();

    const refused = answers.filter((a) => a.status === 403);
    const streamed = answers.filter((a) => a.status === 200);
    expect(refused.length + streamed.length).toBe(STREAMS);
    const cut = streamed.filter((a) => a.body.includes('"code":"quota_exhausted"'));
    const whole = streamed.filter((a) => !cut.includes(a));
    for (const answer of cut) expect(answer.body).toMatch(OPENAI_CUT);
    for (const answer of whole) expect(text(answer.body)).toBe(REPLY);
    expect(cut.length).toBeGreaterThan(0);

    const logs = await eventually(
      () => logsOf(tokenId),
      (rows) => rows.length === streamed.length,
      10_000,
    );
    expect(logs.every((l) => l.mode === 'tiered_expr')).toBe(true);
    expect(logs.filter((l) => l.endReason === 'quota_exhausted')).toHaveLength(cut.length);
    for (const log of logs.filter((l) => l.endReason === 'done'))
      expect(log).toMatchObject({ quota: FULL, tier: 'long' });
    const charged = sum(logs.map((l) => l.quota));
    expect(charged).toBeLessThanOrEqual(QUOTA + streamed.length * CHUNK_QUOTA);

    const reserved = (metrics: string) => parseSamples(metrics, 'tollgate_ledger_reserved_quota')[0]?.value;
    const metrics = await eventually(
      () => Promise.all(pods.map((pod) => scrapeMetrics(pod))),
      (texts) => texts.every((t) => reserved(t) === 0),
      5000,
    );
    expect(sum(metrics.map(cutCount)) - cutsBefore).toBe(cut.length);

    // The books, once both pods have stopped: to the unit.
    await Promise.all(pods.map((pod) => pod.stop()));
    stopped = true;
    const one = async (sql: string, values: unknown[]) => (await db.query(sql, values)).rows[0] as any;
    const tokenRow = await one('select remain_quota, used_quota from tokens where id = $1', [tokenId]);
    const userRow = await one('select quota, used_quota from users where id = $1', [userId]);
    const channelRow = await one('select used_quota from channels limit 1', []);
    const leases = await one('select count(*)::int as n from quota_leases', []);
    const { total } = await one('select coalesce(sum(quota), 0)::bigint as total from logs where type = 2', []);
    expect(Number(tokenRow.used_quota)).toBe(charged);
    expect(Number(tokenRow.remain_quota) + charged).toBe(QUOTA);
    expect(Number(userRow.used_quota)).toBe(Number(total));
    expect(Number(channelRow.used_quota)).toBe(Number(total));
    expect(Number(userRow.quota) + Number(total)).toBe(initialWallet);
    expect(leases.n).toBe(0);
    console.log(
      `overrun (expression): ${whole.length} whole, ${cut.length} cut, ${refused.length} refused; charged ${charged} ` +
        `of ${QUOTA} (bound ${QUOTA + streamed.length * CHUNK_QUOTA})`,
    );
  }, 120_000);
});
