import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import {
  azure,
  cloudflare,
  mistral,
  perplexity,
  startVendorFront,
  type VendorFront,
} from '../support/mock-openai-vendors.ts';
import { billed } from '../support/usage.ts';
import { eventually } from '../support/wait.ts';

// OpenAI-compatible vendors with their own paths and rules, end to end: Azure (3) deployments without
// dots, Cloudflare Workers AI (39) under the account id, Mistral (42) sent only the fields it accepts,
// Perplexity (27) at its root. Each vendor's front checks what the vendor checks before the OpenAI mock answers.
const REPLY = 'Hello from a vendor.';
const USAGE = { prompt_tokens: 120, completion_tokens: 30 };
// (prompt + completion × CompletionRatio 2) × ModelRatio 1
const CHAT_QUOTA = 120 + 30 * 2;

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let upstream: MockOpenAI;
const fronts: Record<'azure' | 'cloudflare' | 'mistral' | 'perplexity', VendorFront> = {} as never;
const ids: Record<string, number> = {};
let openai: OpenAI;

const MODELS = {
  azure: ['gpt-4.1', 'gpt-3.5-turbo', 'text-embedding-3-small'],
  cloudflare: ['@cf/meta/llama-3.1-8b-instruct', '@cf/baai/bge-m3'],
  mistral: ['mistral-small-latest', 'mistral-embed'],
  perplexity: ['sonar'],
};
/** Channels whose keys the vendors refuse, each with a model of its own. */
const REVOKED = { azure: 'gpt-4o', perplexity: 'sonar-pro' };

async function createChannel(name: keyof typeof MODELS, type: number, key: string, other = '') {
  const created = await root.post('/api/channel/', {
    name,
    type,
    key,
    other,
    base_url: fronts[name].url,
    models: MODELS[name].join(','),
    group: 'default',
  });
  expect(created.body.success, JSON.stringify(created.body)).toBe(true);
}

beforeAll(async () => {
  upstream = await startMockOpenAI();
  fronts.azure = await startVendorFront(
    upstream,
    azure('az-key', ['gpt-41', 'gpt-35-turbo', 'text-embedding-3-small']),
  );
  fronts.cloudflare = await startVendorFront(upstream, cloudflare('cf-token', 'acc-1'));
  fronts.mistral = await startVendorFront(upstream, mistral('mi-key'));
  fronts.perplexity = await startVendorFront(upstream, perplexity('pp-key'));
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  await createChannel('azure', 3, 'az-key', '2024-10-21');
  await createChannel('cloudflare', 39, 'cf-token', 'acc-1');
  await createChannel('mistral', 42, 'mi-key');
  await createChannel('perplexity', 27, 'pp-key');
  for (const [name, model] of Object.entries(REVOKED)) {
    const created = await root.post('/api/channel/', {
      name: `${name}-revoked`,
      type: name === 'azure' ? 3 : 27,
      key: 'revoked-key',
      base_url: fronts[name as keyof typeof REVOKED].url,
      models: model,
      group: 'default',
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  }
  for (const channel of (await root.get('/api/channel/?p=1&page_size=10')).body.data.items)
    ids[channel.name] = channel.id;
  const all = [...Object.values(MODELS).flat(), ...Object.values(REVOKED)];
  await gateway.options.setMany({
    ModelRatio: JSON.stringify(Object.fromEntries(all.map((m) => [m, 1]))),
    CompletionRatio: JSON.stringify(Object.fromEntries(all.map((m) => [m, 2]))),
  });
  const key = (await root.post('/api/token/', { name: 'vendors', unlimited_quota: true })).body.data.key;
  openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  await eventually(
    async () => (await openai.models.list()).data.length,
    (n) => n === all.length,
    2000,
  );
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await Promise.all([upstream?.close(), ...Object.values(fronts).map((front) => front.close())]);
});

/** Runs the channel test; its free log is waited for, so it cannot land in a later test's bill. */
async function channelTest(id: number | undefined, query = '') {
  let body: any;
  const log = await billed(gateway, async () => {
    body = (await root.get(`/api/channel/test/${id}${query}`)).body;
  });
  expect(log.quota).toBe(0);
  return body;
}

/** A plain chat and a stream, each answered with the upstream text and billed by the formula. */
async function chatAndStream(model: string, extra: Record<string, unknown> = {}) {
  upstream.behaviour = { reply: REPLY, usage: USAGE };
  const plain = await billed(gateway, async () => {
    const answer = await openai.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Hello?' }],
      ...extra,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(answer.choices[0]?.message.content).toBe(REPLY);
  });
  expect(plain.quota).toBe(CHAT_QUOTA);
  let text = '';
  const streamed = await billed(gateway, async () => {
    const stream = await openai.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Hello?' }],
      stream: true,
      ...extra,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  });
  expect(text).toBe(REPLY);
  expect(streamed.quota).toBe(CHAT_QUOTA);
}

describe('Azure (3)', () => {
  it('sends gpt-4.1 to the deployment gpt-41 and gpt-3.5-turbo to gpt-35-turbo, with the api-key header', async () => {
    await chatAndStream('gpt-4.1');
    const sent = fronts.azure.requests.at(-1)!;
    expect(sent.path).toBe('/openai/deployments/gpt-41/chat/completions');
    expect(sent.query.get('api-version')).toBe('2024-10-21');
    expect(sent.headers['api-key']).toBe('az-key');
    expect(sent.headers.authorization).toBeUndefined();
    // The body keeps the model's own name.
    expect(sent.body.model).toBe('gpt-4.1');
    await chatAndStream('gpt-3.5-turbo');
    expect(fronts.azure.requests.at(-1)?.path).toBe('/openai/deployments/gpt-35-turbo/chat/completions');
  });

  it('passes the channel test', async () => {
    upstream.behaviour = { reply: REPLY, usage: USAGE };
    expect(await channelTest(ids.azure, '?model=gpt-4.1')).toMatchObject({ success: true });
  });

  it('on API version v1, sends to /openai/v1 with no dated version, the body naming the deployment', async () => {
    const created = await root.post('/api/channel/', {
      name: 'azure-v1',
      type: 3,
      key: 'az-key',
      other: 'v1',
      base_url: fronts.azure.url,
      models: 'gpt-35-turbo',
      group: 'default',
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
    upstream.behaviour = { reply: REPLY, usage: USAGE };
    expect(await channelTest(created.body.data.id, '?model=gpt-35-turbo')).toMatchObject({ success: true });
    const sent = fronts.azure.requests.at(-1)!;
    expect([sent.path, sent.query.toString(), sent.headers['api-key'], sent.body.model]).toEqual([
      '/openai/v1/chat/completions',
      '',
      'az-key',
      'gpt-35-turbo',
    ]);
  });
});

describe('Cloudflare Workers AI (39)', () => {
  it('refuses a channel without the account id, saying what is missing', async () => {
    const refused = await root.post('/api/channel/', {
      name: 'cf-no-account',
      type: 39,
      key: 'cf-token',
      models: '@cf/meta/llama-3.1-8b-instruct',
    });
    expect(refused.body).toMatchObject({ success: false, code: 'CHANNEL_OTHER_REQUIRED' });
    expect(refused.body.message).toContain('type 39 (Cloudflare)');
  });

  it('chats, streams and embeds under the account path with the Bearer token, billed to the unit', async () => {
    await chatAndStream('@cf/meta/llama-3.1-8b-instruct');
    const sent = fronts.cloudflare.requests.at(-1)!;
    expect(sent.path).toBe('/client/v4/accounts/acc-1/ai/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer cf-token');
    const log = await billed(gateway, async () => {
      const answer = await openai.embeddings.create({ model: '@cf/baai/bge-m3', input: 'hello' });
      expect(answer.data[0]?.embedding).toHaveLength(3);
    });
    expect(fronts.cloudflare.requests.at(-1)?.path).toBe('/client/v4/accounts/acc-1/ai/v1/embeddings');
    expect(log.quota).toBe(120);
  });

  it('passes the channel test', async () => {
    expect(await channelTest(ids.cloudflare)).toMatchObject({ success: true });
  });

  it('fetches the account’s chat and embedding models from its model search, as the console asks', async () => {
    const types = (await root.get('/api/channel/types')).body.data;
    expect(types.find((type: { id: number }) => type.id === 39)).toMatchObject({ model_listing: true });
    const listed = [
      '@cf/baai/bge-m3',
      '@cf/meta/llama-3.1-8b-instruct',
      '@cf/meta/llama-3.3-70b-instruct-fp8-fast',
      '@cf/qwen/qwen3-embedding-0.6b',
    ];
    expect((await root.get(`/api/channel/fetch_models/${ids.cloudflare}`)).body).toMatchObject({
      success: true,
      data: listed,
    });
    const sent = fronts.cloudflare.requests.at(-1)!;
    expect(sent.path).toBe('/client/v4/accounts/acc-1/ai/models/search');
    expect(sent.headers.authorization).toBe('Bearer cf-token');
    const unsaved = { type: 39, key: 'cf-token', other: 'acc-1', base_url: fronts.cloudflare.url };
    expect((await root.post('/api/channel/fetch_models', unsaved)).body).toMatchObject({ success: true, data: listed });
  });

  it('gives a wrong token Cloudflare’s refusal, and asks for the account id when it is missing', async () => {
    const wrong = { type: 39, key: 'cf-wrong-token', other: 'acc-1', base_url: fronts.cloudflare.url };
    const refused = await root.post('/api/channel/fetch_models', wrong);
    expect(refused.body).toMatchObject({ success: false, code: 'UPSTREAM_REFUSED' });
    expect(refused.body.message).toContain('HTTP 401');
    expect(refused.body.message).toContain('Authentication error');
    expect(refused.body.message).not.toContain('cf-wrong-token');
    const missing = await root.post('/api/channel/fetch_models', { ...wrong, key: 'cf-token', other: '' });
    expect(missing.body).toMatchObject({ success: false, code: 'CHANNEL_OTHER_REQUIRED' });
  });
});

describe('Mistral (42)', () => {
  it('is refused by its mock for a field outside its schema, in its 422 shape', async () => {
    const answer = await fetch(`${fronts.mistral.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer mi-key', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mistral-small-latest', messages: [], user: 'u-1' }),
    });
    expect(answer.status).toBe(422);
    expect(await answer.json()).toMatchObject({
      object: 'error',
      message: { detail: [{ type: 'extra_forbidden', loc: ['body', 'user'] }] },
      type: 'invalid_request_error',
    });
  });

  it('gets only the fields it accepts: OpenAI clients chat and stream with user, seed and max_completion_tokens', async () => {
    await chatAndStream('mistral-small-latest', { user: 'u-1', seed: 7, max_completion_tokens: 64, store: false });
    const sent = fronts.mistral.requests.at(-1)!;
    expect(sent.body).toMatchObject({ model: 'mistral-small-latest', stream: true, random_seed: 7, max_tokens: 64 });
    for (const field of ['user', 'seed', 'max_completion_tokens', 'store', 'stream_options']) {
      expect(sent.body, field).not.toHaveProperty(field);
    }
  });

  it('takes back a tool result whose call id is not in its form (the id is given its 9-character form)', async () => {
    upstream.behaviour = { reply: REPLY, usage: USAGE };
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } }];
    const first = await openai.chat.completions.create({
      model: 'mistral-small-latest',
      messages: [{ role: 'user', content: 'Weather?' }],
      tools,
    });
    const call = first.choices[0]?.message.tool_calls?.[0];
    if (call?.type !== 'function') throw new Error(`no function call in ${JSON.stringify(first)}`);
    const second = await openai.chat.completions.create({
      model: 'mistral-small-latest',
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ ...call, id: 'toolu_01ABC' }] },
        { role: 'tool', tool_call_id: 'toolu_01ABC', content: 'sunny' },
      ],
      // Without tools the OpenAI mock answers in text rather than calling again.
    });
    expect(second.choices[0]?.message.content).toBe(REPLY);
    const sent = fronts.mistral.requests.at(-1)!.body.messages;
    expect(sent[1].tool_calls[0].id).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(sent[2].tool_call_id).toBe(sent[1].tool_calls[0].id);
    // Both calls above were billed; wait for their logs so they land here.
    await eventually(
      async () =>
        (
          await gateway.store.db
            .selectFrom('logs')
            .select('id')
            .where('model_name', '=', 'mistral-small-latest')
            .execute()
        ).length,
      (n) => n >= 4,
      5000,
    );
  });

  it('embeds with the user field left out, billed to the unit', async () => {
    const log = await billed(gateway, async () => {
      await openai.embeddings.create({ model: 'mistral-embed', input: ['a', 'b'], user: 'u-1' });
    });
    expect(fronts.mistral.requests.at(-1)?.body).not.toHaveProperty('user');
    expect(log.quota).toBe(120);
  });
});

describe('Perplexity (27)', () => {
  it('is reached at /chat/completions, without /v1 (which its mock refuses)', async () => {
    const refused = await fetch(`${fronts.perplexity.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer pp-key' },
    });
    expect(refused.status).toBe(404);
    await chatAndStream('sonar');
    const sent = fronts.perplexity.requests.at(-1)!;
    expect(sent.path).toBe('/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer pp-key');
  });

  it('passes the channel test', async () => {
    expect(await channelTest(ids.perplexity)).toMatchObject({ success: true });
  });
});

describe('a key the vendor refuses', () => {
  const refusal = async (model: string) => {
    const error = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    if (!(error instanceof OpenAI.APIError)) throw new Error(`expected an API error, got ${String(error)}`);
    return error;
  };

  it("reaches the client as the vendor's own 401, JSON or not, never a 500", async () => {
    const azureRefusal = await refusal(REVOKED.azure);
    expect(azureRefusal.status).toBe(401);
    expect(azureRefusal.message).toContain('Access denied due to invalid subscription key');
    const perplexityRefusal = await refusal(REVOKED.perplexity);
    expect(perplexityRefusal.status).toBe(401);
    expect(perplexityRefusal.message).toContain('401 Authorization Required');
  });
});
