import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { IMAGE_TASK_LIMITS } from '../../gateway/src/relay/protocols/ali/send.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockAli, startMockAli } from '../support/mock-ali.ts';
import { type MockBaidu, startMockBaidu } from '../support/mock-baidu.ts';
import { type MockOllama, startMockOllama } from '../support/mock-ollama.ts';
import { type MockVolc, startMockVolc } from '../support/mock-volc.ts';
import { type MockZhipu, startMockZhipu } from '../support/mock-zhipu.ts';
import type { ConsumeLog } from '../support/usage.ts';
import { eventually } from '../support/wait.ts';

/**
 * Baidu ERNIE v1 (15), Zhipu v3 (16), Ali DashScope native rerank and images (17), VolcEngine bot
 * models (45) and Ollama native (4) through one gateway, each against a mock of its upstream.
 */
let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let client: OpenAI;
let apiKey: string;
let baidu: MockBaidu;
let zhipu: MockZhipu;
let ali: MockAli;
let volc: MockVolc;
let ollama: MockOllama;
const channels: Record<string, number> = {};

const BAIDU_KEY = 'bce-api-key-1';
const BAIDU_SECRET = 'bce-secret-1';
const ZHIPU_ID = 'a1b2c3d4e5f6';
const ZHIPU_SECRET = 'zhipu-signing-secret';
const ALI_KEY = 'sk-dashscope-1';
const VOLC_KEY = 'ark-key-1';

const RATIOS: Record<string, number> = {
  'ERNIE-4.0-8K': 2,
  'ERNIE-3.5-8K': 1,
  'Embedding-V1': 0.5,
  chatglm_turbo: 1.5,
  'llama3.1': 0.25,
  'nomic-embed-text': 2,
  'gte-rerank': 0.1,
  'bot-20250101-abc': 1,
  'doubao-pro-32k': 1,
  'qwen-plus': 1,
  'ERNIE-Speed-8K': 1,
  chatglm_lite: 1,
  'gte-rerank-v2': 1,
};
const COMPLETION: Record<string, number> = { 'ERNIE-4.0-8K': 3, chatglm_turbo: 2, 'llama3.1': 4 };
/** (prompt + completion × completion ratio) × model ratio, group ratio 1. */
const quota = (model: string, prompt: number, completion: number) =>
  Math.round((prompt + completion * (COMPLETION[model] ?? 1)) * (RATIOS[model] ?? 1));

/**
 * Runs `call` and answers its consume log: the first one for `model` after the call started (other
 * calls' logs, channel tests' included, may still be landing meanwhile).
 */
async function billed(model: string, call: () => Promise<unknown>): Promise<ConsumeLog> {
  const db = gateway.store.db;
  const last = await db.selectFrom('logs').select('id').orderBy('id', 'desc').executeTakeFirst();
  await call();
  const row = await eventually(
    () =>
      db
        .selectFrom('logs')
        .selectAll()
        .where('type', '=', 2)
        .where('id', '>', last?.id ?? 0)
        .where('model_name', '=', model)
        .where('token_name', '=', 'cn2')
        .orderBy('id', 'asc')
        .executeTakeFirst(),
    (found) => found !== undefined,
    5000,
  );
  return { ...row!, other: JSON.parse(row!.other || '{}') };
}

async function channel(name: string, type: number, key: string, baseUrl: string, models: string) {
  const created = await root.post('/api/channel/', { name, type, key, base_url: baseUrl, models, group: 'default' });
  expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  channels[name] = created.body.data.id;
}

beforeAll(async () => {
  [baidu, zhipu, ali, volc, ollama] = await Promise.all([
    startMockBaidu({ [BAIDU_KEY]: BAIDU_SECRET }),
    startMockZhipu({ [ZHIPU_ID]: ZHIPU_SECRET }),
    startMockAli(ALI_KEY),
    startMockVolc(VOLC_KEY),
    startMockOllama(['llama3.1', 'nomic-embed-text']),
  ]);
  IMAGE_TASK_LIMITS.firstPollMs = 50;
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  await gateway.options.setMany({
    ModelRatio: JSON.stringify(RATIOS),
    CompletionRatio: JSON.stringify(COMPLETION),
    ModelPrice: JSON.stringify({ 'wanx-v1': 0.02 }),
    AutomaticDisableChannelEnabled: 'false',
  });
  await channel('baidu', 15, `${BAIDU_KEY}|${BAIDU_SECRET}`, baidu.url, 'ERNIE-4.0-8K,ERNIE-3.5-8K,Embedding-V1');
  await channel('baidu-bad', 15, `${BAIDU_KEY}|wrong-secret`, baidu.url, 'ERNIE-Speed-8K');
  await channel('zhipu', 16, `${ZHIPU_ID}.${ZHIPU_SECRET}`, zhipu.url, 'chatglm_turbo');
  await channel('zhipu-bad', 16, `${ZHIPU_ID}.not-the-secret`, zhipu.url, 'chatglm_lite');
  await channel('ali', 17, ALI_KEY, ali.url, 'qwen-plus,gte-rerank,wanx-v1');
  await channel('ali-bad', 17, 'sk-revoked', ali.url, 'gte-rerank-v2');
  await channel('volc', 45, VOLC_KEY, volc.url, 'bot-20250101-abc,doubao-pro-32k');
  await channel('ollama', 4, 'sk-ollama-proxy', ollama.url, 'llama3.1,nomic-embed-text');
  const token = await root.post('/api/token/', { name: 'cn2', unlimited_quota: true });
  apiKey = token.body.data.key;
  client = new OpenAI({ apiKey, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  expect(
    await eventually(
      async () => (await client.models.list()).data.length,
      (n) => n >= 14,
      3000,
    ),
  ).toBe(14);
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await Promise.all([baidu?.close(), zhipu?.close(), ali?.close(), volc?.close(), ollama?.close()]);
});

const weatherTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

async function streamText(model: string, content: string) {
  let text = '';
  let usage: OpenAI.CompletionUsage | undefined;
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content }],
    stream: true,
    stream_options: { include_usage: true },
  });
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  return { text, usage };
}

describe('Baidu ERNIE v1 (15)', () => {
  it('chats with a fetched access token on the model path, and bills the upstream usage', async () => {
    baidu.behaviour = { reply: 'Beijing is the capital.', usage: { prompt_tokens: 31, completion_tokens: 9 } };
    const issued = baidu.tokensIssued;
    const log = await billed('ERNIE-4.0-8K', async () => {
      const answer = await client.chat.completions.create({
        model: 'ERNIE-4.0-8K',
        messages: [
          { role: 'system', content: 'Answer briefly.' },
          { role: 'user', content: 'Capital of China?' },
        ],
        max_tokens: 64,
        temperature: 0,
      });
      expect(answer.choices[0]?.message.content).toBe('Beijing is the capital.');
      expect(answer.usage).toMatchObject({ prompt_tokens: 31, completion_tokens: 9 });
    });
    const sent = baidu.requests.at(-1)!;
    expect(sent.path).toBe('/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions_pro');
    expect(sent.body).toEqual({
      messages: [{ role: 'user', content: 'Capital of China?' }],
      system: 'Answer briefly.',
      stream: false,
      temperature: 0.01,
      max_output_tokens: 64,
    });
    expect(baidu.tokensIssued).toBeLessThanOrEqual(issued + 1);
    expect(log.quota).toBe(quota('ERNIE-4.0-8K', 31, 9));
  });

  it('streams, reusing the cached token, and bills the last event usage', async () => {
    baidu.behaviour = { reply: 'Streaming from ERNIE works.', usage: { prompt_tokens: 12, completion_tokens: 7 } };
    const issued = baidu.tokensIssued;
    const log = await billed('ERNIE-3.5-8K', async () => {
      const { text, usage } = await streamText('ERNIE-3.5-8K', 'stream please');
      expect(text).toBe('Streaming from ERNIE works.');
      expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7 });
    });
    expect(baidu.requests.at(-1)?.path).toBe('/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions');
    expect(baidu.tokensIssued).toBe(issued);
    expect(log.quota).toBe(quota('ERNIE-3.5-8K', 12, 7));
  });

  it('calls functions for OpenAI tools and sends tool results back as function turns', async () => {
    baidu.behaviour = {};
    const first = await client.chat.completions.create({
      model: 'ERNIE-3.5-8K',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weatherTool],
    });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && call.function).toMatchObject({
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
    });
    expect(baidu.requests.at(-1)?.body.functions[0]).toMatchObject({ name: 'get_weather' });
    baidu.behaviour = { reply: 'It is sunny.' };
    const second = await client.chat.completions.create({
      model: 'ERNIE-3.5-8K',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        first.choices[0]!.message,
        { role: 'tool', tool_call_id: call!.id, content: '{"sky":"sunny"}' },
      ],
      tools: [weatherTool],
    });
    expect(second.choices[0]?.message.content).toBe('It is sunny.');
    expect(baidu.requests.at(-1)?.body.messages.at(-1)).toEqual({
      role: 'function',
      name: 'get_weather',
      content: '{"sky":"sunny"}',
    });
  });

  it('fetches a new token once when Baidu says the cached one expired', async () => {
    baidu.behaviour = { reply: 'Fresh token.' };
    const issued = baidu.tokensIssued;
    baidu.expireTokens();
    const answer = await client.chat.completions.create({
      model: 'ERNIE-3.5-8K',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.choices[0]?.message.content).toBe('Fresh token.');
    expect(baidu.tokensIssued).toBe(issued + 1);
  });

  it('embeds with Embedding-V1 and bills its usage', async () => {
    const log = await billed('Embedding-V1', async () => {
      const answer = await client.embeddings.create({ model: 'Embedding-V1', input: ['hello world', 'bye'] });
      expect(answer.data.map((d) => d.embedding.length)).toEqual([3, 3]);
      expect(answer.model).toBe('Embedding-V1');
    });
    expect(baidu.requests.at(-1)?.path).toBe('/rpc/2.0/ai_custom/v1/wenxinworkshop/embeddings/embedding-v1');
    expect(baidu.requests.at(-1)?.body).toEqual({ input: ['hello world', 'bye'] });
    expect(log.quota).toBe(quota('Embedding-V1', 3 + 1, 0));
  });

  it('answers a refused key with the token endpoint reason, not a server error', async () => {
    const failure = await client.chat.completions
      .create({ model: 'ERNIE-Speed-8K', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error as InstanceType<typeof OpenAI.APIError>);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBeLessThan(500);
    expect((failure as Error).message).toContain('Client authentication failed');
  });

  it('refuses a key without its secret when the channel is saved', async () => {
    const created = await root.post('/api/channel/', {
      name: 'baidu-malformed',
      type: 15,
      key: 'only-the-api-key',
      models: 'ERNIE-Tiny-8K',
    });
    expect(created.body).toMatchObject({ success: false, code: 'CHANNEL_KEY_INVALID' });
    expect(created.body.message).toContain('APIKey|SecretKey');
  });

  it('passes the channel test', async () => {
    const answer = await root.get(`/api/channel/test/${channels.baidu}`);
    expect(answer.body).toMatchObject({ success: true });
    const bad = await root.get(`/api/channel/test/${channels['baidu-bad']}`);
    expect(bad.body.success).toBe(false);
    expect(bad.body.message).toContain('Client authentication failed');
  });
});

describe('Zhipu v3 (16)', () => {
  it('invokes with a signed token and bills the upstream usage', async () => {
    zhipu.behaviour = { reply: 'Hello "quoted"\nworld.', usage: { prompt_tokens: 20, completion_tokens: 6 } };
    const log = await billed('chatglm_turbo', async () => {
      const answer = await client.chat.completions.create({
        model: 'chatglm_turbo',
        messages: [
          { role: 'system', content: 'Be kind.' },
          { role: 'user', content: 'Greet me' },
        ],
        temperature: 0.5,
      });
      expect(answer.choices[0]?.message.content).toBe('Hello "quoted"\nworld.');
    });
    const sent = zhipu.requests.at(-1)!;
    expect(sent.path).toBe('/api/paas/v3/model-api/chatglm_turbo/invoke');
    expect(sent.claims?.api_key).toBe(ZHIPU_ID);
    expect(sent.body).toEqual({
      prompt: [{ role: 'user', content: 'Be kind.\n\nGreet me' }],
      incremental: true,
      temperature: 0.5,
    });
    expect(log.quota).toBe(quota('chatglm_turbo', 20, 6));
  });

  it('streams sse-invoke text exactly, with the finish meta usage billed', async () => {
    zhipu.behaviour = {
      reply: ' Leading space,\nnew line and 中文.',
      usage: { prompt_tokens: 8, completion_tokens: 11 },
    };
    const log = await billed('chatglm_turbo', async () => {
      const { text, usage } = await streamText('chatglm_turbo', 'stream');
      expect(text).toBe(' Leading space,\nnew line and 中文.');
      expect(usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 11 });
    });
    expect(zhipu.requests.at(-1)?.path).toBe('/api/paas/v3/model-api/chatglm_turbo/sse-invoke');
    expect(log.quota).toBe(quota('chatglm_turbo', 8, 11));
  });

  it('answers a token signed with the wrong secret with Zhipu reason, and the channel test agrees', async () => {
    const failure = await client.chat.completions
      .create({ model: 'chatglm_lite', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error as InstanceType<typeof OpenAI.APIError>);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
    expect((failure as Error).message).toContain('Token验证失败');
    expect((await root.get(`/api/channel/test/${channels.zhipu}`)).body).toMatchObject({ success: true });
    expect((await root.get(`/api/channel/test/${channels['zhipu-bad']}`)).body.success).toBe(false);
  });
});

describe('Ollama native (4)', () => {
  it('chats through /api/chat with stream false and bills eval counts', async () => {
    ollama.behaviour = { reply: 'Llama says hi.', usage: { prompt_eval_count: 26, eval_count: 5 } };
    const log = await billed('llama3.1', async () => {
      const answer = await client.chat.completions.create({
        model: 'llama3.1',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 50,
        temperature: 0.2,
      });
      expect(answer.choices[0]?.message.content).toBe('Llama says hi.');
    });
    const sent = ollama.requests.at(-1)!;
    expect(sent.path).toBe('/api/chat');
    expect(sent.body).toEqual({
      model: 'llama3.1',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
      options: { temperature: 0.2, num_predict: 50 },
    });
    expect(sent.headers.authorization).toBe('Bearer sk-ollama-proxy');
    expect(log.quota).toBe(quota('llama3.1', 26, 5));
  });

  it('streams NDJSON as chunks and bills the done line', async () => {
    ollama.behaviour = { reply: 'Newline-delimited streaming.', usage: { prompt_eval_count: 14, eval_count: 9 } };
    const log = await billed('llama3.1', async () => {
      const { text, usage } = await streamText('llama3.1', 'stream');
      expect(text).toBe('Newline-delimited streaming.');
      expect(usage).toMatchObject({ prompt_tokens: 14, completion_tokens: 9 });
    });
    expect(ollama.requests.at(-1)?.body.stream).toBe(true);
    expect(log.quota).toBe(quota('llama3.1', 14, 9));
  });

  it('returns tool calls with ids and string arguments, plain and streamed', async () => {
    ollama.behaviour = {};
    const answer = await client.chat.completions.create({
      model: 'llama3.1',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weatherTool],
    });
    const call = answer.choices[0]?.message.tool_calls?.[0];
    expect(answer.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call).toMatchObject({
      id: 'call_0',
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
    const stream = await client.chat.completions.create({
      model: 'llama3.1',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weatherTool],
      stream: true,
    });
    const calls: unknown[] = [];
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      calls.push(...(chunk.choices[0]?.delta?.tool_calls ?? []));
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(calls).toMatchObject([
      { index: 0, id: 'call_0', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);
    expect(finish).toBe('tool_calls');
    const followUp = await client.chat.completions.create({
      model: 'llama3.1',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        answer.choices[0]!.message,
        { role: 'tool', tool_call_id: 'call_0', content: 'sunny' },
      ],
      tools: [weatherTool],
    });
    expect(followUp.choices[0]?.message.content).toBe('Hello from Llama.');
    expect(ollama.requests.at(-1)?.body.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }],
      },
      { role: 'tool', content: 'sunny', tool_name: 'get_weather' },
    ]);
  });

  it('embeds through /api/embed and bills prompt_eval_count', async () => {
    const log = await billed('nomic-embed-text', async () => {
      const answer = await client.embeddings.create({ model: 'nomic-embed-text', input: ['abcdefgh', 'xyz'] });
      expect(answer.data).toHaveLength(2);
      expect(answer.data[1]?.index).toBe(1);
      expect(answer.usage.prompt_tokens).toBe(3);
    });
    expect(ollama.requests.at(-1)).toMatchObject({
      path: '/api/embed',
      body: { model: 'nomic-embed-text', input: ['abcdefgh', 'xyz'] },
    });
    expect(log.quota).toBe(quota('nomic-embed-text', 3, 0));
  });

  it('serves legacy completions through its OpenAI-compatible /v1', async () => {
    const log = await billed('llama3.1', async () => {
      const answer = await client.completions.create({ model: 'llama3.1', prompt: 'Tell a story' });
      expect(answer.choices[0]?.text).toBe('Once upon a time.');
    });
    expect(ollama.requests.at(-1)).toMatchObject({ path: '/v1/completions', body: { model: 'llama3.1' } });
    // 'Tell a story' is 3 tokens and the answer 5 by the mock's count (4 characters a token).
    expect(log.quota).toBe(quota('llama3.1', 3, 5));
  });

  it('passes the channel test and lists its pulled models', async () => {
    expect((await root.get(`/api/channel/test/${channels.ollama}`)).body).toMatchObject({ success: true });
    const models = await root.get(`/api/channel/fetch_models/${channels.ollama}`);
    expect(models.body.data).toEqual(expect.arrayContaining(['llama3.1', 'nomic-embed-text']));
  });
});

describe('Ollama model management for administrators', () => {
  it('pulls (whole and with progress), deletes and reads the version', async () => {
    const id = channels.ollama;
    const pulled = await root.post('/api/channel/ollama/pull', { channel_id: id, model_name: 'qwen2.5:7b' });
    expect(pulled.body).toEqual({ success: true, message: 'Model qwen2.5:7b pulled successfully' });
    expect(ollama.models.has('qwen2.5:7b')).toBe(true);
    expect(ollama.requests.at(-1)).toMatchObject({
      path: '/api/pull',
      body: { model: 'qwen2.5:7b', stream: false },
      headers: { authorization: 'Bearer sk-ollama-proxy' },
    });

    const stream = await fetch(`${gateway.url}/api/channel/ollama/pull/stream`, {
      method: 'POST',
      headers: {
        ...root.headers,
        cookie: root.cookie,
        'new-api-user': String(root.userId),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ channel_id: id, model_name: 'gemma2:2b' }),
    });
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const events = (await stream.text())
      .split('\n\n')
      .filter(Boolean)
      .map((event) => event.replace(/^data: /, ''));
    expect(events.at(-1)).toBe('[DONE]');
    expect(JSON.parse(events.at(-2)!)).toEqual({ message: 'Model gemma2:2b pulled successfully' });
    expect(events.slice(0, -2).map((e) => JSON.parse(e).status)).toEqual([
      'pulling manifest',
      'pulling gemma2:2b',
      'verifying sha256 digest',
      'writing manifest',
      'success',
    ]);

    const deleted = await root.delete('/api/channel/ollama/delete', { channel_id: id, model_name: 'gemma2:2b' });
    expect(deleted.body).toEqual({ success: true, message: 'Model gemma2:2b deleted successfully' });
    expect(ollama.models.has('gemma2:2b')).toBe(false);
    const missing = await root.delete('/api/channel/ollama/delete', { channel_id: id, model_name: 'gemma2:2b' });
    expect(missing.body).toMatchObject({ success: false, code: 'UPSTREAM_REFUSED' });
    expect(missing.body.message).toContain("model 'gemma2:2b' not found");

    expect((await root.get(`/api/channel/ollama/version/${id}`)).body).toEqual({
      success: true,
      message: '',
      data: { version: '0.6.2' },
    });
  });

  it('refuses other channel types and a missing model name', async () => {
    const other = await root.post('/api/channel/ollama/pull', { channel_id: channels.zhipu, model_name: 'x' });
    expect(other.body).toMatchObject({ success: false, code: 'CHANNEL_OLLAMA_ONLY' });
    expect(other.body.message).toContain('16 Zhipu');
    const unnamed = await root.post('/api/channel/ollama/pull', { channel_id: channels.ollama });
    expect(unnamed.body).toMatchObject({ success: false, code: 'CHANNEL_OLLAMA_MODEL_REQUIRED' });
  });
});

describe('Ali DashScope native (17)', () => {
  it('reranks through text-rerank and bills its total tokens', async () => {
    const log = await billed('gte-rerank', async () => {
      const response = await fetch(`${gateway.url}/v1/rerank`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'gte-rerank',
          query: 'capital of france',
          documents: ['Berlin is in Germany', 'Paris is the capital of France'],
          top_n: 1,
        }),
      });
      expect(response.status).toBe(200);
      const body: any = await response.json();
      expect(body.results).toEqual([
        { index: 1, relevance_score: 1, document: { text: 'Paris is the capital of France' } },
      ]);
      expect(body.usage.total_tokens).toBe(18);
    });
    expect(ali.requests.at(-1)?.body).toEqual({
      model: 'gte-rerank',
      input: { query: 'capital of france', documents: ['Berlin is in Germany', 'Paris is the capital of France'] },
      parameters: { return_documents: true, top_n: 1 },
    });
    expect(log.quota).toBe(quota('gte-rerank', 18, 0));
  });

  it('generates wanx images as a polled task and answers OpenAI image URLs, billed per image', async () => {
    const log = await billed('wanx-v1', async () => {
      const images = await client.images.generate({ model: 'wanx-v1', prompt: 'a red fox', n: 2, size: '1024x1024' });
      expect(images.data?.map((image) => image.url)).toHaveLength(2);
      expect(images.data?.[0]?.url).toMatch(/^https:\/\/dashscope-result\.example\/.+-0\.png$/);
      expect(images.data?.[0]?.revised_prompt).toBe('a red fox, detailed');
    });
    const [create, ...polls] = ali.requests.slice(-3);
    expect(create).toMatchObject({
      method: 'POST',
      path: '/api/v1/services/aigc/text2image/image-synthesis',
      body: { model: 'wanx-v1', input: { prompt: 'a red fox' }, parameters: { n: 2, size: '1024*1024' } },
    });
    expect(create?.headers['x-dashscope-async']).toBe('enable');
    expect(polls.map((p) => p.method)).toEqual(['GET', 'GET']);
    expect(log.quota).toBe(Math.round(0.02 * 2 * 500_000));
  });

  it('keeps chat on the compatible mode, and answers a revoked key with DashScope reason', async () => {
    const answer = await client.chat.completions.create({
      model: 'qwen-plus',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.choices[0]?.message.content).toBe('Hello from Qwen.');
    expect(ali.requests.at(-1)?.path).toBe('/compatible-mode/v1/chat/completions');
    const refused = await fetch(`${gateway.url}/v1/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gte-rerank-v2', query: 'q', documents: ['d'] }),
    });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as any).error.message).toContain('Invalid API-key provided.');
    expect((await root.get(`/api/channel/test/${channels.ali}`)).body).toMatchObject({ success: true });
  });
});

describe('Claude and Gemini clients reach these protocols through the hub', () => {
  it('a Claude client streams from Zhipu v3 and is billed its usage', async () => {
    zhipu.behaviour = { reply: 'Claude via GLM.', usage: { prompt_tokens: 10, completion_tokens: 4 } };
    const claude = new Anthropic({ apiKey: apiKey, baseURL: gateway.url, maxRetries: 0 });
    const log = await billed('chatglm_turbo', async () => {
      const stream = claude.messages.stream({
        model: 'chatglm_turbo',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
      });
      const message = await stream.finalMessage();
      expect(message.content).toMatchObject([{ type: 'text', text: 'Claude via GLM.' }]);
      expect(message.usage).toMatchObject({ input_tokens: 10, output_tokens: 4 });
    });
    expect(log.quota).toBe(quota('chatglm_turbo', 10, 4));
  });

  it('a Gemini client gets ERNIE text and Ollama embeddings', async () => {
    baidu.behaviour = { reply: 'Gemini via ERNIE.', usage: { prompt_tokens: 6, completion_tokens: 3 } };
    const ai = new GoogleGenAI({ apiKey: apiKey, httpOptions: { baseUrl: gateway.url } });
    const answer = await ai.models.generateContent({ model: 'ERNIE-3.5-8K', contents: 'hi' });
    expect(answer.text).toBe('Gemini via ERNIE.');
    expect(answer.usageMetadata).toMatchObject({ promptTokenCount: 6, candidatesTokenCount: 3 });
    const embedded = await ai.models.embedContent({ model: 'nomic-embed-text', contents: 'abcd' });
    expect(embedded.embeddings?.[0]?.values).toEqual([0.04, 0.25, -0.5]);
  });
});

describe('VolcEngine bot models (45)', () => {
  it('sends bot-… models to /api/v3/bots and others to /api/v3', async () => {
    const bot = await client.chat.completions.create({
      model: 'bot-20250101-abc',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(bot.choices[0]?.message.content).toBe('Hello from the bot.');
    expect(volc.requests.at(-1)?.path).toBe('/api/v3/bots/chat/completions');
    const plain = await client.chat.completions.create({
      model: 'doubao-pro-32k',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(plain.choices[0]?.message.content).toBe('Hello from Doubao.');
    expect(volc.requests.at(-1)?.path).toBe('/api/v3/chat/completions');
    expect((await root.get(`/api/channel/test/${channels.volc}`)).body).toMatchObject({ success: true });
  });
});
