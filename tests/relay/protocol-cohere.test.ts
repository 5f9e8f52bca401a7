import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { CohereClientV2, CohereError } from 'cohere-ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockCohere, startMockCohere } from '../support/mock-cohere.ts';
import { billed } from '../support/usage.ts';
import { eventually } from '../support/wait.ts';

// Cohere (type 34) end to end: the official clients of each format against a gateway whose channel
// speaks Cohere's v2 API to a faithful mock; the bill follows Cohere's billed units to the unit.
const CHAT = 'command-a-03-2025';
const REPLY = 'Sunny in Paris, 21 degrees.';
const BILLED = { input_tokens: 37, output_tokens: 11 };
// (prompt + completion × CompletionRatio) × ModelRatio, from the billed units (not the raw token counts).
const CHAT_QUOTA = Math.round((37 + 11 * 4) * 1.5);

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let upstream: MockCohere;
let key: string;
let channelId: number;
let openai: OpenAI;

/** Runs one billed call and answers its value and the quota it was charged (so no log lands in a later test). */
async function charged<T>(call: () => Promise<T>): Promise<{ value: T; quota: number }> {
  let value: T | undefined;
  const log = await billed(gateway, async () => {
    value = await call();
  });
  return { value: value as T, quota: log.quota };
}

const weatherSchema = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };

beforeAll(async () => {
  upstream = await startMockCohere();
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  const created = await root.post('/api/channel/', {
    name: 'cohere',
    type: 34,
    key: upstream.key,
    base_url: upstream.url,
    models: `${CHAT},embed-v4.0,rerank-v3.5`,
    group: 'default',
  });
  expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  const badKey = await root.post('/api/channel/', {
    name: 'cohere-bad-key',
    type: 34,
    key: 'co-revoked',
    base_url: upstream.url,
    models: 'command-r',
    group: 'default',
  });
  expect(badKey.body.success, JSON.stringify(badKey.body)).toBe(true);
  const list = await root.get('/api/channel/?p=1&page_size=10');
  channelId = list.body.data.items.find((c: { name: string }) => c.name === 'cohere').id;
  await gateway.options.setMany({
    ModelRatio: JSON.stringify({ [CHAT]: 1.5, 'command-r': 1, 'embed-v4.0': 2 }),
    CompletionRatio: JSON.stringify({ [CHAT]: 4 }),
    ModelPrice: JSON.stringify({ 'rerank-v3.5': 0.002 }),
  });
  key = (await root.post('/api/token/', { name: 'cohere', unlimited_quota: true })).body.data.key;
  openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  await eventually(
    async () => (await openai.models.list()).data.length,
    (n) => n === 4,
    2000,
  );
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await upstream?.close();
});

describe('the mock is faithful to Cohere (the official cohere-ai client reads it)', () => {
  const cohere = () => new CohereClientV2({ token: upstream.key, environment: upstream.url });

  it('answers chat and chatStream', async () => {
    upstream.behaviour = { reply: REPLY };
    const answer = await cohere().chat({ model: CHAT, messages: [{ role: 'user', content: 'Weather?' }] });
    expect(answer.message.content?.[0]).toMatchObject({ type: 'text', text: REPLY });
    expect(answer.finishReason).toBe('COMPLETE');
    let text = '';
    let usage: unknown;
    for await (const event of await cohere().chatStream({
      model: CHAT,
      messages: [{ role: 'user', content: 'Weather?' }],
    })) {
      if (event.type === 'content-delta') text += event.delta?.message?.content?.text ?? '';
      if (event.type === 'message-end') usage = event.delta?.usage;
    }
    expect(text).toBe(REPLY);
    expect(usage).toMatchObject({ billedUnits: { inputTokens: expect.any(Number), outputTokens: 7 } });
  });

  it('answers a tool call, embed and rerank, and refuses a wrong key in its error shape', async () => {
    const tool = await cohere().chat({
      model: CHAT,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: weatherSchema } }],
    });
    expect(tool.message.toolCalls?.[0]?.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    const embed = await cohere().embed({
      model: 'embed-v4.0',
      texts: ['a', 'b'],
      inputType: 'search_document',
      embeddingTypes: ['float'],
    });
    expect(embed.embeddings.float).toHaveLength(2);
    const rerank = await cohere().rerank({
      model: 'rerank-v3.5',
      query: 'paris weather',
      documents: ['rome', 'paris weather'],
    });
    expect(rerank.results[0]?.index).toBe(1);
    expect(rerank.meta?.billedUnits?.searchUnits).toBe(1);
    const refused = await new CohereClientV2({ token: 'wrong', environment: upstream.url })
      .chat({ model: CHAT, messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CohereError);
    expect((refused as CohereError).statusCode).toBe(401);
    expect((refused as CohereError).body).toMatchObject({ message: 'invalid api token' });
  });
});

describe('a Cohere channel', () => {
  it('answers an OpenAI chat with the upstream text, billed from the billed units', async () => {
    upstream.behaviour = { reply: REPLY, billed: BILLED };
    let text = '';
    const log = await billed(gateway, async () => {
      const answer = await openai.chat.completions.create({
        model: CHAT,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather?' },
        ],
        max_tokens: 64,
      });
      text = answer.choices[0]?.message.content ?? '';
      expect(answer.usage).toMatchObject({ prompt_tokens: 37, completion_tokens: 11 });
    });
    expect(text).toBe(REPLY);
    expect(log.quota).toBe(CHAT_QUOTA);
    expect([log.prompt_tokens, log.completion_tokens]).toEqual([37, 11]);
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v2/chat');
    expect(sent.headers.authorization).toBe(`Bearer ${upstream.key}`);
    expect(sent.body).toMatchObject({
      model: CHAT,
      stream: false,
      max_tokens: 64,
      messages: [{ role: 'system' }, { role: 'user' }],
    });
  });

  it('streams an OpenAI chat event by event, billed from message-end', async () => {
    upstream.behaviour = { reply: REPLY, billed: BILLED };
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    const log = await billed(gateway, async () => {
      const stream = await openai.chat.completions.create({
        model: CHAT,
        messages: [{ role: 'user', content: 'Weather?' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? '';
        usage = chunk.usage ?? usage;
      }
    });
    expect(text).toBe(REPLY);
    expect(usage).toMatchObject({ prompt_tokens: 37, completion_tokens: 11 });
    expect(log.quota).toBe(CHAT_QUOTA);
    expect(upstream.requests.at(-1)?.body.stream).toBe(true);
  });

  it('answers an OpenAI Responses call through the hub', async () => {
    upstream.behaviour = { reply: REPLY, billed: BILLED };
    const { value: response, quota } = await charged(() => openai.responses.create({ model: CHAT, input: 'Weather?' }));
    expect(response.output_text).toBe(REPLY);
    expect(response.usage).toMatchObject({ input_tokens: 37, output_tokens: 11 });
    expect(quota).toBe(CHAT_QUOTA);
  });

  it('carries tools both ways: the call out, the result back in', async () => {
    upstream.behaviour = { reply: REPLY, billed: BILLED };
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: weatherSchema } }];
    const { value: first, quota } = await charged(() =>
      openai.chat.completions.create({
        model: CHAT,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools,
      }),
    );
    expect(quota).toBe(CHAT_QUOTA);
    const call = first.choices[0]?.message.tool_calls?.[0];
    if (call?.type !== 'function') throw new Error(`no function call in ${JSON.stringify(first)}`);
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect([call.function.name, JSON.parse(call.function.arguments)]).toEqual(['get_weather', { city: 'Paris' }]);
    const { value: second } = await charged(() =>
      openai.chat.completions.create({
        model: CHAT,
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: call.id, content: 'sunny, 21' },
        ],
        tools,
      }),
    );
    expect(second.choices[0]?.message.content).toBe(REPLY);
    expect(upstream.requests.at(-1)?.body.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: call.id,
      content: 'sunny, 21',
    });

    // Streamed, the call arrives in pieces and is whole at the end.
    const { value: streamed, quota: streamedQuota } = await charged(async () => {
      const stream = await openai.chat.completions.create({
        model: CHAT,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools,
        stream: true,
      });
      let name = '';
      let args = '';
      for await (const chunk of stream) {
        for (const piece of chunk.choices[0]?.delta?.tool_calls ?? []) {
          name += piece.function?.name ?? '';
          args += piece.function?.arguments ?? '';
        }
      }
      return { name, args };
    });
    expect(streamedQuota).toBe(CHAT_QUOTA);
    const { name, args } = streamed;
    expect([name, JSON.parse(args)]).toEqual(['get_weather', { city: 'Paris' }]);
  });

  it('serves Claude and Gemini clients through the hub, billed the same', async () => {
    upstream.behaviour = { reply: REPLY, billed: BILLED };
    const claude = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    let text = '';
    const log = await billed(gateway, async () => {
      const stream = claude.messages.stream({
        model: CHAT,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Weather?' }],
      });
      for await (const event of stream) {
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      }
    });
    expect(text).toBe(REPLY);
    expect(log.quota).toBe(CHAT_QUOTA);
    const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });
    const gemini = await billed(gateway, async () => {
      const answer = await ai.models.generateContent({ model: CHAT, contents: 'Weather?' });
      expect(answer.text).toBe(REPLY);
    });
    expect(gemini.quota).toBe(CHAT_QUOTA);
  });

  it('carries Claude and Gemini tool calls through Cohere', async () => {
    upstream.behaviour = { reply: REPLY, billed: BILLED };
    const claude = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    const { value: message, quota } = await charged(() =>
      claude.messages.create({
        model: CHAT,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [{ name: 'get_weather', description: 'Current weather', input_schema: weatherSchema }],
      }),
    );
    expect(quota).toBe(CHAT_QUOTA);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content.find((block) => block.type === 'tool_use')).toMatchObject({
      name: 'get_weather',
      input: { city: 'Paris' },
    });
    const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });
    const { value: answer } = await charged(() =>
      ai.models.generateContent({
        model: CHAT,
        contents: 'Weather in Paris?',
        config: { tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: weatherSchema }] }] },
      }),
    );
    expect(answer.functionCalls?.[0]).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
  });

  it('embeds through /v2/embed (the openai client’s base64 decoded), billed from billed input tokens', async () => {
    let vectors: number[][] = [];
    const log = await billed(gateway, async () => {
      const answer = await openai.embeddings.create({ model: 'embed-v4.0', input: ['paris', 'rome weather'] });
      vectors = answer.data.map((d) => d.embedding);
    });
    expect(vectors).toHaveLength(2);
    expect(vectors[1]?.[0]).toBeCloseTo(0.2, 5);
    expect(upstream.requests.at(-1)?.body).toEqual({
      model: 'embed-v4.0',
      texts: ['paris', 'rome weather'],
      input_type: 'search_document',
      embedding_types: ['float'],
    });
    // billed input tokens: ceil(5/4) + ceil(12/4) = 2 + 3; ratio 2
    expect(log.prompt_tokens).toBe(5);
    expect(log.quota).toBe(5 * 2);
  });

  it('reranks through /v2/rerank, charged the per-call price', async () => {
    const log = await billed(gateway, async () => {
      const response = await fetch(`${gateway.url}/v1/rerank`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'rerank-v3.5',
          query: 'paris weather',
          documents: ['rome', { text: 'paris weather today' }],
          top_n: 1,
          return_documents: true,
        }),
      });
      expect(response.status).toBe(200);
      const answer = (await response.json()) as {
        results: unknown[];
        meta: { billed_units: { search_units: number } };
      };
      expect(answer.results).toEqual([
        { index: 1, relevance_score: expect.any(Number), document: { text: 'paris weather today' } },
      ]);
      expect(answer.meta.billed_units.search_units).toBe(1);
    });
    expect(upstream.requests.at(-1)?.body).toEqual({
      model: 'rerank-v3.5',
      query: 'paris weather',
      documents: ['rome', 'paris weather today'],
      top_n: 1,
    });
    // 0.002 USD a call × QuotaPerUnit 500000
    expect(log.quota).toBe(1000);
  });

  it('passes the channel test and lists the upstream models', async () => {
    upstream.behaviour = { reply: REPLY };
    const tested = await root.get(`/api/channel/test/${channelId}`);
    expect(tested.body).toMatchObject({ success: true });
    expect(upstream.requests.at(-1)?.path).toBe('/v2/chat');
    const streamed = await root.get(`/api/channel/test/${channelId}?stream=true`);
    expect(streamed.body).toMatchObject({ success: true });
    expect(upstream.requests.at(-1)?.body.stream).toBe(true);
    for (const [model, path] of [
      ['embed-v4.0', '/v2/embed'],
      ['rerank-v3.5', '/v2/rerank'],
    ]) {
      expect((await root.get(`/api/channel/test/${channelId}?model=${model}`)).body, model).toMatchObject({
        success: true,
      });
      expect(upstream.requests.at(-1)?.path).toBe(path);
    }
    const models = await root.get(`/api/channel/fetch_models/${channelId}`);
    expect(models.body).toMatchObject({
      success: true,
      data: ['command-a-03-2025', 'command-r', 'embed-v4.0', 'rerank-v3.5'],
    });
  });

  it('gives the client Cohere’s own refusal of a bad key, not a 500', async () => {
    const refused = await openai.chat.completions
      .create({ model: 'command-r', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(401);
    expect((refused as InstanceType<typeof OpenAI.APIError>).message).toContain('invalid api token');
  });
});
