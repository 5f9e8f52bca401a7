import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OFF_LOOP_LENGTH, promptCountPool, QUEUE_LIMIT } from '../../gateway/src/domain/billing/prompt-count-pool.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockServer, serveMock } from '../support/mock-server.ts';
import { billed } from '../support/usage.ts';
import { eventually } from '../support/wait.ts';

// Issue 18: every bound of relay input refused with a 400 and a stable code in the client's format,
// before anything is reserved, sent upstream or billed.
const QPU = 500_000;
const IMAGE_PRICE = 0.04;
const MODELS = ['gpt-4o', 'dall-e-2', 'dall-e-3', 'claude-sonnet-4', 'gemini-2.5-flash'];

let gateway: Gateway;
let drop: () => Promise<void>;
let upstream: MockServer;
/** Requests the upstream received, by path. */
const received: string[] = [];
/** Images the upstream makes per request, whatever `n` asks for (undefined: as many as asked). */
let imagesMade: number | undefined;
let key: string;
let userId: number;
let root: DashboardClient;

beforeAll(async () => {
  upstream = await serveMock(async (req, res, raw) => {
    received.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url?.startsWith('/v1/images/')) {
      const asked = req.headers['content-type']?.includes('json') ? (JSON.parse(raw.toString()).n ?? 1) : 1;
      const data = Array.from({ length: imagesMade ?? asked }, (_, i) => ({ url: `https://images.example/${i}.png` }));
      return void res.end(JSON.stringify({ created: 1, data }));
    }
    res.end(
      JSON.stringify({
        id: 'chatcmpl-bounds',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      }),
    );
  });
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  const channel = await root.post('/api/channel/', {
    name: 'mock',
    type: 1,
    key: 'sk-upstream',
    base_url: upstream.url,
    models: MODELS.join(','),
    group: 'default',
  });
  expect(channel.body.success).toBe(true);
  await gateway.options.setMany({
    GroupRatio: JSON.stringify({ default: 1 }),
    ModelRatio: JSON.stringify({ 'gpt-4o': 1.25, 'claude-sonnet-4': 1.5, 'gemini-2.5-flash': 0.15 }),
    ModelPrice: JSON.stringify({ 'dall-e-2': IMAGE_PRICE, 'dall-e-3': IMAGE_PRICE }),
  });
  const token = await root.post('/api/token/', { name: 'bounds', remain_quota: 50_000_000 });
  key = token.body.data.key;
  const self = await root.get('/api/user/self');
  userId = self.body.data.id;
  await eventually(
    async () => (await relay('/v1/models', undefined, 'GET')).json() as Promise<{ data: unknown[] }>,
    (list) => list.data?.length === MODELS.length,
    5000,
  );
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await upstream?.close();
});

beforeEach(() => {
  imagesMade = undefined;
});

function relay(path: string, body?: unknown, method = 'POST', headers: Record<string, string> = {}) {
  const raw = typeof body === 'string' || body instanceof FormData ? body : JSON.stringify(body);
  return fetch(`${gateway.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer sk-${key}`,
      'x-api-key': `sk-${key}`,
      ...(typeof raw === 'string' ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: method === 'GET' ? undefined : raw,
  });
}

/** Quota used by the user and consume logs: nothing may move on a refusal. */
async function books() {
  const db = gateway.store.db;
  const user = await db.selectFrom('users').select('used_quota').where('id', '=', userId).executeTakeFirstOrThrow();
  const logs = await db
    .selectFrom('logs')
    .select(db.fn.countAll().as('n'))
    .where('type', '=', 2)
    .executeTakeFirstOrThrow();
  return { used: Number(user.used_quota), logs: Number(logs.n), upstream: received.length };
}

/** Runs `call`, which serves `count` requests, and waits for their consume logs, so that none lands in a later test. */
async function served(count: number, call: () => Promise<void>) {
  const before = await books();
  await call();
  await eventually(books, (now) => now.logs === before.logs + count, 5000);
}

/** Sends, and expects a 400 in OpenAI's format with `code`, with nothing sent upstream or billed. */
async function refusedOpenAI(path: string, body: unknown, code: string) {
  const before = await books();
  const answer = await relay(path, body);
  const json = (await answer.json()) as { error: { code: string; message: string } };
  expect(answer.status, JSON.stringify(json)).toBe(400);
  expect(json.error.code).toBe(code);
  expect(await books()).toEqual(before);
  return json;
}

const chat = (extra: Record<string, unknown>) => ({
  model: 'gpt-4o',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

describe('completion budgets', () => {
  it.each([
    ['max_tokens', -1],
    ['max_tokens', 10.5],
    ['max_tokens', 1e308],
    ['max_tokens', '100'],
    ['max_tokens', 2 ** 31],
    ['max_completion_tokens', 1e20],
    ['max_completion_tokens', -0.5],
  ])('refuses chat %s = %j with max_tokens_out_of_range', async (field, value) => {
    const refused = await refusedOpenAI('/v1/chat/completions', chat({ [field]: value }), 'max_tokens_out_of_range');
    expect(refused.error.message).toContain(field);
  });

  it('refuses a Responses max_output_tokens out of range', async () => {
    await refusedOpenAI(
      '/v1/responses',
      { model: 'gpt-4o', input: 'hi', max_output_tokens: 1e10 },
      'max_tokens_out_of_range',
    );
  });

  it('refuses a Claude max_tokens out of range in Claude’s format', async () => {
    const before = await books();
    const answer = await relay('/v1/messages', {
      model: 'claude-sonnet-4',
      max_tokens: -5,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.status).toBe(400);
    const json = (await answer.json()) as { type: string; error: { type: string; message: string } };
    expect(json.type).toBe('error');
    expect(json.error.message).toContain('max_tokens');
    expect(await books()).toEqual(before);
  });

  it('refuses a Gemini maxOutputTokens out of range in Gemini’s format', async () => {
    const before = await books();
    const answer = await relay(`/v1beta/models/gemini-2.5-flash:generateContent?key=sk-${key}`, {
      contents: [{ parts: [{ text: 'hi' }] }],
      generationConfig: { maxOutputTokens: 1e308 },
    });
    expect(answer.status).toBe(400);
    const json = (await answer.json()) as { error: { code: number; message: string; status: string } };
    expect(json.error.code).toBe(400);
    expect(json.error.message).toContain('maxOutputTokens');
    expect(await books()).toEqual(before);
  });

  it('takes a budget within range (and null as unset)', async () => {
    const budgets = [{ max_tokens: 0 }, { max_tokens: 2 ** 31 - 1 }, { max_completion_tokens: null }];
    await served(budgets.length, async () => {
      for (const extra of budgets) {
        const answer = await relay('/v1/chat/completions', chat(extra));
        expect(answer.status, JSON.stringify(extra)).toBe(200);
      }
    });
  });
});

describe('image counts', () => {
  it.each([
    ['dall-e-2', 1e9],
    ['dall-e-2', 1e308],
    ['dall-e-2', 0],
    ['dall-e-2', 11],
    ['dall-e-2', 2.5],
    ['dall-e-2', '3'],
    ['dall-e-3', 2],
  ])('refuses %s with n = %j with image_count_out_of_range', async (model, n) => {
    await refusedOpenAI('/v1/images/generations', { model, prompt: 'a fox', n }, 'image_count_out_of_range');
  });

  it('refuses an image edit whose n is not a count within the limit', async () => {
    for (const n of ['abc', '1e9', '11']) {
      const form = new FormData();
      form.set('model', 'dall-e-2');
      form.set('prompt', 'a fox');
      form.set('n', n);
      form.set('image', new Blob([Buffer.from('png')], { type: 'image/png' }), 'a.png');
      await refusedOpenAI('/v1/images/edits', form, 'image_count_out_of_range');
    }
  });

  it('bills the images the upstream returned, not the n asked for', async () => {
    imagesMade = 1;
    const log = await billed(gateway, async () => {
      const answer = await relay('/v1/images/generations', { model: 'dall-e-2', prompt: 'a fox', n: 4 });
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { data: unknown[] }).data).toHaveLength(1);
    });
    // $0.04 × 1 image returned × QuotaPerUnit × group 1
    expect(log.quota).toBe(Math.round(IMAGE_PRICE * 1 * QPU));
    imagesMade = undefined;
    const all = await billed(gateway, () =>
      relay('/v1/images/generations', { model: 'dall-e-2', prompt: 'a fox', n: 3 }),
    );
    expect(all.quota).toBe(Math.round(IMAGE_PRICE * 3 * QPU));
  });
});

describe('model names', () => {
  it.each([
    ['a NUL byte', 'gpt-4o\u0000'],
    ['a control character', 'gpt\u001b[31m-4o'],
    ['a lone surrogate', 'gpt-4o\ud800'],
    ['absurd length', 'm'.repeat(5000)],
  ])('refuses a model name with %s with invalid_text', async (_, model) => {
    await refusedOpenAI('/v1/chat/completions', chat({ model }), 'invalid_text');
  });

  it('refuses a Gemini path with a malformed escape or a control character in the model', async () => {
    for (const path of ['/v1beta/models/%25E0%25A4:generateContent', '/v1beta/models/gemini%2500x:generateContent']) {
      const answer = await relay(`${path}?key=sk-${key}`, { contents: [{ parts: [{ text: 'hi' }] }] });
      expect(answer.status, path).toBe(400);
      expect(((await answer.json()) as { error: { status: string } }).error.status).toBe('INVALID_ARGUMENT');
    }
  });
});

describe('JSON depth', () => {
  const nested = (depth: number) => `${'['.repeat(depth - 1)}1${']'.repeat(depth - 1)}`;

  it('refuses a 5,000-deep body with body_too_deep, in each client’s format', async () => {
    const body = `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"metadata":${nested(5000)}}`;
    const json = await refusedOpenAI('/v1/chat/completions', body, 'body_too_deep');
    expect(json.error.message).toContain('128');
    const claude = await relay('/v1/messages', `{"model":"claude-sonnet-4","max_tokens":5,"x":${nested(5000)}}`);
    expect(claude.status).toBe(400);
    expect(((await claude.json()) as { type: string }).type).toBe('error');
  });

  it('refuses a 5,000-deep playground body with body_too_deep, as the console’s errors are', async () => {
    const before = await books();
    const answer = await fetch(`${gateway.url}/pg/chat/completions`, {
      method: 'POST',
      headers: { cookie: root.cookie, 'new-api-user': String(root.userId), 'content-type': 'application/json' },
      body: `{"model":"gpt-4o","group":"default","messages":[{"role":"user","content":"hi"}],"x":${nested(5000)}}`,
    });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ success: false, code: 'body_too_deep' });
    expect(await books()).toEqual(before);
    const absurd = await root.post('/pg/chat/completions', { ...chat({ max_tokens: -1 }), group: 'default' });
    expect(absurd.body).toMatchObject({ success: false, code: 'max_tokens_out_of_range' });
  });

  it('refuses a 5,000-deep task submission with body_too_deep, in the task platform’s shape', async () => {
    const answer = await relay('/suno/submit/music', `{"prompt":"a song","x":${nested(5000)}}`);
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ code: 'body_too_deep', data: null });
  });

  it('takes a body nested up to the limit, brackets inside strings not counted', async () => {
    // 128 levels: the body object, then the `x` array of 127.
    const deep = `{"model":"gpt-4o","messages":[{"role":"user","content":"${'[{'.repeat(3000)}"}],"x":${nested(127)}}`;
    await served(1, async () => {
      const answer = await relay('/v1/chat/completions', deep);
      expect(answer.status, await answer.clone().text()).toBe(200);
    });
  });
});

describe('multipart bodies', () => {
  const edit = () => {
    const form = new FormData();
    form.set('model', 'dall-e-2');
    form.set('prompt', 'a fox');
    form.set('image', new Blob([Buffer.from('png')], { type: 'image/png' }), 'a.png');
    return form;
  };

  it('refuses too many parts with multipart_too_many_parts', async () => {
    const form = edit();
    for (let i = 0; i < 70; i++) form.append(`extra_${i}`, 'x');
    await refusedOpenAI('/v1/images/edits', form, 'multipart_too_many_parts');
  });

  it('refuses too many files with multipart_too_many_files', async () => {
    const form = edit();
    for (let i = 0; i < 17; i++)
      form.append('image[]', new Blob([Buffer.from('png')], { type: 'image/png' }), `${i}.png`);
    await refusedOpenAI('/v1/images/edits', form, 'multipart_too_many_files');
  });

  it('refuses a text field that is too long with multipart_field_too_large', async () => {
    const form = edit();
    form.set('prompt', 'x'.repeat(70_000));
    await refusedOpenAI('/v1/images/edits', form, 'multipart_field_too_large');
  });

  it('bounds a video upload’s form the same way', async () => {
    const form = new FormData();
    form.set('model', 'sora-2');
    form.set('prompt', 'a fox');
    for (let i = 0; i < 70; i++) form.append(`extra_${i}`, 'x');
    await refusedOpenAI('/v1/videos', form, 'multipart_too_many_parts');
    form.set('prompt', 'x'.repeat(70_000));
    for (let i = 0; i < 70; i++) form.delete(`extra_${i}`);
    await refusedOpenAI('/v1/videos', form, 'multipart_field_too_large');
  });

  it('takes an edit within the bounds', async () => {
    await served(1, async () => {
      const answer = await relay('/v1/images/edits', edit());
      expect(answer.status, await answer.clone().text()).toBe(200);
    });
  });
});

describe('a busy prompt-count pool', () => {
  it('refuses a long prompt with 503 token_count_busy in the client’s format while its queue is full', async () => {
    // This process's gateway shares the pool: fill its threads and its queue with counts of our own.
    const pool = promptCountPool();
    // Every thread busy with a long count (words never seen before: the tokenizer caches the pieces it has
    // met), then the queue filled with short ones: it stays full until a long count ends, seconds later.
    let seed = 1;
    const unique = () =>
      Array.from({ length: 4000 }, () => {
        seed = (seed * 48271) % 2147483647;
        return seed.toString(36);
      }).join(' ');
    const heavy = () => ({ texts: Array.from({ length: 40 }, unique), tokens: 0 });
    const filling: Array<Promise<number>> = [];
    while (pool.waiting === 0) filling.push(pool.count('gpt-4o', heavy()));
    while (pool.waiting < QUEUE_LIMIT) filling.push(pool.count('gpt-4o', { texts: ['x '.repeat(3000)], tokens: 0 }));
    try {
      const before = await books();
      const long = 'word '.repeat(OFF_LOOP_LENGTH);
      const openai = await relay('/v1/chat/completions', chat({ messages: [{ role: 'user', content: long }] }));
      expect(openai.status).toBe(503);
      expect(openai.headers.get('retry-after')).toBe('1');
      expect(((await openai.json()) as { error: { code: string } }).error.code).toBe('token_count_busy');
      const claude = await relay('/v1/messages', {
        model: 'claude-sonnet-4',
        max_tokens: 5,
        messages: [{ role: 'user', content: long }],
      });
      expect(claude.status).toBe(503);
      expect(((await claude.json()) as { type: string }).type).toBe('error');
      // The queue was still full when both were refused.
      expect(pool.waiting).toBeGreaterThan(0);
      expect(await books()).toEqual(before);
    } finally {
      await Promise.all(filling);
    }
    // Drained, the pool counts again.
    await served(1, async () => {
      const answer = await relay(
        '/v1/chat/completions',
        chat({ messages: [{ role: 'user', content: 'word '.repeat(OFF_LOOP_LENGTH) }] }),
      );
      expect(answer.status).toBe(200);
    });
  });
});
