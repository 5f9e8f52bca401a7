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
 * The overrun bound (issue 17): streams of requests without max_tokens on a token that can pay for
 * about 20 of 200, sent to two gateways (pods) on one Postgres and one Redis. Each reserves its prompt and a 16-token completion budget, tops it up as its output
 * grows, and is cut when the token cannot cover more: the total charged stays within the quota plus one
 * chunk per stream, and the books balance to the unit.
 */
const MODEL = 'overrun-model';
/** 1 quota a prompt token, 2 a completion token (group ratio 1): every charge reads off the token counts. */
const COMPLETION_RATIO = 2;
/** What the mock streams: 60 chunks of 5 characters, each one token. */
const CHUNK_TEXT = ' tick';
const CHUNKS = 60;
const REPLY = CHUNK_TEXT.repeat(CHUNKS);
const CHUNK_QUOTA = countTextTokens(MODEL, CHUNK_TEXT) * COMPLETION_RATIO;
const BODY = { model: MODEL, messages: [{ role: 'user', content: 'count to sixty' }], stream: true };
const PROMPT = estimatePromptTokens('openai-chat', MODEL, BODY);
const COMPLETION = countTextTokens(MODEL, REPLY);
/** One whole stream's charge, as the mock reports its usage (exactly what the gateway counts). */
const FULL = PROMPT + COMPLETION * COMPLETION_RATIO;
const STREAMS = 200;
const QUOTA = 20 * FULL;

let gateway: Gateway;
/** A second pod on the same database and Redis. */
let other: Gateway;
let upstream: MockOpenAI;
let root: DashboardClient;
let db: pg.Client;
let drop: () => Promise<void>;
let stopped = false;
/** Root's wallet before any request. */
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
    ModelRatio: JSON.stringify({ [MODEL]: 1 }),
    CompletionRatio: JSON.stringify({ [MODEL]: COMPLETION_RATIO }),
    GroupRatio: JSON.stringify({ default: 1 }),
    PreConsumedQuota: '0',
    'quota_setting.default_completion_tokens': JSON.stringify({ default: 16 }),
  });
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

interface Answer {
  status: number;
  body: string;
}

/** The consume logs of a token, with their stream end reason. */
async function logsOf(tokenId: number) {
  const { rows } = await db.query<{ quota: number; other: string }>(
    'select quota, other from logs where type = 2 and token_id = $1',
    [tokenId],
  );
  return rows.map((row) => ({ quota: Number(row.quota), endReason: JSON.parse(row.other).stream_status?.end_reason }));
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

/** Streams of the model cut so far, as the gateway counts them. */
const cutCount = (metrics: string) =>
  parseSamples(metrics, 'tollgate_relay_stream_cuts_total')
    .filter((s) => s.labels.model === MODEL)
    .reduce((sum, s) => sum + s.value, 0);

/** Requests of the model answered 2xx and counted with error type quota (the cut streams). */
const quotaRequests = (metrics: string) =>
  parseSamples(metrics, 'tollgate_relay_requests_total')
    .filter((s) => s.labels.model === MODEL && s.labels.status === '2xx' && s.labels.error_type === 'quota')
    .reduce((sum, s) => sum + s.value, 0);

const OPENAI_CUT =
  /data: \{"error":\{"message":"quota exhausted[^"]*","type":"insufficient_quota","param":null,"code":"quota_exhausted"\}\}\n\ndata: \[DONE\]\n\n$/;

describe.skipIf(!hasPostgres() || !hasRedis())('the overrun bound of streams without max_tokens', () => {
  it('ends a cut Claude stream with an error event, a Gemini stream with an error object', async () => {
    const clients = {
      claude: {
        path: '/v1/messages',
        headers: { 'anthropic-version': '2023-06-01' },
        body: { model: MODEL, messages: BODY.messages, stream: true },
        ending:
          /event: error\ndata: \{"type":"error","error":\{"type":"permission_error","message":"quota exhausted[^"]*"\}\}\n\n$/,
      },
      gemini: {
        path: `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`,
        headers: {},
        body: { contents: [{ role: 'user', parts: [{ text: 'count to sixty' }] }] },
        ending:
          /data: \{"error":\{"code":403,"message":"quota exhausted[^"]*","status":"PERMISSION_DENIED","details":\[\{[^}]*"reason":"quota_exhausted"[^}]*\}\]\}\}\n\n$/,
      },
    };
    for (const [name, client] of Object.entries(clients)) {
      // Enough for the reservation (prompt and a 16-token budget), not for the whole answer.
      const quota = 80;
      const { key, id } = await token(`cut-${name}`, quota);
      const response = await fetch(`${gateway.url}${client.path}`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'x-goog-api-key': key, 'content-type': 'application/json', ...client.headers },
        body: JSON.stringify(client.body),
      });
      expect(response.status).toBe(200);
      const body = await response.text();
      expect(body).toMatch(client.ending);
      const [log] = await eventually(
        () => logsOf(id),
        (rows) => rows.length === 1,
        5000,
      );
      expect(log!.endReason).toBe('quota_exhausted');
      expect(log!.quota).toBeGreaterThan(0);
      expect(log!.quota).toBeLessThanOrEqual(quota + CHUNK_QUOTA);
    }
  });

  it('200 concurrent streams on a token with quota for ~20: within the quota plus a chunk each, books balanced', async () => {
    const { key, id: tokenId, userId } = await token('overrun', QUOTA);
    const pods = [gateway, other];
    // The other pod knows the channel and the prices (they travel over the bus).
    await eventually(
      async () => (await (await fetch(`${other.url}/api/pricing`)).json()) as { data?: any[] },
      (p) => Boolean(p.data?.some((m) => m.model_name === MODEL && m.completion_ratio === COMPLETION_RATIO)),
      5000,
    );
    await eventually(
      async () => (await fetch(`${other.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status,
      (status) => status === 200,
      5000,
    );
    const metricsBefore = await Promise.all(pods.map((pod) => scrapeMetrics(pod)));
    const cutsBefore = sum(metricsBefore.map(cutCount));
    const quotaBefore = sum(metricsBefore.map(quotaRequests));
    const agent = new Agent({ connections: STREAMS + 10 });
    const answers = await Promise.all(
      Array.from({ length: STREAMS }, async (_, i): Promise<Answer> => {
        const response = await request(`${pods[i % 2]!.url}/v1/chat/completions`, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(BODY),
        });
        return { status: response.statusCode, body: await response.body.text() };
      }),
    );
    await agent.close();

    const refused = answers.filter((a) => a.status === 403);
    const streamed = answers.filter((a) => a.status === 200);
    expect(refused.length + streamed.length).toBe(STREAMS);
    for (const answer of refused) {
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'pre_consume_token_quota_failed' } });
    }
    const cut = streamed.filter((a) => a.body.includes('"code":"quota_exhausted"'));
    const whole = streamed.filter((a) => !cut.includes(a));
    // Every cut stream ends with the error chunk and [DONE]; every other one is the whole answer.
    for (const answer of cut) expect(answer.body).toMatch(OPENAI_CUT);
    const text = (body: string) =>
      body
        .split('\n\n')
        .filter((frame) => frame.startsWith('data: {'))
        .map((frame) => JSON.parse(frame.slice(6)).choices?.[0]?.delta?.content ?? '')
        .join('');
    for (const answer of whole) {
      expect(answer.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect(text(answer.body)).toBe(REPLY);
    }
    // Streams started together grow together, so most (often all) of them meet the end of the quota.
    expect(cut.length).toBeGreaterThan(0);
    // A cut stream got less than the whole reply.
    for (const answer of cut) expect(text(answer.body).length).toBeLessThan(REPLY.length);

    // One consume log per answered stream, the cut ones with their own end reason.
    const logs = await eventually(
      () => logsOf(tokenId),
      (rows) => rows.length === streamed.length,
      10_000,
    );
    expect(logs.filter((l) => l.endReason === 'quota_exhausted')).toHaveLength(cut.length);
    expect(logs.filter((l) => l.endReason === 'done')).toHaveLength(whole.length);
    for (const log of logs.filter((l) => l.endReason === 'done')) expect(log.quota).toBe(FULL);
    const charged = logs.reduce((sum, l) => sum + l.quota, 0);
    expect(charged).toBeLessThanOrEqual(QUOTA + streamed.length * CHUNK_QUOTA);

    // Nothing stays reserved on either pod, and the cuts were counted.
    const reserved = (text: string) => parseSamples(text, 'tollgate_ledger_reserved_quota')[0]?.value;
    const metrics = await eventually(
      () => Promise.all(pods.map((pod) => scrapeMetrics(pod))),
      (texts) => texts.every((text) => reserved(text) === 0),
      5000,
    );
    expect(metrics.map(reserved)).toEqual([0, 0]);
    expect(sum(metrics.map(cutCount)) - cutsBefore).toBe(cut.length);
    // Each cut request counts once with its 200 and error type quota.
    expect(sum(metrics.map(quotaRequests)) - quotaBefore).toBe(cut.length);
    // Both pods served streams: the token's quota really was shared between them.
    expect(metrics.every((text, i) => cutCount(text) > cutCount(metricsBefore[i]!))).toBe(true);

    // The books, once both pods have stopped (leases given back, usage written): to the unit.
    await Promise.all(pods.map((pod) => pod.stop()));
    stopped = true;
    const one = async (text: string, values: unknown[]) => (await db.query(text, values)).rows[0] as any;
    const tokenRow = await one('select remain_quota, used_quota from tokens where id = $1', [tokenId]);
    const userRow = await one('select quota, used_quota from users where id = $1', [userId]);
    const channelRow = await one('select used_quota from channels limit 1', []);
    const leases = await one('select count(*)::int as n from quota_leases', []);
    // Root's wallet and the channel also paid the other test's streams: all logs, all tokens.
    const { total } = await one('select coalesce(sum(quota), 0)::bigint as total from logs where type = 2', []);
    expect(Number(tokenRow.used_quota)).toBe(charged);
    expect(Number(tokenRow.remain_quota) + charged).toBe(QUOTA);
    expect(Number(userRow.used_quota)).toBe(Number(total));
    expect(Number(channelRow.used_quota)).toBe(Number(total));
    expect(Number(userRow.quota) + Number(total)).toBe(initialWallet);
    expect(leases.n).toBe(0);
    console.log(
      `overrun: ${whole.length} whole, ${cut.length} cut, ${refused.length} refused; charged ${charged} of ${QUOTA} ` +
        `(bound ${QUOTA + streamed.length * CHUNK_QUOTA})`,
    );
  }, 120_000);
});
