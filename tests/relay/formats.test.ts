import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import { type MockGemini, startMockGemini } from '../support/mock-gemini.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { billed } from '../support/usage.ts';
import { eventually } from '../support/wait.ts';

// The official client of each format, pointed at the gateway, against an upstream of each protocol:
// nine pairs. Every upstream reports a fixed usage in its own semantics; the expected quota is worked
// out here from the formula of reference §5.4 and the upstream's own numbers, whatever the client.
const REPLY = 'The weather in Paris is sunny today.';

interface Upstream {
  name: 'openai' | 'anthropic' | 'gemini';
  model: string;
  /** Quota one call costs: (uncached prompt + cached × CacheRatio + completion × CompletionRatio) × ModelRatio. */
  quota: number;
  /** Scripts the mock's reply and usage. */
  script(): void;
}

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let openaiUp: MockOpenAI;
let anthropicUp: MockAnthropic;
let geminiUp: MockGemini;
let key: string;

const upstreams: Upstream[] = [
  {
    name: 'openai',
    model: 'gpt-4o',
    // prompt 120 (40 cached at 0.5), completion 30 at 4; ratio 1.25
    quota: Math.round((80 + 40 * 0.5 + 30 * 4) * 1.25),
    script: () => {
      openaiUp.behaviour = { reply: REPLY, usage: { prompt_tokens: 120, cached_tokens: 40, completion_tokens: 30 } };
    },
  },
  {
    name: 'anthropic',
    model: 'claude-sonnet-4-20250514',
    // Claude: input 100 excludes the 40 cache reads (at 0.1) and 20 cache writes (at 1.25); output 30 at 5; ratio 1.5
    quota: Math.round((100 + 40 * 0.1 + 20 * 1.25 + 30 * 5) * 1.5),
    script: () => {
      anthropicUp.behaviour = {
        reply: REPLY,
        usage: {
          input_tokens: 100,
          output_tokens: 30,
          cache_read_input_tokens: 40,
          cache_creation_5m_input_tokens: 20,
        },
      };
    },
  },
  {
    name: 'gemini',
    model: 'gemini-2.5-flash',
    // prompt 150 including 50 cached (at 0.25); candidates 25 + thoughts 5 at 8; ratio 0.15
    quota: Math.round((100 + 50 * 0.25 + 30 * 8) * 0.15),
    script: () => {
      geminiUp.behaviour = {
        reply: REPLY,
        usage: { promptTokenCount: 150, cachedContentTokenCount: 50, candidatesTokenCount: 25, thoughtsTokenCount: 5 },
      };
    },
  },
];

beforeAll(async () => {
  [openaiUp, anthropicUp, geminiUp] = await Promise.all([startMockOpenAI(), startMockAnthropic(), startMockGemini()]);
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  const channels: Array<[number, string, string]> = [
    [1, openaiUp.url, 'gpt-4o'],
    [14, anthropicUp.url, 'claude-sonnet-4-20250514'],
    [24, geminiUp.url, 'gemini-2.5-flash'],
  ];
  for (const [type, baseUrl, model] of channels) {
    const created = await root.post('/api/channel/', {
      name: `up-${type}`,
      type,
      key: 'sk-upstream',
      base_url: baseUrl,
      models: model,
      group: 'default',
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  }
  await gateway.options.setMany({
    ModelRatio: JSON.stringify({ 'gpt-4o': 1.25, 'claude-sonnet-4-20250514': 1.5, 'gemini-2.5-flash': 0.15 }),
    CompletionRatio: JSON.stringify({ 'gpt-4o': 4, 'claude-sonnet-4-20250514': 5, 'gemini-2.5-flash': 8 }),
    CacheRatio: JSON.stringify({ 'gpt-4o': 0.5, 'claude-sonnet-4-20250514': 0.1, 'gemini-2.5-flash': 0.25 }),
    CreateCacheRatio: JSON.stringify({ 'claude-sonnet-4-20250514': 1.25 }),
  });
  key = (await root.post('/api/token/', { name: 'formats', unlimited_quota: true })).body.data.key;
  const openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  await eventually(
    async () => (await openai.models.list()).data.length,
    (n) => n === 3,
    2000,
  );
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await Promise.all([openaiUp?.close(), anthropicUp?.close(), geminiUp?.close()]);
});

const weatherSchema = {
  type: 'object' as const,
  properties: { city: { type: 'string' } },
  required: ['city'],
};

/** What each client does for a plain call, a stream and a tool call, answering text or the call. */
interface Client {
  name: string;
  plain(model: string): Promise<string>;
  stream(model: string): Promise<string>;
  tool(model: string): Promise<{ name: string; args: Record<string, unknown> }>;
}

const clients: Client[] = [
  {
    name: 'openai',
    async plain(model) {
      const openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
      const answer = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather?' }] });
      return answer.choices[0]?.message.content ?? '';
    },
    async stream(model) {
      const openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
      const stream = await openai.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Weather?' }],
        stream: true,
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      return text;
    },
    async tool(model) {
      const openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
      const answer = await openai.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: weatherSchema } }],
      });
      const call = answer.choices[0]?.message.tool_calls?.[0];
      if (call?.type !== 'function') throw new Error(`no function call in ${JSON.stringify(answer)}`);
      return { name: call.function.name, args: JSON.parse(call.function.arguments) };
    },
  },
  {
    name: 'anthropic',
    async plain(model) {
      const claude = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
      const message = await claude.messages.create({
        model,
        max_tokens: 256,
        messages: [{ role: 'user', content: 'Weather?' }],
      });
      return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    },
    async stream(model) {
      const claude = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
      const stream = claude.messages.stream({
        model,
        max_tokens: 256,
        messages: [{ role: 'user', content: 'Weather?' }],
      });
      let text = '';
      for await (const event of stream) {
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      }
      const final = await stream.finalMessage();
      expect(final.stop_reason).toBe('end_turn');
      return text;
    },
    async tool(model) {
      const claude = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
      const message = await claude.messages.create({
        model,
        max_tokens: 256,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [{ name: 'get_weather', description: 'Current weather', input_schema: weatherSchema }],
      });
      const use = message.content.find((block) => block.type === 'tool_use');
      if (use?.type !== 'tool_use') throw new Error(`no tool_use in ${JSON.stringify(message)}`);
      expect(message.stop_reason).toBe('tool_use');
      return { name: use.name, args: use.input as Record<string, unknown> };
    },
  },
  {
    name: 'gemini',
    async plain(model) {
      const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });
      const answer = await ai.models.generateContent({ model, contents: 'Weather?' });
      return answer.text ?? '';
    },
    async stream(model) {
      const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });
      let text = '';
      for await (const chunk of await ai.models.generateContentStream({ model, contents: 'Weather?' })) {
        text += chunk.text ?? '';
      }
      return text;
    },
    async tool(model) {
      const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });
      const answer = await ai.models.generateContent({
        model,
        contents: 'Weather in Paris?',
        config: { tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: weatherSchema }] }] },
      });
      const call = answer.functionCalls?.[0];
      if (!call?.name) throw new Error(`no function call in ${JSON.stringify(answer)}`);
      return { name: call.name, args: call.args ?? {} };
    },
  },
];

describe.each(clients)('the $name client', (client) => {
  describe.each(upstreams)('against the $name upstream', (upstream) => {
    it('answers a plain call with the upstream text, billed by the formula', async () => {
      upstream.script();
      let text = '';
      const log = await billed(gateway, async () => {
        text = await client.plain(upstream.model);
      });
      expect(text).toBe(REPLY);
      expect(log.quota).toBe(upstream.quota);
      expect(log.model_name).toBe(upstream.model);
      if (client.name !== upstream.name) expect(log.other.request_conversion?.length).toBeGreaterThan(1);
      else expect(log.other.request_conversion).toBeUndefined();
    });

    it('streams the upstream text event by event, billed by the formula', async () => {
      upstream.script();
      let text = '';
      const log = await billed(gateway, async () => {
        text = await client.stream(upstream.model);
      });
      expect(text).toBe(REPLY);
      expect(log.quota).toBe(upstream.quota);
    });

    it('carries a tool call back in the client format, billed by the formula', async () => {
      upstream.script();
      let call: { name: string; args: Record<string, unknown> } | undefined;
      const log = await billed(gateway, async () => {
        call = await client.tool(upstream.model);
      });
      expect(call).toEqual({ name: 'get_weather', args: { city: 'Paris' } });
      expect(log.quota).toBe(upstream.quota);
    });
  });
});

describe('chat completions through a Responses-only upstream', () => {
  it('sends chat as a Responses call when the policy names the model, and answers chat', async () => {
    await gateway.options.set(
      'global.chat_completions_to_responses_policy',
      JSON.stringify({ enabled: true, all_channels: false, channel_types: [1], model_patterns: ['^gpt-4o$'] }),
    );
    try {
      for (const call of [clients[0]!.plain, clients[0]!.stream]) {
        openaiUp.behaviour = { reply: REPLY, usage: { prompt_tokens: 120, completion_tokens: 30 } };
        let text = '';
        const log = await billed(gateway, async () => {
          text = await call('gpt-4o');
        });
        expect(openaiUp.requests.at(-1)?.path).toBe('/v1/responses');
        expect(text).toBe(REPLY);
        expect(log.quota).toBe(Math.round((120 + 30 * 4) * 1.25));
        expect(log.other.request_conversion).toEqual(['OpenAI Compatible', 'OpenAI Responses']);
      }
    } finally {
      await gateway.options.set(
        'global.chat_completions_to_responses_policy',
        JSON.stringify({ enabled: false, all_channels: true, channel_ids: [], channel_types: [], model_patterns: [] }),
      );
    }
  });
});

describe('model lists and errors in the client shape', () => {
  it('lists the models in the shape of the asking client', async () => {
    const claude = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    const claudeModels = [];
    for await (const model of claude.models.list()) claudeModels.push(model.id);
    expect(claudeModels.sort()).toEqual(['claude-sonnet-4-20250514', 'gemini-2.5-flash', 'gpt-4o']);

    const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url, apiVersion: 'v1beta' } });
    const geminiModels = [];
    for await (const model of await ai.models.list()) geminiModels.push(model.name);
    expect(geminiModels.sort()).toEqual([
      'models/claude-sonnet-4-20250514',
      'models/gemini-2.5-flash',
      'models/gpt-4o',
    ]);
  });

  it('answers errors in the format each client parses', async () => {
    const claude = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    const claudeError = await claude.messages
      .create({ model: 'no-such-model', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(claudeError).toBeInstanceOf(Anthropic.APIError);
    // An unpriced model is refused before routing.
    expect((claudeError as InstanceType<typeof Anthropic.APIError>).status).toBe(400);
    expect((claudeError as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('no-such-model') },
    });

    const response = await fetch(`${gateway.url}/v1beta/models/no-such-model:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: 400, message: expect.stringContaining('no-such-model'), status: 'INVALID_ARGUMENT' },
    });

    const badKey = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'sk-wrong', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(badKey.status).toBe(401);
    expect(await badKey.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });
});
