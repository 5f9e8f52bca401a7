import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockCoze, startMockCoze } from '../support/mock-coze.ts';
import { type MockDify, startMockDify } from '../support/mock-dify.ts';
import { type MockReplicate, startMockReplicate } from '../support/mock-replicate.ts';
import { billed } from '../support/usage.ts';
import { eventually } from '../support/wait.ts';

// App platforms and predictions (Dify 37, Coze 49, Replicate 56) through one gateway, each channel
// created through /api with its real key format, reached by the official clients; the quota is the
// formula of reference §5.4 applied to the usage each upstream reported.
const BOT = '7400000000000000001';
const LLAMA = 'meta/meta-llama-3-8b-instruct';
const FLUX = 'black-forest-labs/flux-schnell';
const RATIO = { 'dify-chat': 1.5, 'dify-agent': 2, 'dify-flow': 0.5, [BOT]: 0.75, [LLAMA]: 0.25 };
const COMPLETION = { 'dify-chat': 3, 'dify-agent': 2, [BOT]: 4, [LLAMA]: 2 };

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let dify: MockDify;
let coze: MockCoze;
let replicate: MockReplicate;
let openai: OpenAI;
let key: string;
const channelIds: Record<string, number> = {};

/** (prompt + completion × CompletionRatio) × ModelRatio, group ratio 1. */
const quota = (model: keyof typeof RATIO, prompt: number, completion: number) =>
  Math.round((prompt + completion * ((COMPLETION as Record<string, number>)[model] ?? 1)) * RATIO[model]);

beforeAll(async () => {
  [dify, coze, replicate] = await Promise.all([
    startMockDify({ 'app-chat-key': 'chat', 'app-agent-key': 'agent', 'app-flow-key': 'workflow' }),
    startMockCoze({ tokens: ['pat_good'], bots: [BOT] }),
    startMockReplicate({ tokens: ['r8_good'], models: { [LLAMA]: 'language', [FLUX]: 'image' } }),
  ]);
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  const channels = [
    { name: 'dify-chat', type: 37, key: 'app-chat-key', base_url: dify.url, models: 'dify-chat' },
    { name: 'dify-agent', type: 37, key: 'app-agent-key', base_url: dify.url, models: 'dify-agent', other: 'agent' },
    { name: 'dify-flow', type: 37, key: 'app-flow-key', base_url: dify.url, models: 'dify-flow', other: 'workflow' },
    { name: 'coze', type: 49, key: 'pat_good', base_url: coze.url, models: BOT },
    { name: 'replicate', type: 56, key: 'r8_good', base_url: replicate.url, models: `${LLAMA},${FLUX}` },
  ];
  for (const channel of channels) {
    const created = await root.post('/api/channel/', { ...channel, group: 'default' });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  }
  const listed = await root.get('/api/channel/?p=0&page_size=50');
  for (const row of listed.body.data.items ?? listed.body.data) channelIds[row.name] = row.id;
  await gateway.options.setMany({
    ModelRatio: JSON.stringify(RATIO),
    CompletionRatio: JSON.stringify(COMPLETION),
    ModelPrice: JSON.stringify({ [FLUX]: 0.003 }),
  });
  const token = await root.post('/api/token/', { name: 'apps', unlimited_quota: true });
  key = token.body.data.key;
  openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  expect(
    await eventually(
      async () => (await openai.models.list()).data.length,
      (n) => n >= 6,
      3000,
    ),
  ).toBe(6);
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await Promise.all([dify?.close(), coze?.close(), replicate?.close()]);
});

/** An OpenAI stream read to its end: the text, the usage chunk and the extra fields of the last chunk. */
async function readStream(stream: AsyncIterable<OpenAI.ChatCompletionChunk>) {
  let text = '';
  let usage: OpenAI.CompletionUsage | undefined;
  let last: any;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
    last = chunk;
  }
  return { text, usage, last };
}

describe('Dify (37)', () => {
  it('answers a chat app plainly, with the last user message as the query, billed from its usage', async () => {
    dify.behaviour = { reply: 'Dify says hi.', usage: { prompt_tokens: 120, completion_tokens: 40 } };
    let answer: any;
    const log = await billed(gateway, async () => {
      answer = await openai.chat.completions.create({
        model: 'dify-chat',
        messages: [
          { role: 'system', content: 'You are helpful.' },
          { role: 'user', content: 'First question' },
          { role: 'assistant', content: 'First answer' },
          { role: 'user', content: 'What is Tollgate?' },
        ],
      });
    });
    expect(answer.choices[0].message.content).toBe('Dify says hi.');
    expect(answer.usage).toMatchObject({ prompt_tokens: 120, completion_tokens: 40 });
    const sent = dify.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat-messages');
    expect(sent.headers.authorization).toBe('Bearer app-chat-key');
    expect(sent.body).toMatchObject({ query: 'What is Tollgate?', response_mode: 'blocking', inputs: {} });
    expect(sent.body.user).toMatch(/^tollgate-user-\d+$/);
    expect(answer.conversation_id).toBe(sent.body.conversation_id ?? [...dify.conversations.keys()].at(-1));
    expect(log.quota).toBe(quota('dify-chat', 120, 40));
    expect([log.prompt_tokens, log.completion_tokens]).toEqual([120, 40]);
  });

  it('continues a conversation the client names, for the client’s user', async () => {
    dify.behaviour = { reply: 'Remembered.' };
    let first: any;
    await billed(gateway, async () => {
      first = await openai.chat.completions.create({
        model: 'dify-chat',
        messages: [{ role: 'user', content: 'My name is Ada.' }],
        user: 'ada',
      });
    });
    const conversation = first.conversation_id as string;
    expect(dify.conversations.get(conversation)).toBe('ada');
    let next: any;
    await billed(gateway, async () => {
      next = await openai.chat.completions.create({
        model: 'dify-chat',
        messages: [{ role: 'user', content: 'What is my name?' }],
        user: 'ada',
        conversation_id: conversation,
      } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    });
    expect(dify.requests.at(-1)!.body).toMatchObject({ conversation_id: conversation, user: 'ada' });
    expect(next.conversation_id).toBe(conversation);
  });

  it('streams a chat app with Dify’s usage, the conversation id on the chunks', async () => {
    dify.behaviour = { reply: 'Streaming through Dify works.', usage: { prompt_tokens: 60, completion_tokens: 9 } };
    let result: Awaited<ReturnType<typeof readStream>> | undefined;
    const log = await billed(gateway, async () => {
      result = await readStream(
        await openai.chat.completions.create({
          model: 'dify-chat',
          messages: [{ role: 'user', content: 'Stream please' }],
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
    });
    expect(result!.text).toBe('Streaming through Dify works.');
    expect(result!.usage).toMatchObject({ prompt_tokens: 60, completion_tokens: 9 });
    expect(result!.last.conversation_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(dify.requests.at(-1)!.body.response_mode).toBe('streaming');
    expect(log.quota).toBe(quota('dify-chat', 60, 9));
  });

  it('streams an agent app upstream even for a whole answer, and assembles it', async () => {
    dify.behaviour = { reply: 'The agent answered.', usage: { prompt_tokens: 200, completion_tokens: 15 } };
    let answer: any;
    const log = await billed(gateway, async () => {
      answer = await openai.chat.completions.create({
        model: 'dify-agent',
        messages: [{ role: 'user', content: 'Use your tools' }],
      });
    });
    expect(dify.requests.at(-1)!.body.response_mode).toBe('streaming');
    expect(answer.choices[0].message.content).toBe('The agent answered.');
    expect(log.quota).toBe(quota('dify-agent', 200, 15));
  });

  it('runs a workflow app with the query as an input, its total tokens billed as prompt', async () => {
    dify.behaviour = { reply: 'Workflow result.', workflowTokens: 90 };
    let answer: any;
    const log = await billed(gateway, async () => {
      answer = await openai.chat.completions.create({
        model: 'dify-flow',
        messages: [{ role: 'user', content: 'Run it' }],
      });
    });
    const sent = dify.requests.at(-1)!;
    expect(sent.path).toBe('/v1/workflows/run');
    expect(sent.body.inputs).toEqual({ query: 'Run it' });
    expect(answer.choices[0].message.content).toBe('Workflow result.');
    expect(log.quota).toBe(quota('dify-flow', 90, 0));
    let streamed: Awaited<ReturnType<typeof readStream>> | undefined;
    const streamLog = await billed(gateway, async () => {
      streamed = await readStream(
        await openai.chat.completions.create({
          model: 'dify-flow',
          messages: [{ role: 'user', content: 'Run it' }],
          stream: true,
        }),
      );
    });
    expect(streamed!.text).toBe('Workflow result.');
    expect(streamLog.quota).toBe(quota('dify-flow', 90, 0));
  });

  it('answers a failed workflow run as an upstream error, not an empty answer', async () => {
    dify.behaviour = { workflowError: 'node LLM timed out' };
    await expect(
      openai.chat.completions.create({ model: 'dify-flow', messages: [{ role: 'user', content: 'Run it' }] }),
    ).rejects.toMatchObject({ status: 502, message: expect.stringContaining('node LLM timed out') });
  });

  it('serves a Claude client', async () => {
    dify.behaviour = { reply: 'Hello Claude client.', usage: { prompt_tokens: 30, completion_tokens: 5 } };
    const claude = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    let message: Anthropic.Message | undefined;
    const log = await billed(gateway, async () => {
      message = await claude.messages.create({
        model: 'dify-chat',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Hi from Claude' }],
      });
    });
    expect(log.quota).toBe(quota('dify-chat', 30, 5));
    expect(message!.content[0]).toMatchObject({ type: 'text', text: 'Hello Claude client.' });
    expect(message!.usage).toMatchObject({ input_tokens: 30, output_tokens: 5 });
    expect(dify.requests.at(-1)!.body.query).toBe('Hi from Claude');
  });
});

describe('Coze (49)', () => {
  it('polls a chat to its answer for a whole answer, billed from the chat’s usage', async () => {
    coze.behaviour = { reply: 'Coze bot reply.', usage: { input_count: 77, output_count: 12 } };
    let answer: any;
    const log = await billed(gateway, async () => {
      answer = await openai.chat.completions.create({
        model: BOT,
        messages: [
          { role: 'system', content: 'ignored' },
          { role: 'user', content: 'Earlier' },
          { role: 'assistant', content: 'Earlier answer' },
          { role: 'user', content: 'Now' },
        ],
      });
    });
    expect(answer.choices[0].message.content).toBe('Coze bot reply.');
    expect(answer.conversation_id).toMatch(/^\d+$/);
    const created = coze.requests.find(
      (r) => r.path === '/v3/chat' && r.body.stream === false && r.body.additional_messages.length === 3,
    )!;
    expect(created.headers.authorization).toBe('Bearer pat_good');
    expect(created.body).toMatchObject({ bot_id: BOT, auto_save_history: true });
    expect(created.body.user_id).toMatch(/^tollgate-user-\d+$/);
    expect(created.body.additional_messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(coze.requests.some((r) => r.path === '/v3/chat/retrieve')).toBe(true);
    expect(coze.requests.at(-1)!.path).toBe('/v3/chat/message/list');
    expect(log.quota).toBe(quota(BOT, 77, 12));
  });

  it('streams a chat with the completed chat’s usage', async () => {
    coze.behaviour = { reply: 'Streaming from the bot.', usage: { input_count: 50, output_count: 8 } };
    let result: Awaited<ReturnType<typeof readStream>> | undefined;
    const log = await billed(gateway, async () => {
      result = await readStream(
        await openai.chat.completions.create({
          model: BOT,
          messages: [{ role: 'user', content: 'Stream' }],
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
    });
    expect(result!.text).toBe('Streaming from the bot.');
    expect(result!.usage).toMatchObject({ prompt_tokens: 50, completion_tokens: 8 });
    expect(log.quota).toBe(quota(BOT, 50, 8));
  });

  it('sends an image by URL in an object_string message the bot accepts', async () => {
    coze.behaviour = { reply: 'A lighthouse.' };
    let answer: any;
    await billed(gateway, async () => {
      answer = await openai.chat.completions.create({
        model: BOT,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'https://example.com/lighthouse.png' } },
            ],
          },
        ],
        stream: false,
      });
    });
    expect(answer.choices[0].message.content).toBe('A lighthouse.');
    const created = coze.requests.filter((r) => r.path === '/v3/chat').at(-1)!;
    expect(created.body.additional_messages[0].content_type).toBe('object_string');
  });

  it('serves a Gemini client', async () => {
    coze.behaviour = { reply: 'Hello Gemini client.', usage: { input_count: 10, output_count: 4 } };
    const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });
    let answer: Awaited<ReturnType<typeof ai.models.generateContent>> | undefined;
    const log = await billed(gateway, async () => {
      answer = await ai.models.generateContent({ model: BOT, contents: 'Hi from Gemini' });
    });
    expect(log.quota).toBe(quota(BOT, 10, 4));
    expect(answer!.text).toBe('Hello Gemini client.');
    expect(answer!.usageMetadata).toMatchObject({ promptTokenCount: 10, candidatesTokenCount: 4 });
  });

  it('answers a failed chat as an upstream error, not a 500', async () => {
    coze.behaviour = { failChat: 'The bot crashed.', pollsUntilDone: 0 };
    await expect(
      openai.chat.completions.create({ model: BOT, messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 502, message: expect.stringContaining('The bot crashed.') });
  });
});

describe('Replicate (56)', () => {
  it('waits for a language model’s prediction, billed from its metrics', async () => {
    replicate.behaviour = { reply: 'Llama answers plainly.', tokens: { input: 33, output: 7 } };
    let answer: any;
    const log = await billed(gateway, async () => {
      answer = await openai.chat.completions.create({
        model: LLAMA,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hello' },
        ],
        max_tokens: 64,
      });
    });
    expect(answer.choices[0].message.content).toBe('Llama answers plainly.');
    const sent = replicate.requests.find((r) => r.method === 'POST' && r.body?.input?.prompt === 'Hello')!;
    expect(sent.path).toBe(`/v1/models/${LLAMA}/predictions`);
    expect(sent.headers.prefer).toBe('wait');
    expect(sent.body.input).toEqual({ prompt: 'Hello', system_prompt: 'Be brief.', max_tokens: 64 });
    expect(log.quota).toBe(quota(LLAMA, 33, 7));
  });

  it('streams through the prediction’s stream URL, billed from the finished prediction', async () => {
    replicate.behaviour = { reply: 'Tokens\nstream across lines.', tokens: { input: 21, output: 5 } };
    let result: Awaited<ReturnType<typeof readStream>> | undefined;
    const log = await billed(gateway, async () => {
      result = await readStream(
        await openai.chat.completions.create({
          model: LLAMA,
          messages: [{ role: 'user', content: 'Stream' }],
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
    });
    expect(result!.text).toBe('Tokens\nstream across lines.');
    expect(result!.usage).toMatchObject({ prompt_tokens: 21, completion_tokens: 5 });
    expect(replicate.requests.some((r) => r.path.startsWith('/v1/files/stream-'))).toBe(true);
    expect(log.quota).toBe(quota(LLAMA, 21, 5));
  });

  it('streams to a Claude client, billed from the prediction’s metrics', async () => {
    replicate.behaviour = { reply: 'Claude sees Llama.', tokens: { input: 18, output: 4 } };
    const claude = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    let text = '';
    let final: Anthropic.Message | undefined;
    const log = await billed(gateway, async () => {
      const stream = claude.messages.stream({
        model: LLAMA,
        max_tokens: 50,
        messages: [{ role: 'user', content: 'Hi from Claude' }],
      });
      stream.on('text', (delta) => {
        text += delta;
      });
      final = await stream.finalMessage();
    });
    expect(text).toBe('Claude sees Llama.');
    expect(final!.usage).toMatchObject({ input_tokens: 18, output_tokens: 4 });
    expect(log.quota).toBe(quota(LLAMA, 18, 4));
  });

  it('makes images with an image model, billed per image at the model price', async () => {
    let images: OpenAI.ImagesResponse | undefined;
    const log = await billed(gateway, async () => {
      images = await openai.images.generate({ model: FLUX, prompt: 'a lighthouse', n: 2, size: '1792x1024' });
    });
    expect(images!.data?.map((d) => d.url)).toHaveLength(2);
    expect(images!.data?.[0]?.url).toMatch(/^https:\/\/replicate\.delivery\//);
    const sent = replicate.requests.find((r) => r.body?.input?.prompt === 'a lighthouse')!;
    expect(sent.body.input).toEqual({ prompt: 'a lighthouse', num_outputs: 2, aspect_ratio: '16:9' });
    // $0.003 per image × 2 images × 500 000 quota per dollar
    expect(log.quota).toBe(Math.round(0.003 * 2 * 500_000));
  });
});

describe('channel operations and failures', () => {
  it('tests each channel through its protocol', async () => {
    coze.behaviour = {};
    for (const name of ['dify-chat', 'dify-agent', 'dify-flow', 'coze', 'replicate']) {
      const tested = await root.get(
        `/api/channel/test/${channelIds[name]}${name === 'replicate' ? `?model=${LLAMA}` : ''}`,
      );
      expect(tested.body, `${name}: ${JSON.stringify(tested.body)}`).toMatchObject({ success: true });
    }
  });

  it('refuses a request’s tools on each (apps and bots own theirs; Replicate has none), sending nothing', async () => {
    const sent = () => dify.requests.length + coze.requests.length + replicate.requests.length;
    const before = sent();
    for (const model of ['dify-chat', BOT, LLAMA]) {
      await expect(
        openai.chat.completions.create({
          model,
          messages: [{ role: 'user', content: 'Weather?' }],
          tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }],
        }),
        model,
      ).rejects.toMatchObject({ status: 400, message: expect.stringContaining('tools') });
    }
    expect(sent()).toBe(before);
  });

  it('gives a clear upstream error for a bad key, not a 500', async () => {
    const bad = [
      { name: 'bad-dify', type: 37, key: 'app-wrong', base_url: dify.url, models: 'bad-dify' },
      { name: 'bad-coze', type: 49, key: 'pat_wrong', base_url: coze.url, models: '7400000000000000009' },
      { name: 'bad-replicate', type: 56, key: 'r8_wrong', base_url: replicate.url, models: 'meta/bad-llama' },
    ];
    for (const channel of bad) await root.post('/api/channel/', { ...channel, group: 'default', auto_ban: 0 });
    await gateway.options.setMany({
      ModelRatio: JSON.stringify({ ...RATIO, 'bad-dify': 1, '7400000000000000009': 1, 'meta/bad-llama': 1 }),
    });
    await eventually(
      async () => (await openai.models.list()).data.length,
      (n) => n >= 9,
      3000,
    );
    const expected = [
      ['bad-dify', 'Access token is invalid'],
      ['7400000000000000009', 'authentication is invalid'],
      ['meta/bad-llama', 'You did not pass a valid authentication token'],
    ];
    for (const [model, message] of expected) {
      const error = await openai.chat.completions
        .create({ model: model!, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e);
      expect(error, model).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status, `${model}: ${(error as Error).message}`).toBe(401);
      expect((error as Error).message, model).toContain(message);
    }
  });
});
