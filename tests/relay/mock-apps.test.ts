import { CozeAPI } from '@coze/api';
import { ChatClient, CompletionClient } from 'dify-client';
import Replicate from 'replicate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockCoze, startMockCoze } from '../support/mock-coze.ts';
import { type MockDify, startMockDify } from '../support/mock-dify.ts';
import { type MockReplicate, startMockReplicate } from '../support/mock-replicate.ts';

/** The app-platform mocks answer the vendors' own clients as the real services do. */
let dify: MockDify;
let coze: MockCoze;
let replicate: MockReplicate;

beforeAll(async () => {
  dify = await startMockDify({ 'app-chat-key': 'chat', 'app-agent-key': 'agent', 'app-flow-key': 'workflow' });
  coze = await startMockCoze({ tokens: ['pat_good'], bots: ['7400000000000000001'] });
  replicate = await startMockReplicate({
    tokens: ['r8_good'],
    models: { 'meta/meta-llama-3-8b-instruct': 'language', 'black-forest-labs/flux-schnell': 'image' },
  });
});

afterAll(async () => {
  await Promise.all([dify?.close(), coze?.close(), replicate?.close()]);
});

type WorkflowRunner = { runWorkflow(inputs: object, user: string, stream: boolean): Promise<any> };

/** Dify's stream as its client hands it over: raw `data:` lines, parsed here as Dify's docs say. */
async function difyEvents(stream: AsyncIterable<Buffer>): Promise<any[]> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString('utf8');
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice(6)));
}

describe('the Dify mock, through dify-client', () => {
  it('answers a blocking chat message and keeps the conversation for its user', async () => {
    dify.behaviour = { reply: 'Blocking works.', usage: { prompt_tokens: 11, completion_tokens: 3 } };
    const client = new ChatClient('app-chat-key', `${dify.url}/v1`);
    const first = await client.createChatMessage({}, 'Hi', 'alice', false);
    expect(first.data).toMatchObject({ event: 'message', mode: 'chat', answer: 'Blocking works.' });
    expect(first.data.metadata.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
    const next = await client.createChatMessage({}, 'Again', 'alice', false, first.data.conversation_id);
    expect(next.data.conversation_id).toBe(first.data.conversation_id);
    await expect(client.createChatMessage({}, 'Again', 'bob', false, first.data.conversation_id)).rejects.toMatchObject(
      {
        response: { status: 404, data: { code: 'not_found' } },
      },
    );
  });

  it('streams message events ending in message_end with usage', async () => {
    dify.behaviour = { reply: 'Streaming from Dify.' };
    const client = new ChatClient('app-chat-key', `${dify.url}/v1`);
    const response = await client.createChatMessage({}, 'Hi', 'alice', true);
    const events = await difyEvents(response.data);
    expect(
      events
        .filter((e) => e.event === 'message')
        .map((e) => e.answer)
        .join(''),
    ).toBe('Streaming from Dify.');
    expect(events.at(-1)).toMatchObject({
      event: 'message_end',
      metadata: { usage: { total_tokens: expect.any(Number) } },
    });
  });

  it('refuses blocking mode for an agent app, and streams agent messages', async () => {
    const client = new ChatClient('app-agent-key', `${dify.url}/v1`);
    await expect(client.createChatMessage({}, 'Hi', 'alice', false)).rejects.toMatchObject({
      response: { status: 400, data: { code: 'invalid_param' } },
    });
    const events = await difyEvents((await client.createChatMessage({}, 'Hi', 'alice', true)).data);
    expect(events.map((e) => e.event)).toContain('agent_thought');
    expect(events.some((e) => e.event === 'agent_message')).toBe(true);
  });

  it('runs a workflow app, and refuses a bad key', async () => {
    dify.behaviour = { reply: 'Workflow output.', workflowTokens: 77 };
    const flow = new CompletionClient('app-flow-key', `${dify.url}/v1`);
    // The package's typings lack runWorkflow, which its code has.
    const run = await (flow as CompletionClient & WorkflowRunner).runWorkflow({ query: 'go' }, 'alice', false);
    expect(run.data.data).toMatchObject({
      status: 'succeeded',
      outputs: { text: 'Workflow output.' },
      total_tokens: 77,
    });
    const bad = new ChatClient('app-wrong', `${dify.url}/v1`);
    await expect(bad.createChatMessage({}, 'Hi', 'alice', false)).rejects.toMatchObject({
      response: { status: 401, data: { code: 'unauthorized' } },
    });
  });
});

describe('the Coze mock, through @coze/api', () => {
  const client = () => new CozeAPI({ token: 'pat_good', baseURL: coze.url });

  it('streams a chat: deltas, completed chat with usage, done', async () => {
    coze.behaviour = { reply: 'Coze streams fine.', usage: { input_count: 20, output_count: 5 } };
    let text = '';
    let usage: unknown;
    let done = false;
    for await (const part of await client().chat.stream({
      bot_id: '7400000000000000001',
      user_id: 'alice',
      additional_messages: [{ role: 'user' as never, content: 'Hi', content_type: 'text' }],
    })) {
      if (part.event === 'conversation.message.delta') text += (part.data as any).content;
      if (part.event === 'conversation.chat.completed') usage = (part.data as any).usage;
      if (part.event === 'done') done = true;
    }
    expect(text).toBe('Coze streams fine.');
    expect(usage).toEqual({ token_count: 25, output_count: 5, input_count: 20 });
    expect(done).toBe(true);
  });

  it('creates and polls a chat to completion, then lists its messages', async () => {
    coze.behaviour = { reply: 'Polled answer.', usage: { input_count: 9, output_count: 4 } };
    const { chat, messages } = await client().chat.createAndPoll({
      bot_id: '7400000000000000001',
      user_id: 'alice',
      additional_messages: [{ role: 'user' as never, content: 'Hi', content_type: 'text' }],
    });
    expect(chat.status).toBe('completed');
    expect(chat.usage).toEqual({ token_count: 13, output_count: 4, input_count: 9 });
    expect(messages?.find((m) => m.type === 'answer')?.content).toBe('Polled answer.');
    expect(coze.requests.filter((r) => r.path === '/v3/chat/retrieve').length).toBeGreaterThanOrEqual(3);
  });

  it('refuses a bad token (401, code 4100) and an unknown bot (code 4200)', async () => {
    const bad = new CozeAPI({ token: 'pat_bad', baseURL: coze.url });
    const params = {
      bot_id: '7400000000000000001',
      user_id: 'alice',
      additional_messages: [{ role: 'user' as never, content: 'Hi', content_type: 'text' as const }],
    };
    await expect(bad.chat.create(params)).rejects.toMatchObject({ status: 401, code: 4100 });
    await expect(client().chat.create({ ...params, bot_id: '1' })).rejects.toMatchObject({ code: 4200 });
  });
});

describe('the Replicate mock, through the replicate client', () => {
  const client = () => new Replicate({ auth: 'r8_good', baseUrl: `${replicate.url}/v1`, useFileOutput: false });

  it('runs a language model (Prefer: wait) to its output tokens', async () => {
    replicate.behaviour = { reply: 'Run output here.' };
    const output = await client().run('meta/meta-llama-3-8b-instruct', { input: { prompt: 'Hi' } });
    expect((output as string[]).join('')).toBe('Run output here.');
    expect(replicate.requests.at(-1)?.headers.prefer).toBe('wait');
  });

  it('streams a prediction: output events then done', async () => {
    replicate.behaviour = { reply: 'Streamed\nacross lines.' };
    let text = '';
    const events: string[] = [];
    for await (const event of client().stream('meta/meta-llama-3-8b-instruct', { input: { prompt: 'Hi' } })) {
      events.push(event.event);
      if (event.event === 'output') text += event.data;
    }
    expect(text).toBe('Streamed\nacross lines.');
    expect(events.at(-1)).toBe('done');
  });

  it('runs an image model to output URLs, and refuses a bad token', async () => {
    const output = (await client().run('black-forest-labs/flux-schnell', {
      input: { prompt: 'a cat', num_outputs: 2 },
    })) as string[];
    expect(output).toHaveLength(2);
    expect(output[0]).toMatch(/^https:\/\/replicate\.delivery\/.+\.webp$/);
    const bad = new Replicate({ auth: 'r8_bad', baseUrl: `${replicate.url}/v1` });
    await expect(bad.run('black-forest-labs/flux-schnell', { input: { prompt: 'x' } })).rejects.toThrow(/401/);
  });
});
