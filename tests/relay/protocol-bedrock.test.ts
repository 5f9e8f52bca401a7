import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockBedrock, startMockBedrock } from '../support/mock-bedrock.ts';
import { billed } from '../support/usage.ts';
import { eventually } from '../support/wait.ts';

// An AWS Bedrock channel (type 33) created through /api with its real key format, against the mock
// Bedrock runtime (which recomputes every SigV4 signature with AWS's signer): Claude through
// InvokeModel, Nova through Converse, each client format, streams and tools, billed to the unit.
const REPLY = 'The weather in Paris is sunny today.';
const CLAUDE = 'claude-sonnet-4-20250514';
const NOVA = 'amazon.nova-pro-v1:0';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let bedrock: MockBedrock;
let key: string;
let channelId: number;
let badKeyChannelId: number;

// Claude's semantics: input 100 excludes 40 cache reads (at 0.1) and 20 cache writes (at 1.25); output 30 at 5; ratio 1.5.
const CLAUDE_QUOTA = Math.round((100 + 40 * 0.1 + 20 * 1.25 + 30 * 5) * 1.5);
// Converse: inputTokens 100 exclude the 40 cache reads (at 0.25); output 30 at 4; ratio 0.4.
const NOVA_QUOTA = Math.round((100 + 40 * 0.25 + 30 * 4) * 0.4);

const script = () => {
  bedrock.behaviour = {
    reply: REPLY,
    claudeUsage: { input_tokens: 100, output_tokens: 30, cache_read_input_tokens: 40, cache_creation_input_tokens: 20 },
    converseUsage: { inputTokens: 100, outputTokens: 30, cacheReadInputTokens: 40 },
  };
};

async function channel(name: string, channelKey: string, models: string): Promise<number> {
  const created = await root.post('/api/channel/', {
    name,
    type: 33,
    key: channelKey,
    base_url: bedrock.url,
    models,
    group: 'default',
  });
  expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  return created.body.data.id;
}

beforeAll(async () => {
  bedrock = await startMockBedrock();
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  const { accessKeyId, secretAccessKey } = bedrock.credentials;
  channelId = await channel('bedrock', `${accessKeyId}|${secretAccessKey}|us-east-1`, `${CLAUDE},${NOVA}`);
  await channel('bedrock-wrong-secret', `${accessKeyId}|not-the-secret|us-east-1`, 'claude-3-haiku-20240307');
  await channel('bedrock-api-key', `${bedrock.apiKey}|eu-west-1`, 'claude-3-5-haiku-20241022');
  badKeyChannelId = await channel('bedrock-bad-key', `${accessKeyId}|${secretAccessKey}`, 'claude-opus-4-20250514');
  await gateway.options.setMany({
    ModelRatio: JSON.stringify({
      [CLAUDE]: 1.5,
      [NOVA]: 0.4,
      'claude-3-haiku-20240307': 1,
      'claude-3-5-haiku-20241022': 1,
      'claude-opus-4-20250514': 1,
    }),
    CompletionRatio: JSON.stringify({ [CLAUDE]: 5, [NOVA]: 4 }),
    CacheRatio: JSON.stringify({ [CLAUDE]: 0.1, [NOVA]: 0.25 }),
    CreateCacheRatio: JSON.stringify({ [CLAUDE]: 1.25 }),
  });
  key = (await root.post('/api/token/', { name: 'bedrock', unlimited_quota: true })).body.data.key;
  await eventually(
    async () => (await openai().models.list()).data.length,
    (n) => n === 5,
    2000,
  );
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await bedrock?.close();
});

/** The error a call is refused with; the test fails if the call succeeds. */
async function refusal(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await call;
  } catch (error) {
    return error as InstanceType<typeof OpenAI.APIError>;
  }
  throw new Error('the call succeeded');
}

const openai = () => new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe.each([
  {
    model: CLAUDE,
    quota: CLAUDE_QUOTA,
    path: '/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0',
    ops: ['invoke', 'invoke-with-response-stream'],
  },
  { model: NOVA, quota: NOVA_QUOTA, path: '/model/amazon.nova-pro-v1%3A0', ops: ['converse', 'converse-stream'] },
])('the openai client on $model', ({ model, quota, path, ops }) => {
  it('answers a plain call with the upstream text, billed by the formula', async () => {
    script();
    let text: string | null | undefined;
    const log = await billed(gateway, async () => {
      const answer = await openai().chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Weather?' }],
      });
      text = answer.choices[0]?.message.content;
      expect(answer.usage?.completion_tokens).toBe(30);
    });
    expect(text).toBe(REPLY);
    expect(log.quota).toBe(quota);
    const request = bedrock.requests.at(-1);
    expect(request).toMatchObject({ path: `${path}/${ops[0]}`, auth: 'sigv4', region: 'us-east-1' });
    expect(request?.body.model).toBeUndefined();
  });

  it('streams the upstream text, billed from the usage in the stream', async () => {
    script();
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    const log = await billed(gateway, async () => {
      const stream = await openai().chat.completions.create({
        model,
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
    expect(usage).toMatchObject({ prompt_tokens: model === CLAUDE ? 160 : 140, completion_tokens: 30 });
    expect(log.quota).toBe(quota);
    expect(bedrock.requests.at(-1)?.path).toBe(`${path}/${ops[1]}`);
  });

  it('carries a tool call back, plain and streamed, each billed by the formula', async () => {
    script();
    let answer: OpenAI.ChatCompletion | undefined;
    expect(
      (
        await billed(gateway, async () => {
          answer = await openai().chat.completions.create({
            model,
            messages: [{ role: 'user', content: 'Weather in Paris?' }],
            tools: [weather],
          });
        })
      ).quota,
    ).toBe(quota);
    const call = answer?.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && [call.function.name, JSON.parse(call.function.arguments)]).toEqual([
      'get_weather',
      { city: 'Paris' },
    ]);
    expect(answer?.choices[0]?.finish_reason).toBe('tool_calls');

    let name = '';
    let args = '';
    const streamed = await billed(gateway, async () => {
      const stream = await openai().chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [weather],
        stream: true,
      });
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta?.tool_calls?.[0];
        name += delta?.function?.name ?? '';
        args += delta?.function?.arguments ?? '';
      }
    });
    expect([name, JSON.parse(args)]).toEqual(['get_weather', { city: 'Paris' }]);
    expect(streamed.quota).toBe(quota);

    // The tool's result goes back as the upstream's own tool-result block.
    let followUp: OpenAI.ChatCompletion | undefined;
    await billed(gateway, async () => {
      followUp = await openai().chat.completions.create({
        model,
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        ],
        tools: [weather],
      });
    });
    expect(followUp?.choices[0]?.message.content).toBe(REPLY);
    const sent = JSON.stringify(bedrock.requests.at(-1)?.body.messages);
    expect(sent).toContain(
      model === CLAUDE ? '"type":"tool_result","tool_use_id":"call_1"' : '"toolResult":{"toolUseId":"call_1"',
    );
  });
});

describe('the anthropic client on Claude', () => {
  const claude = () => new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
  const request = {
    model: CLAUDE,
    max_tokens: 4096,
    system: [{ type: 'text' as const, text: 'You are terse.', cache_control: { type: 'ephemeral' as const } }],
    thinking: { type: 'enabled' as const, budget_tokens: 2048 },
    messages: [{ role: 'user' as const, content: 'Weather?' }],
  };

  it('passes cache_control, thinking and beta flags to InvokeModel unchanged, billed by Claude’s formula', async () => {
    script();
    let message: Anthropic.Message | undefined;
    const log = await billed(gateway, async () => {
      message = await claude().messages.create(request, {
        headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
      });
    });
    expect(message?.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    expect(message?.content.at(-1)).toMatchObject({ text: REPLY });
    expect(log.quota).toBe(CLAUDE_QUOTA);
    expect(log.other.request_conversion).toBeUndefined();
    const { model: _model, ...rest } = request;
    expect(bedrock.requests.at(-1)?.body).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['interleaved-thinking-2025-05-14'],
      ...rest,
    });
  });

  it('streams the Claude events Bedrock wraps, billed by Claude’s formula', async () => {
    script();
    let text = '';
    let thinking = '';
    const log = await billed(gateway, async () => {
      const stream = claude().messages.stream(request);
      for await (const event of stream) {
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
        if (event.type === 'content_block_delta' && event.delta.type === 'thinking_delta')
          thinking += event.delta.thinking;
      }
      expect((await stream.finalMessage()).usage).toMatchObject({ input_tokens: 100, output_tokens: 30 });
    });
    expect([thinking, text]).toEqual(['Let me think.', REPLY]);
    expect(log.quota).toBe(CLAUDE_QUOTA);
    expect(bedrock.requests.at(-1)?.body.system).toEqual(request.system);
  });
});

describe('the anthropic client on Nova', () => {
  it('reaches Converse through the hub, billed by the Converse usage', async () => {
    script();
    const claude = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    let message: Anthropic.Message | undefined;
    const log = await billed(gateway, async () => {
      message = await claude.messages.create({
        model: NOVA,
        max_tokens: 256,
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'Weather?' }],
      });
    });
    expect(message?.content).toEqual([{ type: 'text', text: REPLY }]);
    expect(log.quota).toBe(NOVA_QUOTA);
    expect(bedrock.requests.at(-1)?.body).toEqual({
      system: [{ text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ text: 'Weather?' }] }],
      inferenceConfig: { maxTokens: 256 },
    });
  });
});

describe('the gemini client on Claude', () => {
  it('answers generateContent through the hub, billed by Claude’s formula', async () => {
    script();
    const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });
    let text: string | undefined;
    const log = await billed(gateway, async () => {
      text = (await ai.models.generateContent({ model: CLAUDE, contents: 'Weather?' })).text;
    });
    expect(text).toBe(REPLY);
    expect(log.quota).toBe(CLAUDE_QUOTA);
    expect(bedrock.requests.at(-1)?.operation).toBe('invoke');
  });
});

describe('keys and errors', () => {
  it('gives a wrong secret’s signature refusal to the client as Bedrock’s 403, not a 500', async () => {
    const refused = await refusal(
      openai().chat.completions.create({
        model: 'claude-3-haiku-20240307',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect(refused.status).toBe(403);
    expect(refused.message).toContain('The request signature we calculated does not match');
    expect(refused.code).toBe('InvalidSignatureException');
  });

  it('sends a Bedrock API key as a Bearer token, with the inference profile of its region', async () => {
    script();
    const answer = await openai().chat.completions.create({
      model: 'claude-3-5-haiku-20241022',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.choices[0]?.message.content).toBe(REPLY);
    expect(bedrock.requests.at(-1)).toMatchObject({
      auth: 'api-key',
      modelId: 'eu.anthropic.claude-3-5-haiku-20241022-v1:0',
    });
  });

  it('refuses a key without its region with a stable code before calling Bedrock', async () => {
    const before = bedrock.requests.length;
    const refused = await refusal(
      openai().chat.completions.create({
        model: 'claude-opus-4-20250514',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    expect(refused.status).toBe(401);
    expect(refused.code).toBe('channel:key_malformed');
    expect(bedrock.requests.length).toBe(before);
  });

  it('ends a stream broken by an in-stream exception as an error', async () => {
    script();
    bedrock.behaviour = {
      ...bedrock.behaviour,
      streamException: { type: 'throttlingException', message: 'Too many tokens' },
    };
    const stream = await openai().chat.completions.create({
      model: NOVA,
      messages: [{ role: 'user', content: 'Weather?' }],
      stream: true,
    });
    let text = '';
    const read = async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    };
    await expect(read()).rejects.toThrow();
    expect(text).toBe('The ');
  });
});

describe('the openai responses client on Claude', () => {
  it('reaches InvokeModel through the hub', async () => {
    script();
    const answer = await openai().responses.create({ model: CLAUDE, input: 'Weather?' });
    expect(answer.output_text).toBe(REPLY);
    expect(bedrock.requests.at(-1)?.operation).toBe('invoke');
  });
});

describe('the channel test', () => {
  it('fails a channel whose key has no region, saying why, without a 500', async () => {
    const answer = await root.get(`/api/channel/test/${badKeyChannelId}`);
    expect(answer.status).toBeLessThan(500);
    expect(JSON.stringify(answer.body)).toContain('AccessKey|SecretAccessKey|Region');
    expect(answer.body.success).toBe(false);
  });

  it('passes for a Claude and a Nova model, plain and streamed', async () => {
    script();
    for (const query of ['', `?model=${NOVA}`, '?stream=true', `?model=${NOVA}&stream=true`]) {
      const answer = await root.get(`/api/channel/test/${channelId}${query}`);
      expect(answer.body, query).toMatchObject({ success: true, message: '' });
    }
    expect(bedrock.requests.at(-1)).toMatchObject({ operation: 'converse-stream', modelId: NOVA });
  });
});

describe('fetching the model list (ListFoundationModels)', () => {
  // Text-output models callable on demand or through a profile: not embeddings, images or provisioned-only.
  const LISTED = [
    'amazon.nova-pro-v1:0',
    'anthropic.claude-3-5-sonnet-20241022-v2:0',
    'anthropic.claude-sonnet-4-20250514-v1:0',
    'meta.llama3-1-70b-instruct-v1:0',
  ];

  it('is offered for the type in the console', async () => {
    const types = (await root.get('/api/channel/types')).body.data;
    expect(types.find((type: { id: number }) => type.id === 33)).toMatchObject({ model_listing: true });
  });

  it('lists a saved channel’s text models, signed with SigV4 for the control plane (service bedrock)', async () => {
    const answer = await root.get(`/api/channel/fetch_models/${channelId}`);
    expect(answer.body).toMatchObject({ success: true, data: LISTED });
    const sent = bedrock.requests.at(-1)!;
    expect(sent).toMatchObject({ operation: 'list-foundation-models', auth: 'sigv4', region: 'us-east-1' });
    expect(String(sent.headers.authorization)).toContain('/us-east-1/bedrock/aws4_request');
  });

  it('lists for an unsaved channel with a Bedrock API key, as the form asks', async () => {
    const answer = await root.post('/api/channel/fetch_models', {
      type: 33,
      key: `${bedrock.apiKey}|eu-west-1`,
      base_url: bedrock.url,
    });
    expect(answer.body).toMatchObject({ success: true, data: LISTED });
    expect(bedrock.requests.at(-1)).toMatchObject({ operation: 'list-foundation-models', auth: 'api-key' });
  });

  it('gives a wrong secret Bedrock’s refusal, without the secret, not a 500', async () => {
    const { accessKeyId } = bedrock.credentials;
    const answer = await root.post('/api/channel/fetch_models', {
      type: 33,
      key: `${accessKeyId}|wrong-secret-value|us-east-1`,
      base_url: bedrock.url,
    });
    expect(answer.status).toBeLessThan(500);
    expect(answer.body).toMatchObject({ success: false, code: 'UPSTREAM_REFUSED' });
    expect(answer.body.message).toContain('HTTP 403');
    expect(answer.body.message).toContain('The request signature we calculated does not match');
    expect(answer.body.message).not.toContain('wrong-secret-value');
  });

  it('refuses a key without its region with the stable code, before calling Bedrock', async () => {
    const before = bedrock.requests.length;
    const answer = await root.get(`/api/channel/fetch_models/${badKeyChannelId}`);
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ success: false, code: 'channel:key_malformed' });
    expect(bedrock.requests.length).toBe(before);
  });
});
