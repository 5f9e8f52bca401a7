import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTextTokens } from '../../gateway/src/domain/billing/index.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { gatewayEnv, hasRedis, startTestGateway, testNamespace } from '../support/gateway.ts';
import { parseSamples, scrapeMetrics } from '../support/metrics.ts';
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import { type MockGemini, startMockGemini } from '../support/mock-gemini.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { eventually, sleep } from '../support/wait.ts';

/**
 * How a relayed stream ends when its upstream fails (issue 18, deliverable 2), on two gateways (pods) on
 * one Postgres and one Redis: an upstream reset mid-stream, a stall past STREAMING_TIMEOUT_SECONDS and a
 * pod's drain each end the client's stream in its own format, billed for what was delivered; slow
 * headers answer 504; a client that leaves before the headers aborts the upstream call and releases its
 * reservation at once. Afterwards the books balance to the unit.
 */
const IDLE_TIMEOUT_MS = 2_000;
const MODELS = { openai: 'fault-gpt', claude: 'fault-claude', gemini: 'fault-gemini' } as const;
/** 1 quota a prompt token, 2 a completion token: every charge reads off the token counts. */
const COMPLETION_RATIO = 2;
/** Long enough that no stream ends by itself before its fault. */
const REPLY = ' tick tock'.repeat(40);
const MESSAGES = [{ role: 'user', content: 'count the clock' }];

type Format = 'chat' | 'responses' | 'claude' | 'gemini';

interface ClientCall {
  path: string;
  model: string;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
  /** The text the client got from a stream's body. */
  text(body: string): string;
}

const CALLS: Record<Format, (stream: boolean) => ClientCall> = {
  chat: (stream) => ({
    path: '/v1/chat/completions',
    model: MODELS.openai,
    body: { model: MODELS.openai, messages: MESSAGES, stream },
    text: (body) =>
      dataOf(body)
        .map((d) => d.choices?.[0]?.delta?.content ?? '')
        .join(''),
  }),
  responses: (stream) => ({
    path: '/v1/responses',
    model: MODELS.openai,
    body: { model: MODELS.openai, input: 'count the clock', stream },
    text: (body) =>
      dataOf(body)
        .filter((d) => d.type === 'response.output_text.delta')
        .map((d) => d.delta)
        .join(''),
  }),
  claude: (stream) => ({
    path: '/v1/messages',
    model: MODELS.claude,
    headers: { 'anthropic-version': '2023-06-01' },
    body: { model: MODELS.claude, messages: MESSAGES, max_tokens: 500, stream },
    text: (body) =>
      dataOf(body)
        .filter((d) => d.type === 'content_block_delta')
        .map((d) => d.delta?.text ?? '')
        .join(''),
  }),
  gemini: (stream) => ({
    path: `/v1beta/models/${MODELS.gemini}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
    model: MODELS.gemini,
    body: { contents: [{ role: 'user', parts: [{ text: 'count the clock' }] }] },
    text: (body) =>
      dataOf(body)
        .flatMap((d) => d.candidates?.[0]?.content?.parts ?? [])
        .map((p: { text?: string }) => p.text ?? '')
        .join(''),
  }),
};

/** The JSON data of every `data:` line of a stream. */
function dataOf(body: string): any[] {
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice('data: '.length)));
}

/** The end of a stream the gateway ended with `code`, in each client's format. */
function endingOf(format: Format, code: string, status: number): RegExp {
  switch (format) {
    case 'chat':
      return new RegExp(
        `data: \\{"error":\\{"message":"[^"]+","type":"[a-z_]+","param":null,"code":"${code}"\\}\\}\\n\\ndata: \\[DONE\\]\\n\\n$`,
      );
    case 'responses':
      return new RegExp(
        `event: error\\ndata: \\{"type":"error","code":"${code}","message":"[^"]+","param":null\\}\\n\\n` +
          `event: response.failed\\ndata: \\{"type":"response.failed","response":\\{"id":"resp_mock",[^\\n]*"status":"failed","error":\\{"code":"${code}"[^\\n]*\\n\\n$`,
      );
    case 'claude':
      return /event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"[^"]+"\}\}\n\n$/;
    case 'gemini':
      return new RegExp(
        `data: \\{"error":\\{"code":${status},"message":"[^"]+","status":"[A-Z_]+"[^\\n]*\\}\\}\\n\\n$`,
      );
  }
}

let a: Gateway;
let b: Gateway;
/** A third pod, stopped mid-stream by the draining test. */
let c: Gateway;
let openai: MockOpenAI;
let claude: MockAnthropic;
let gemini: MockGemini;
let root: DashboardClient;
let db: pg.Client;
let drop: () => Promise<void>;
let initialWallet: number;
let tokens = 0;

beforeAll(async () => {
  if (!hasPostgres() || !hasRedis()) return;
  [openai, claude, gemini] = await Promise.all([startMockOpenAI(), startMockAnthropic(), startMockGemini()]);
  const database = await createTestDatabase();
  drop = database.drop;
  db = new pg.Client({ connectionString: database.url });
  await db.connect();
  const env = gatewayEnv(database.options, testNamespace(), {
    STREAMING_TIMEOUT_SECONDS: String(IDLE_TIMEOUT_MS / 1000),
    RELAY_TIMEOUT_SECONDS: '2',
    SHUTDOWN_TIMEOUT_MS: '500',
  });
  [a, b, c] = await Promise.all([startTestGateway(env), startTestGateway(env), startTestGateway(env)]);
  root = await setupRoot(a.url);
  initialWallet = Number((await db.query(`select quota from users where username = 'root'`)).rows[0].quota);
  const channels: Array<[number, string, string]> = [
    [1, openai.url, MODELS.openai],
    [14, claude.url, MODELS.claude],
    [24, gemini.url, MODELS.gemini],
  ];
  for (const [type, baseUrl, model] of channels) {
    const created = await root.post('/api/channel/', {
      name: model,
      type,
      key: 'sk-up',
      base_url: baseUrl,
      models: model,
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  }
  await a.options.setMany({
    ModelRatio: JSON.stringify(Object.fromEntries(Object.values(MODELS).map((m) => [m, 1]))),
    CompletionRatio: JSON.stringify(Object.fromEntries(Object.values(MODELS).map((m) => [m, COMPLETION_RATIO]))),
    GroupRatio: JSON.stringify({ default: 1 }),
  });
  // Every pod serves every model before the tests start (each learns of the channels on its own).
  const key = (await token()).key;
  for (const gateway of [a, b, c]) {
    for (const format of ['chat', 'claude', 'gemini'] as const) {
      await eventually(
        async () => (await call(gateway, key, format, false)).status,
        (status) => status === 200,
        10_000,
      );
    }
  }
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop(), c?.stop()]);
  await db?.end();
  await drop?.();
  await Promise.all([openai?.close(), claude?.close(), gemini?.close()]);
});

/** A token of root's with a bounded quota (so that its requests really reserve: no trust bypass). */
async function token(quota = 2_000_000) {
  const name = `fault-${++tokens}`;
  const created = await root.post('/api/token/', { name, remain_quota: quota, unlimited_quota: false });
  expect(created.body.success).toBe(true);
  const { rows } = await db.query<{ id: number }>('select id from tokens where name = $1', [name]);
  return { key: String(created.body.data.key), id: rows[0]!.id };
}

interface Answer {
  status: number;
  body: string;
  requestId: string;
  /** Milliseconds from the response's headers to the end of its body. */
  bodyMs: number;
}

async function call(gateway: Gateway, key: string, format: Format, stream: boolean, signal?: AbortSignal) {
  const spec = CALLS[format](stream);
  const response = await fetch(`${gateway.url}${spec.path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'x-goog-api-key': key,
      'content-type': 'application/json',
      ...spec.headers,
    },
    body: JSON.stringify(spec.body),
    signal,
  });
  const headersAt = Date.now();
  const body = await response.text();
  return {
    status: response.status,
    body,
    requestId: response.headers.get('x-request-id') ?? '',
    bodyMs: Date.now() - headersAt,
  } satisfies Answer;
}

interface Log {
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  endReason: string | undefined;
}

/** The consume log of a request, once the usage queue has written it. */
async function logOf(requestId: string): Promise<Log> {
  const rows = await eventually(
    async () =>
      (
        await db.query<{ quota: number; prompt_tokens: number; completion_tokens: number; other: string }>(
          'select quota, prompt_tokens, completion_tokens, other from logs where type = 2 and request_id = $1',
          [requestId],
        )
      ).rows,
    (found) => found.length === 1,
    5_000,
  );
  expect(rows, `the consume log of ${requestId}`).toHaveLength(1);
  const row = rows[0]!;
  return { ...row, quota: Number(row.quota), endReason: JSON.parse(row.other).stream_status?.end_reason };
}

/** A stream's log bills exactly what the client got: its text's tokens at the completion price, and the prompt. */
async function expectBilledDelivered(format: Format, answer: Answer, endReason: string) {
  const log = await logOf(answer.requestId);
  const spec = CALLS[format](true);
  const delivered = spec.text(answer.body);
  expect(delivered.length).toBeGreaterThan(0);
  expect(delivered.length).toBeLessThan(REPLY.length);
  expect(log.endReason).toBe(endReason);
  expect(log.completion_tokens).toBe(countTextTokens(spec.model, delivered));
  expect(log.prompt_tokens).toBeGreaterThan(0);
  expect(log.quota).toBe(log.prompt_tokens + COMPLETION_RATIO * log.completion_tokens);
}

const reservedQuota = async (gateway: Gateway) =>
  parseSamples(await scrapeMetrics(gateway), 'tollgate_ledger_reserved_quota')[0]?.value ?? 0;

const requestsWith = (metrics: string, errorType: string) =>
  parseSamples(metrics, 'tollgate_relay_requests_total')
    .filter((s) => s.labels.error_type === errorType)
    .reduce((sum, s) => sum + s.value, 0);

/** Streams answered 200 and counted with error type upstream (ended by an upstream failure). */
const upstreamEnded = (metrics: string) =>
  parseSamples(metrics, 'tollgate_relay_requests_total')
    .filter((s) => s.labels.status === '2xx' && s.labels.error_type === 'upstream')
    .reduce((total, s) => total + s.value, 0);

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

function scriptAll(behaviour: { reply?: string; chunkDelayMs?: number; fault?: Record<string, number> }) {
  openai.behaviour = { ...behaviour };
  claude.behaviour = { ...behaviour };
  gemini.behaviour = { ...behaviour };
}

describe.skipIf(!hasPostgres() || !hasRedis())('how a relayed stream ends when its upstream fails', () => {
  it('20 streams whose upstream resets mid-way end at once with an error event in their format, billed for what they got', async () => {
    scriptAll({ reply: REPLY, chunkDelayMs: 20, fault: { resetAfterWrites: 6 } });
    const formats: Format[] = ['chat', 'responses', 'claude', 'gemini'];
    const { key } = await token();
    const counted = async () =>
      sum(await Promise.all([a, b].map(async (pod) => upstreamEnded(await scrapeMetrics(pod)))));
    const countedBefore = await counted();
    const runs = Array.from({ length: 20 }, (_, i) => {
      const format = formats[i % formats.length]!;
      return call(i % 2 === 0 ? a : b, key, format, true).then((answer) => ({ format, answer }));
    });
    for (const { format, answer } of await Promise.all(runs)) {
      expect(answer.status).toBe(200);
      expect(answer.body).toMatch(endingOf(format, 'upstream_reset', 502));
      expect(answer.bodyMs).toBeLessThan(IDLE_TIMEOUT_MS);
      await expectBilledDelivered(format, answer, 'upstream_reset');
    }
    // Each counted once, with its 200 and error type upstream.
    expect(await eventually(counted, (n) => n === countedBefore + 20, 2_000)).toBe(countedBefore + 20);
  }, 60_000);

  it('a whole answer whose upstream breaks off mid-body answers 502 in the client’s format, and bills nothing', async () => {
    scriptAll({ reply: REPLY, fault: { resetAfterWrites: 0 } });
    const { key } = await token();
    const chat = await call(a, key, 'chat', false);
    expect(chat.status).toBe(502);
    expect(JSON.parse(chat.body)).toMatchObject({ error: { type: 'new_api_error', code: 'upstream_reset' } });
    const messages = await call(b, key, 'claude', false);
    expect(messages.status).toBe(502);
    expect(JSON.parse(messages.body)).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    const generate = await call(a, key, 'gemini', false);
    expect(generate.status).toBe(502);
    expect(JSON.parse(generate.body)).toMatchObject({ error: { code: 502 } });
  });

  it('slow headers beyond the relay timeout answer 504 upstream_timeout, stream or not', async () => {
    scriptAll({ reply: REPLY, fault: { headersDelayMs: 3_500 } });
    const { key } = await token();
    const [chat, claudeStream] = await Promise.all([call(a, key, 'chat', false), call(b, key, 'claude', true)]);
    expect(chat.status).toBe(504);
    expect(JSON.parse(chat.body)).toMatchObject({ error: { code: 'upstream_timeout' } });
    expect(claudeStream.status).toBe(504);
    expect(JSON.parse(claudeStream.body)).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    expect(await reservedQuota(a)).toBe(0);
    expect(await reservedQuota(b)).toBe(0);
  });

  it('a client gone before the headers aborts the upstream call and releases its reservation at once, stream or not', async () => {
    // Answered after 1.8 s: well within the relay timeout, long after the client left.
    scriptAll({ reply: REPLY, fault: { headersDelayMs: 1_800 } });
    const { key, id } = await token();
    for (const [gateway, format, stream] of [
      [a, 'chat', true],
      [b, 'claude', true],
      [a, 'gemini', true],
      [b, 'chat', false],
    ] as const) {
      const mock = format === 'chat' ? openai : format === 'claude' ? claude : gemini;
      const before = { ...mock.traffic };
      const closedBefore = requestsWith(await scrapeMetrics(gateway), 'client_closed');
      const leaving = new AbortController();
      const answer = call(gateway, key, format, stream, leaving.signal).catch(() => 'gone');
      // The request holds its reservation while the upstream has not answered.
      await eventually(
        async () => mock.traffic.received,
        (received) => received > before.received,
        2_000,
      );
      expect(await reservedQuota(gateway)).toBeGreaterThan(0);
      const left = Date.now();
      leaving.abort();
      expect(await answer).toBe('gone');
      const seen = await eventually(
        async () => ({ aborted: mock.traffic.aborted, held: await reservedQuota(gateway) }),
        (now) => now.aborted > before.aborted && now.held === 0,
        1_500,
      );
      expect(seen).toEqual({ aborted: before.aborted + 1, held: 0 });
      // Well before the upstream would have answered.
      expect(Date.now() - left).toBeLessThan(1_500);
      const closed = await eventually(
        async () => requestsWith(await scrapeMetrics(gateway), 'client_closed'),
        (count) => count > closedBefore,
        1_000,
      );
      expect(closed).toBe(closedBefore + 1);
    }
    // Nothing billed.
    await sleep(300);
    const { rows } = await db.query('select id from logs where type = 2 and token_id = $1', [id]);
    expect(rows).toHaveLength(0);
  });

  it('a stalled upstream ends the stream with upstream_timeout after the idle timeout, billed for what was sent', async () => {
    scriptAll({ reply: REPLY, chunkDelayMs: 20, fault: { stallAfterWrites: 5 } });
    const { key } = await token();
    const runs = (['chat', 'responses', 'claude', 'gemini'] as const).map((format, i) =>
      call(i % 2 === 0 ? a : b, key, format, true).then((answer) => ({ format, answer })),
    );
    for (const { format, answer } of await Promise.all(runs)) {
      expect(answer.status).toBe(200);
      expect(answer.body).toMatch(endingOf(format, 'upstream_timeout', 504));
      expect(answer.bodyMs).toBeGreaterThanOrEqual(IDLE_TIMEOUT_MS - 200);
      expect(answer.bodyMs).toBeLessThan(IDLE_TIMEOUT_MS + 5_000);
      await expectBilledDelivered(format, answer, 'upstream_timeout');
    }
  }, 30_000);

  it('a pod stopped mid-stream ends its open streams with `draining` at its drain timeout, billed for what they got', async () => {
    // 400 pieces 100 ms apart: far longer than the pod's 0.5 s drain timeout.
    scriptAll({ reply: REPLY, chunkDelayMs: 100 });
    const { key } = await token();
    const receivedBefore = openai.traffic.received + claude.traffic.received + gemini.traffic.received;
    const runs = (['chat', 'claude', 'gemini'] as const).map((format) =>
      call(c, key, format, true).then((answer) => ({ format, answer })),
    );
    // Each upstream has the request and has sent a few pieces when the pod is stopped.
    const received = () => openai.traffic.received + claude.traffic.received + gemini.traffic.received;
    expect(
      await eventually(
        async () => received(),
        (n) => n >= receivedBefore + 3,
        5_000,
      ),
    ).toBeGreaterThanOrEqual(receivedBefore + 3);
    await sleep(500);
    const stopping = c.stop();
    for (const { format, answer } of await Promise.all(runs)) {
      expect(answer.status).toBe(200);
      expect(answer.body).toMatch(endingOf(format, 'draining', 503));
      await expectBilledDelivered(format, answer, 'draining');
    }
    await stopping;
  }, 30_000);

  it('the official SDKs read a reset stream’s ending as an error, after the text that came', async () => {
    scriptAll({ reply: REPLY, chunkDelayMs: 20, fault: { resetAfterWrites: 6 } });
    const { key } = await token();
    const reads: Record<string, () => AsyncIterable<string>> = {
      openai: async function* () {
        const client = new OpenAI({ apiKey: key, baseURL: `${a.url}/v1`, maxRetries: 0 });
        const stream = await client.chat.completions.create({
          model: MODELS.openai,
          messages: MESSAGES as never,
          stream: true,
        });
        for await (const chunk of stream) yield chunk.choices[0]?.delta?.content ?? '';
      },
      anthropic: async function* () {
        const client = new Anthropic({ apiKey: key, baseURL: b.url, maxRetries: 0 });
        const stream = await client.messages.create({
          model: MODELS.claude,
          max_tokens: 500,
          messages: [{ role: 'user', content: 'count the clock' }],
          stream: true,
        });
        for await (const event of stream) {
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') yield event.delta.text;
        }
      },
      gemini: async function* () {
        const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: a.url } });
        const stream = await ai.models.generateContentStream({ model: MODELS.gemini, contents: 'count the clock' });
        for await (const chunk of stream) yield chunk.text ?? '';
      },
    };
    for (const [sdk, read] of Object.entries(reads)) {
      let text = '';
      const reading = (async () => {
        for await (const piece of read()) text += piece;
      })();
      await expect(reading, sdk).rejects.toThrow(/broke off/);
      expect(text.length, sdk).toBeGreaterThan(0);
      expect(REPLY.startsWith(text), sdk).toBe(true);
    }
  });

  it('afterwards the books balance: consume logs == used quota of user, tokens and channels, to the unit', async () => {
    await Promise.all([a.stop(), b.stop(), c.stop()]);
    const one = async (text: string) => (await db.query(text)).rows[0] as Record<string, string>;
    const { total } = await one(`select coalesce(sum(quota), 0)::bigint as total from logs where type = 2`);
    const user = await one(`select quota, used_quota from users where username = 'root'`);
    const tokenUsed = await one('select coalesce(sum(used_quota), 0)::bigint as used from tokens');
    const channelUsed = await one('select coalesce(sum(used_quota), 0)::bigint as used from channels');
    const leases = await one('select count(*)::int as n from quota_leases');
    expect(Number(total)).toBeGreaterThan(0);
    expect(Number(user!.used_quota)).toBe(Number(total));
    expect(Number(user!.quota) + Number(total)).toBe(initialWallet);
    expect(Number(tokenUsed!.used)).toBe(Number(total));
    expect(Number(channelUsed!.used)).toBe(Number(total));
    expect(Number(leases!.n)).toBe(0);
  }, 30_000);
});
