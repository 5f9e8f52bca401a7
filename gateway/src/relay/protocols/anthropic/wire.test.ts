import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type MockAnthropic, startMockAnthropic } from '../../../../../tests/support/mock-anthropic.ts';
import { findOptionDefinition, type OptionsService } from '../../../domain/options/index.ts';
import { SseParser } from '../../sse.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { testChannel } from '../test-support.ts';
import { claudeAdapter } from './convert/index.ts';
import { anthropicProvider } from './index.ts';

/**
 * The provider, the converter and the mock upstream on the wire: the provider's requests against
 * the mock, the official SDK against the mock (so the mock speaks what real clients parse), and the
 * official SDK reading what the hub → Claude converters write.
 */

const options = {
  get: (key: string) => findOptionDefinition(key)!.default,
  getBoolean: (key: string) => findOptionDefinition(key)!.default === 'true',
  getNumber: (key: string) => Number(findOptionDefinition(key)!.default),
  getJson: (key: string) => JSON.parse(findOptionDefinition(key)!.default),
} as unknown as OptionsService;

let mock: MockAnthropic;
beforeAll(async () => {
  mock = await startMockAnthropic();
});
afterAll(() => mock.close());
beforeEach(() => {
  mock.behaviour = {};
  mock.requests.length = 0;
});

const channel = (): ChannelSnapshot =>
  testChannel({ type: 14, name: 'mock', baseUrl: mock.url, keys: ['sk-ant-mock'] });

/** Sends a Claude body the way the relay does: prepareBody, buildRequest, fetch. */
async function send(body: Record<string, any>, model: string, key = 'sk-ant-mock') {
  const ch = channel();
  const prepared = anthropicProvider.prepareBody('claude-messages', body, {
    channel: ch,
    model,
    upstreamModel: model,
    stream: body.stream === true,
    options,
    clientHeaders: { 'anthropic-beta': 'tools-2024-04-04' },
  });
  const request = anthropicProvider.buildRequest({
    format: 'claude-messages',
    channel: ch,
    key,
    upstreamModel: prepared.upstreamModel,
    body: JSON.stringify(prepared.body),
    stream: body.stream === true,
    options,
    clientHeaders: { 'anthropic-beta': 'tools-2024-04-04' },
  });
  return fetch(request.url, { method: request.method, headers: request.headers, body: request.body as string });
}

describe('provider against the mock Anthropic upstream', () => {
  it('sends a complete request and reads the usage of the answer', async () => {
    mock.behaviour = {
      usage: {
        input_tokens: 20,
        output_tokens: 6,
        cache_read_input_tokens: 300,
        cache_creation_1h_input_tokens: 40,
        web_search_requests: 1,
      },
    };
    const response = await send({ messages: [{ role: 'user', content: 'Hi' }] }, 'claude-sonnet-4-20250514-thinking');
    expect(response.status).toBe(200);
    const [request] = mock.requests;
    expect(request).toMatchObject({
      method: 'POST',
      path: '/v1/messages',
      headers: { 'x-api-key': 'sk-ant-mock', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'tools-2024-04-04' },
      body: {
        model: 'claude-sonnet-4-20250514',
        max_tokens: 8192,
        thinking: { type: 'enabled', budget_tokens: 6553 },
      },
    });
    const answer = (await response.json()) as { content: Array<{ type: string }> };
    expect(answer.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    expect(anthropicProvider.usageFromBody('claude-messages', answer)).toEqual({
      promptTokens: 360,
      completionTokens: 6,
      cachedTokens: 300,
      cacheCreationTokens: 40,
      cacheCreation1hTokens: 40,
      webSearchCalls: 1,
    });
  });

  it('observes a stream: text, tool calls and the final usage', async () => {
    mock.behaviour = { reply: 'Streaming along.', usage: { input_tokens: 11, output_tokens: 4 } };
    const response = await send(
      { max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi' }] },
      'claude-sonnet-4-20250514',
    );
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const parser = new SseParser();
    const observer = anthropicProvider.streamObserver('claude-messages');
    const names: string[] = [];
    for await (const chunk of response.body!) {
      for (const event of parser.push(chunk)) {
        names.push(event.event ?? '');
        observer.observe(event);
      }
    }
    expect(names).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect([observer.text, observer.toolCalls, observer.usage]).toEqual([
      'Streaming along.',
      0,
      { promptTokens: 11, completionTokens: 4 },
    ]);
  });

  it('reads the mock’s errors as Claude errors', async () => {
    mock.behaviour = { failWith: { status: 529, times: 1 } };
    const overloaded = await send({ messages: [{ role: 'user', content: 'Hi' }] }, 'claude-x');
    expect(anthropicProvider.parseError(overloaded.status, await overloaded.text())).toMatchObject({
      status: 529,
      type: 'overloaded_error',
    });
    mock.behaviour = { refuseKeys: ['sk-bad'] };
    const refused = await send({ messages: [{ role: 'user', content: 'Hi' }] }, 'claude-x', 'sk-bad');
    expect(anthropicProvider.parseError(refused.status, await refused.text())).toEqual({
      status: 401,
      message: 'invalid x-api-key',
      type: 'authentication_error',
      code: 'authentication_error',
    });
  });
});

describe('the official SDK against the mock', () => {
  const client = () => new Anthropic({ apiKey: 'sk-ant-mock', baseURL: mock.url, maxRetries: 0 });
  const tools = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: {} } }];

  it('creates messages: text, tool use, thinking, usage with cache', async () => {
    mock.behaviour = { usage: { input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 7 } };
    const text = await client().messages.create({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(text).toMatchObject({
      content: [{ type: 'text', text: 'Hello from the mock.' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 7 },
    });
    const tool = await client().messages.create({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 2000,
      messages: [{ role: 'user', content: 'Weather?' }],
      tools,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    expect(tool.content).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: 'sig_mock_thinking' },
      { type: 'tool_use', id: 'toolu_mock_1', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    expect(tool.stop_reason).toBe('tool_use');
    const none = await client().messages.create({
      model: 'm',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'Weather?' }],
      tools,
      tool_choice: { type: 'none' },
    });
    expect(none.stop_reason).toBe('end_turn');
  });

  it('streams a tool call with thinking that the SDK assembles', async () => {
    const stream = client().messages.stream({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 2000,
      messages: [{ role: 'user', content: 'Weather?' }],
      tools,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    const message = await stream.finalMessage();
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: 'sig_mock_thinking' },
      { type: 'tool_use', id: 'toolu_mock_1', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('stops at stop sequences and max_tokens, and refuses what Anthropic refuses', async () => {
    mock.behaviour = { reply: 'one two STOP three' };
    const stopped = await client().messages.create({
      model: 'm',
      max_tokens: 50,
      stop_sequences: ['STOP'],
      messages: [{ role: 'user', content: 'count' }],
    });
    expect([stopped.content, stopped.stop_reason, stopped.stop_sequence]).toEqual([
      [{ type: 'text', text: 'one two ' }],
      'stop_sequence',
      'STOP',
    ]);
    const cut = await client().messages.create({
      model: 'm',
      max_tokens: 1,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(cut.stop_reason).toBe('max_tokens');
    await expect(
      client().messages.create({
        model: 'm',
        max_tokens: 1000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 400, error: { type: 'error', error: { type: 'invalid_request_error' } } });
  });

  it('lists models in Anthropic’s shape', async () => {
    const page = await client().models.list();
    expect(page.data[0]).toMatchObject({ type: 'model', id: 'claude-sonnet-4-20250514' });
  });

  it('stops a stream at an error event', async () => {
    mock.behaviour = { streamError: { type: 'overloaded_error', message: 'Overloaded' } };
    const stream = client().messages.stream({ model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'x' }] });
    await expect(stream.finalMessage()).rejects.toThrow(/Overloaded/);
  });
});

describe('the official SDK reading converted answers', () => {
  let server: Server;
  let chunks: object[] = [];
  let whole: object = {};
  const ctx = { model: 'claude-sonnet-4', upstreamModel: 'gpt-4o', stream: true };

  beforeAll(async () => {
    // A Claude endpoint whose answers are hub answers converted by the Claude adapter.
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (!ctx.stream) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(claudeAdapter.responseFromHub(whole, ctx)));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const converter = claudeAdapter.streamFromHub(ctx);
        const events = [
          ...chunks.flatMap((chunk) => converter.push({ data: JSON.stringify(chunk) })),
          ...converter.end(),
        ];
        for (const event of events) res.write(`event: ${event.event}\ndata: ${event.data}\n\n`);
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const client = () =>
    new Anthropic({
      apiKey: 'k',
      baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      maxRetries: 0,
    });

  it('assembles a converted stream into the message the hub described', async () => {
    ctx.stream = true;
    const base = { id: 'chatcmpl-7', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o' };
    const choice = (delta: object, finish_reason: string | null = null) => ({
      ...base,
      choices: [{ index: 0, delta, finish_reason }],
    });
    chunks = [
      choice({ role: 'assistant', content: '' }),
      choice({ reasoning_content: 'Considering.' }),
      choice({ content: 'It is ' }),
      choice({ content: 'sunny.' }),
      choice({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'log', arguments: '' } }] }),
      choice({ tool_calls: [{ index: 0, function: { arguments: '{"level":' } }] }),
      choice({ tool_calls: [{ index: 0, function: { arguments: '"info"}' } }] }),
      choice({}, 'tool_calls'),
      {
        ...base,
        choices: [],
        usage: { prompt_tokens: 25, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 5 } },
      },
    ];
    const stream = client().messages.stream({ model: 'claude-sonnet-4', max_tokens: 100, messages: [] });
    const texts: string[] = [];
    stream.on('text', (text) => texts.push(text));
    const message = await stream.finalMessage();
    expect(texts).toEqual(['It is ', 'sunny.']);
    expect(message).toMatchObject({
      id: 'msg_chatcmpl-7',
      model: 'claude-sonnet-4',
      content: [
        { type: 'thinking', thinking: 'Considering.', signature: '' },
        { type: 'text', text: 'It is sunny.' },
        { type: 'tool_use', id: 'call_1', name: 'log', input: { level: 'info' } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 20, cache_read_input_tokens: 5, output_tokens: 9 },
    });
  });

  it('reads a converted whole answer', async () => {
    ctx.stream = false;
    whole = {
      id: 'chatcmpl-8',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'length' }],
      usage: { prompt_tokens: 3, completion_tokens: 2 },
    };
    const message = await client().messages.create({ model: 'claude-sonnet-4', max_tokens: 100, messages: [] });
    expect(message).toMatchObject({
      content: [{ type: 'text', text: 'Done.' }],
      stop_reason: 'max_tokens',
      usage: { input_tokens: 3, output_tokens: 2 },
    });
  });
});
