import { request } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimateClaudePromptTokens } from '../../gateway/src/domain/billing/index.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { billed } from '../support/usage.ts';
import { eventually } from '../support/wait.ts';

// What coding agents call besides generation: Anthropic's token counting, the Responses compaction, and
// request bodies sent compressed. `shared-model` is on both channels, the Anthropic one at a higher
// priority, so a request only OpenAI can serve must pass it over.

const CLAUDE = 'claude-sonnet-4-20250514';
const GPT = 'gpt-5-codex';
const SHARED = 'shared-model';
const BODY_LIMIT_MB = 1;

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let openaiUp: MockOpenAI;
let anthropicUp: MockAnthropic;
let key: string;
let openai: OpenAI;
let claude: Anthropic;

beforeAll(async () => {
  [openaiUp, anthropicUp] = await Promise.all([startMockOpenAI(), startMockAnthropic()]);
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { MAX_REQUEST_BODY_MB: String(BODY_LIMIT_MB) }),
  );
  root = await setupRoot(gateway.url);
  for (const [type, url, models, priority] of [
    [1, openaiUp.url, `${GPT},${SHARED}`, 0],
    [14, anthropicUp.url, `${CLAUDE},${SHARED}`, 10],
  ] as const) {
    const created = await root.post('/api/channel/', {
      name: `up-${type}`,
      type,
      key: 'sk-upstream',
      base_url: url,
      models,
      group: 'default',
      priority,
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  }
  await gateway.options.setMany({
    ModelRatio: JSON.stringify({ [CLAUDE]: 1.5, [GPT]: 0.625, [SHARED]: 1 }),
    CompletionRatio: JSON.stringify({ [CLAUDE]: 5, [GPT]: 8 }),
    CacheRatio: JSON.stringify({ [GPT]: 0.1 }),
  });
  const token = await root.post('/api/token/', { name: 'agents', unlimited_quota: true });
  const raw = String(token.body.data.key);
  key = raw.startsWith('sk-') ? raw : `sk-${raw}`;
  openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  claude = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
  expect(
    await eventually(
      async () => (await openai.models.list()).data.length,
      (n) => n === 3,
      2000,
    ),
  ).toBe(3);
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await Promise.all([openaiUp?.close(), anthropicUp?.close()]);
});

const consumeLogs = async () =>
  Number(
    (
      await gateway.store.db
        .selectFrom('logs')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('type', '=', 2)
        .executeTakeFirstOrThrow()
    ).n,
  );

/** A plain chat call, billed: a log written after it proves no earlier call left one of its own. */
const chatCall = () => openai.chat.completions.create({ model: GPT, messages: [{ role: 'user', content: 'hi' }] });

const countRequest = {
  model: CLAUDE,
  system: 'You are terse.',
  messages: [{ role: 'user' as const, content: 'How many tokens is this?' }],
  tools: [{ name: 'Bash', description: 'Run a command', input_schema: { type: 'object' as const, properties: {} } }],
};

describe('POST /v1/messages/count_tokens', () => {
  it('asks an Anthropic channel’s upstream, with the channel’s key and the client’s version and betas, unbilled', async () => {
    openaiUp.behaviour = {};
    anthropicUp.behaviour = {};
    const before = await consumeLogs();
    const seen = anthropicUp.requests.length;
    const counted = await claude.messages.countTokens(countRequest, {
      headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'token-counting-2024-11-01' },
    });
    const upstream = anthropicUp.requests.slice(seen);
    expect(upstream.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/messages/count_tokens']);
    expect(upstream[0]?.headers).toMatchObject({
      'x-api-key': 'sk-upstream',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'token-counting-2024-11-01',
    });
    expect(upstream[0]?.body).toEqual(countRequest);
    // The mock counts a token per 4 characters of its system and messages.
    const text = JSON.stringify([countRequest.system, countRequest.messages]);
    expect(counted.input_tokens).toBe(Math.ceil(text.length / 4));

    const log = await billed(gateway, chatCall);
    expect(log.model_name).toBe(GPT);
    expect(await consumeLogs()).toBe(before + 1);
  });

  it('counts locally on a channel that cannot count, with the estimate the relay bills by', async () => {
    const seen = openaiUp.requests.length;
    const body = { ...countRequest, model: GPT };
    const counted = await claude.messages.countTokens(body);
    expect(counted.input_tokens).toBe(estimateClaudePromptTokens(GPT, body));
    expect(counted.input_tokens).toBeGreaterThan(10);
    expect(openaiUp.requests.length).toBe(seen);
  });

  it('refuses in Claude’s error shape: no key, an unknown model, an upstream refusal', async () => {
    const post = (body: unknown, headers: Record<string, string> = { 'x-api-key': key }) =>
      fetch(`${gateway.url}/v1/messages/count_tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
        body: JSON.stringify(body),
      });
    const anonymous = await post(countRequest, {});
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()) as any).toMatchObject({ type: 'error', error: { type: expect.any(String) } });

    const unknown = await post({ ...countRequest, model: 'no-such-model' });
    expect(unknown.status).toBe(503);
    expect(((await unknown.json()) as any).error.message).toContain('no-such-model');

    anthropicUp.behaviour = { failWith: { status: 400, message: 'messages: Field required', times: 1 } };
    const refused = await post({ model: CLAUDE });
    expect(refused.status).toBe(400);
    expect((await refused.json()) as any).toMatchObject({
      type: 'error',
      error: { message: expect.stringContaining('messages: Field required') },
    });
    anthropicUp.behaviour = {};
  });
});

describe('POST /v1/responses/compact', () => {
  const input = [
    { role: 'user' as const, content: 'Write a script.' },
    { role: 'assistant' as const, content: 'Here it is.' },
  ];

  it('is relayed to an OpenAI channel and billed from its usage, cached tokens at the cache ratio', async () => {
    openaiUp.behaviour = { usage: { prompt_tokens: 5000, cached_tokens: 4000, completion_tokens: 300 } };
    const seen = openaiUp.requests.length;
    let compacted: Awaited<ReturnType<OpenAI['responses']['compact']>> | undefined;
    const log = await billed(gateway, async () => {
      compacted = await openai.responses.compact({ model: GPT, input, prompt_cache_key: 'thread-1' });
    });
    expect(compacted?.object).toBe('response.compaction');
    expect(compacted?.output.at(-1)).toMatchObject({ type: 'compaction', encrypted_content: 'compacted-by-the-mock' });
    const upstream = openaiUp.requests.slice(seen);
    expect(upstream.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/responses/compact']);
    expect(upstream[0]?.body).toEqual({ model: GPT, input, prompt_cache_key: 'thread-1' });
    // (1000 uncached + 4000 cached × 0.1 + 300 × 8) × 0.625
    expect(log.quota).toBe(Math.round((1000 + 4000 * 0.1 + 300 * 8) * 0.625));
    expect(log).toMatchObject({ model_name: GPT, prompt_tokens: 5000, completion_tokens: 300 });
    expect(log.other).toMatchObject({ cache_tokens: 4000, request_path: '/v1/responses/compact' });
  });

  it('is priced as <model>-openai-compact when that name has a ratio of its own, as in new-api', async () => {
    const ratios = gateway.options.get('ModelRatio');
    await gateway.options.set('ModelRatio', JSON.stringify({ ...JSON.parse(ratios), [`${GPT}-openai-compact`]: 0.25 }));
    try {
      openaiUp.behaviour = { usage: { prompt_tokens: 1000, completion_tokens: 100 } };
      const log = await billed(gateway, () => openai.responses.compact({ model: GPT, input }));
      // The compaction's own model ratio, with the model's completion ratio (none set for the compact name: 1).
      expect(log.quota).toBe(Math.round((1000 + 100) * 0.25));
      expect(log.model_name).toBe(GPT);
    } finally {
      await gateway.options.set('ModelRatio', ratios);
    }
  });

  it('passes over a channel that cannot compact, even at a higher priority', async () => {
    openaiUp.behaviour = { usage: { prompt_tokens: 100, completion_tokens: 10 } };
    const seenAnthropic = anthropicUp.requests.length;
    let compacted: Awaited<ReturnType<OpenAI['responses']['compact']>> | undefined;
    const log = await billed(gateway, async () => {
      compacted = await openai.responses.compact({ model: SHARED, input });
    });
    expect(compacted?.object).toBe('response.compaction');
    expect(anthropicUp.requests.length).toBe(seenAnthropic);
    expect(log.quota).toBe(100 + 10);
  });

  it('answers a clear OpenAI error when only channels that cannot compact serve the model', async () => {
    const seen = anthropicUp.requests.length;
    const error = await openai.responses.compact({ model: CLAUDE, input }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      code: 'format_unsupported',
      message: expect.stringContaining('openai-responses-compact'),
    });
    expect(anthropicUp.requests.length).toBe(seen);
  });
});

describe('GET /v1/responses with a WebSocket upgrade', () => {
  /** A WebSocket handshake as Codex opens it, and the plain HTTP answer it gets. */
  const handshake = (headers: Record<string, string>) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const call = request(`${gateway.url}/v1/responses`, { headers });
      call.on('response', (answer) => {
        let text = '';
        answer.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      });
      call.on('upgrade', () => reject(new Error('the gateway accepted a WebSocket')));
      call.on('error', reject);
      call.end();
    });

  it('answers 426 in OpenAI’s shape, so that Codex falls back to HTTP at once', async () => {
    const answer = await handshake({
      authorization: `Bearer ${key}`,
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      'sec-websocket-version': '13',
    });
    expect(answer.status).toBe(426);
    expect(answer.body).toMatchObject({
      error: { code: 'websocket_unsupported', message: expect.stringContaining('POST /v1/responses') },
    });
  });

  it('is an unknown path without the upgrade', async () => {
    const answer = await handshake({ authorization: `Bearer ${key}` });
    expect(answer.status).toBe(404);
    expect(answer.body.error.message).toContain('Invalid URL (GET /v1/responses)');
  });
});

describe('compressed request bodies', () => {
  const chat = { model: GPT, messages: [{ role: 'user', content: 'compressed hello' }] };
  const post = (path: string, body: Buffer, encoding: string, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': encoding, ...headers },
      body,
    });
  const relay = (body: Buffer, encoding: string) =>
    post('/v1/chat/completions', body, encoding, { authorization: `Bearer ${key}` });
  const json = Buffer.from(JSON.stringify(chat));

  it.each([
    ['gzip', gzipSync(json)],
    ['br', brotliCompressSync(json)],
    ['zstd', zstdCompressSync(json)],
    ['deflate', deflateSync(json)],
    ['gzip, br', brotliCompressSync(gzipSync(json))],
  ])('relays a %s body, decoded, and bills it', async (encoding, body) => {
    openaiUp.behaviour = { reply: 'decoded', usage: { prompt_tokens: 10, completion_tokens: 2 } };
    expect(body.length).not.toBe(json.length);
    let status = 0;
    let reply: any;
    const log = await billed(gateway, async () => {
      const answer = await relay(body, encoding);
      status = answer.status;
      reply = await answer.json();
    });
    expect(status).toBe(200);
    expect(reply.choices[0].message.content).toBe('decoded');
    expect(openaiUp.requests.at(-1)?.body.messages).toEqual(chat.messages);
    expect(openaiUp.requests.at(-1)?.headers['content-encoding']).toBeUndefined();
    expect(log.quota).toBe(Math.round((10 + 2 * 8) * 0.625));
  });

  it('decodes /api bodies too', async () => {
    const login = await post(
      '/api/user/login',
      gzipSync(JSON.stringify({ username: 'root', password: 'root-password' })),
      'gzip',
    );
    expect(((await login.json()) as any).success).toBe(true);
  });

  it('refuses an unknown coding with 415, in the client’s error shape', async () => {
    const seen = openaiUp.requests.length;
    const answer = await relay(json, 'compress');
    expect(answer.status).toBe(415);
    expect((await answer.json()) as any).toMatchObject({
      error: { code: 'UNSUPPORTED_CONTENT_ENCODING', message: expect.stringContaining('compress') },
    });
    const messages = await post('/v1/messages', json, 'snappy', {
      'x-api-key': key,
      'anthropic-version': '2023-06-01',
    });
    expect(messages.status).toBe(415);
    expect((await messages.json()) as any).toMatchObject({
      type: 'error',
      error: { message: expect.stringContaining('snappy') },
    });
    expect(openaiUp.requests.length).toBe(seen);
  });

  it('survives a coding named on a request whose body is never read', async () => {
    const models = await fetch(`${gateway.url}/v1/models`, {
      headers: { authorization: `Bearer ${key}`, 'content-encoding': 'gzip' },
    });
    expect(models.status).toBe(200);
    // No parser for the type: refused before the body is read.
    const xml = await post('/v1/chat/completions', Buffer.from('not gzip'), 'gzip', {
      authorization: `Bearer ${key}`,
      'content-type': 'application/xml',
    });
    expect(xml.status).toBe(415);
    expect((await relay(gzipSync(json), 'gzip')).status).toBe(200);
  });

  it('refuses a body that does not decode with 400', async () => {
    const answer = await relay(Buffer.from('this is not gzip at all'), 'gzip');
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as any).error.code).toBe('BAD_CONTENT_ENCODING');
  });

  it('refuses with 413 a small body that inflates past the limit (a zip bomb), and keeps serving', async () => {
    // 64 gzip members of 1 MiB of zeros each: 64 KiB on the wire, 64 MiB decoded, against a 1 MiB limit.
    const member = gzipSync(Buffer.alloc(1024 * 1024));
    const bomb = Buffer.concat(Array.from({ length: 64 }, () => member));
    expect(bomb.length).toBeLessThan(BODY_LIMIT_MB * 1024 * 1024);
    const seen = openaiUp.requests.length;
    const answer = await relay(bomb, 'gzip');
    expect(answer.status).toBe(413);
    expect(((await answer.json()) as any).error.code).toBe('BODY_TOO_LARGE');
    expect(openaiUp.requests.length).toBe(seen);
    openaiUp.behaviour = { reply: 'still here' };
    expect((await relay(gzipSync(json), 'gzip')).status).toBe(200);
  });
});
