import { describe, expect, it } from 'vitest';
import { AppError } from '../../../errors.ts';
import { convertRequest, convertResponse, convertStream } from '../../convert/index.ts';
import { jsonAnswer } from '../answer.ts';
import { chunksOf, eventsOf, fakeTransport, testChannel } from '../test-support.ts';
import type { UpstreamRequest } from '../types.ts';
import { parseCozeError } from './errors.ts';
import { cozeProvider } from './index.ts';
import { sendCoze } from './poll.ts';
import { buildCozeRequest, cozeBotId, finishCozeBody } from './request.ts';
import { CozeStreamObserver } from './stream.ts';

const BOT = '7400000000000000001';
const ctx = (stream = false) => ({ model: BOT, upstreamModel: BOT, stream });

describe('Coze requests', () => {
  it('sends the user and assistant turns as additional messages, without system prompts', () => {
    const body = convertRequest(
      'openai-chat',
      'coze-chat',
      {
        model: BOT,
        messages: [
          { role: 'system', content: 'persona' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello' },
          { role: 'user', content: [{ type: 'text', text: 'More' }] },
        ],
        user: 'ada',
        conversation_id: '7411',
      },
      ctx(true),
    );
    expect(body).toEqual({
      bot_id: BOT,
      user_id: 'ada',
      additional_messages: [
        { role: 'user', content: 'Hi', content_type: 'text' },
        { role: 'assistant', content: 'Hello', content_type: 'text', type: 'answer' },
        { role: 'user', content: 'More', content_type: 'text' },
      ],
      stream: true,
      auto_save_history: true,
      conversation_id: '7411',
    });
  });

  it('sends images by URL as an object_string message', () => {
    const body = convertRequest(
      'openai-chat',
      'coze-chat',
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            ],
          },
        ],
      },
      ctx(),
    );
    expect(body.additional_messages).toEqual([
      {
        role: 'user',
        content: '[{"type":"text","text":"What is this?"},{"type":"image","file_url":"https://example.com/a.png"}]',
        content_type: 'object_string',
      },
    ]);
  });

  it('refuses tools (the bot runs its own plugins)', () => {
    expect(() =>
      convertRequest(
        'openai-chat',
        'coze-chat',
        { messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'f' } }] },
        ctx(),
      ),
    ).toThrow(AppError);
  });

  it('takes the bot from the model name when it is a bot id, else from other', () => {
    expect(cozeBotId(BOT, '')).toBe(BOT);
    expect(cozeBotId(BOT, '7499')).toBe(BOT);
    expect(cozeBotId('support-bot', '7499')).toBe('7499');
    expect(cozeBotId('support-bot', '')).toBe('support-bot');
    const prepared = cozeProvider.prepareBody(
      'coze-chat',
      { additional_messages: [] },
      {
        channel: testChannel({ type: 49, other: '7499' }),
        model: 'support-bot',
        upstreamModel: 'support-bot',
        stream: false,
        options: {} as never,
        clientHeaders: {},
        userId: 3,
      },
    );
    expect(prepared.body).toMatchObject({ bot_id: '7499', user_id: 'tollgate-user-3' });
  });

  it('names a conversation in the query string, as Coze wants it, not in the body', () => {
    const build = (json: Record<string, unknown>) =>
      buildCozeRequest({
        format: 'coze-chat',
        channel: testChannel({ type: 49 }),
        key: 'pat_x',
        upstreamModel: BOT,
        body: JSON.stringify(finishCozeBody(json)),
        json,
        stream: true,
        options: {} as never,
        clientHeaders: {},
      });
    const request = build({ bot_id: BOT, conversation_id: '74 11' });
    expect(request.url).toBe('https://api.coze.cn/v3/chat?conversation_id=74%2011');
    expect(JSON.parse(request.body as string)).toEqual({ bot_id: BOT });
    expect(request.headers.authorization).toBe('Bearer pat_x');
    // No conversation to continue: a new one, and the body as it is.
    const fresh = build({ bot_id: BOT, conversation_id: '' });
    expect(fresh.url).toBe('https://api.coze.cn/v3/chat');
    expect(JSON.parse(fresh.body as string)).toEqual({ bot_id: BOT, conversation_id: '' });
  });
});

const STREAM = [
  'event:conversation.chat.created\ndata:{"id":"c1","conversation_id":"v1","status":"created"}\n\n',
  'event:conversation.message.delta\ndata:{"chat_id":"c1","conversation_id":"v1","role":"assistant","type":"answer","content":"你好，"}\n\n',
  'event:conversation.message.delta\ndata:{"chat_id":"c1","conversation_id":"v1","role":"assistant","type":"answer","content":"world"}\n\n',
  'event:conversation.message.completed\ndata:{"chat_id":"c1","role":"assistant","type":"answer","content":"你好，world"}\n\n',
  'event:conversation.message.completed\ndata:{"chat_id":"c1","role":"assistant","type":"verbose","content":"{}"}\n\n',
  'event:conversation.chat.completed\ndata:{"id":"c1","conversation_id":"v1","status":"completed","usage":{"token_count":30,"output_count":10,"input_count":20}}\n\n',
  'event:done\ndata:"[DONE]"\n\n',
].join('');

describe('Coze streams', () => {
  it.each([1, 9, 100])('become hub chunks with the chat’s usage, cut every %i bytes', (size) => {
    const converter = convertStream('coze-chat', 'openai-chat', ctx(true))!;
    const observer = new CozeStreamObserver();
    const out = eventsOf(STREAM, size).flatMap((event) => {
      observer.observe(event);
      return converter.push(event);
    });
    const chunks = chunksOf([...out, ...converter.end()]);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('你好，world');
    expect(chunks.at(-1)).toMatchObject({ conversation_id: 'v1', usage: { prompt_tokens: 20, completion_tokens: 10 } });
    expect(observer.usage).toEqual({ promptTokens: 20, completionTokens: 10 });
    expect(observer.text).toBe('你好，world');
  });

  it('passes a failed chat on as an error chunk', () => {
    const converter = convertStream('coze-chat', 'openai-chat', ctx(true))!;
    const [event] = eventsOf(
      'event:conversation.chat.failed\ndata:{"id":"c1","status":"failed","last_error":{"code":4011,"msg":"Balance exhausted"}}\n\n',
      4,
    );
    expect(chunksOf(converter.push(event!))).toEqual([
      { error: { message: 'Balance exhausted', type: 'upstream_error', code: '4011' } },
    ]);
  });
});

describe('Coze answers and errors', () => {
  it('reads the answer messages and usage of a polled chat', () => {
    const answer = convertResponse(
      'coze-chat',
      'openai-chat',
      {
        chat: { id: 'c1', conversation_id: 'v1', status: 'completed', usage: { input_count: 8, output_count: 3 } },
        messages: [
          { role: 'assistant', type: 'function_call', content: '{}' },
          { role: 'assistant', type: 'answer', content: 'Final.' },
          { role: 'assistant', type: 'follow_up', content: 'More?' },
        ],
      },
      ctx(),
    );
    expect(answer).toMatchObject({
      id: 'chatcmpl-c1',
      conversation_id: 'v1',
      choices: [{ message: { content: 'Final.' } }],
      usage: { prompt_tokens: 8, completion_tokens: 3, total_tokens: 11 },
    });
    expect(cozeProvider.usageFromBody('coze-chat', { chat: { usage: { input_count: 8, output_count: 3 } } })).toEqual({
      promptTokens: 8,
      completionTokens: 3,
    });
  });

  it('maps Coze codes to HTTP statuses', () => {
    expect(parseCozeError(401, '{"code":4100,"msg":"authentication is invalid"}')).toEqual({
      status: 401,
      message: 'authentication is invalid',
      type: 'authentication_error',
      code: '4100',
    });
    expect(parseCozeError(200, '{"code":4013,"msg":"too many"}')).toMatchObject({ status: 429, code: '4013' });
    expect(parseCozeError(500, 'oops')).toMatchObject({ status: 500, message: 'oops', code: null });
  });
});

describe('Coze polling', () => {
  const create: UpstreamRequest = {
    url: 'https://coze.test/v3/chat',
    method: 'POST',
    headers: { authorization: 'Bearer pat_x' },
    body: '{}',
  };
  const chat = (status: string) => ({ id: 'c1', conversation_id: 'v1', status });
  const input = (transport: ReturnType<typeof fakeTransport>['transport'], signal = new AbortController().signal) => ({
    transport,
    signal,
    stream: false,
  });

  it('polls until completed, then lists the messages', async () => {
    const states = ['in_progress', 'in_progress', 'completed'];
    const { transport, sent } = fakeTransport((request) => {
      if (request.method === 'POST') return jsonAnswer(200, { code: 0, data: chat('created') });
      if (request.url.includes('/retrieve')) return jsonAnswer(200, { code: 0, data: chat(states.shift()!) });
      return jsonAnswer(200, { code: 0, data: [{ role: 'assistant', type: 'answer', content: 'ok' }] });
    });
    const response = await sendCoze(create, input(transport));
    expect(await response.body.json()).toEqual({
      chat: chat('completed'),
      messages: [{ role: 'assistant', type: 'answer', content: 'ok' }],
    });
    expect(sent.map((r) => new URL(r.url).pathname)).toEqual([
      '/v3/chat',
      '/v3/chat/retrieve',
      '/v3/chat/retrieve',
      '/v3/chat/retrieve',
      '/v3/chat/message/list',
    ]);
    expect(sent[1]!.url).toBe('https://coze.test/v3/chat/retrieve?conversation_id=v1&chat_id=c1');
    expect(sent[1]!.headers.authorization).toBe('Bearer pat_x');
  });

  it('answers an error code given with HTTP 200 as an error status', async () => {
    const { transport } = fakeTransport(() => jsonAnswer(200, { code: 4101, msg: 'no permission' }));
    const response = await sendCoze(create, input(transport));
    expect(response.status).toBe(403);
    expect(await response.body.json()).toEqual({ code: 4101, msg: 'no permission' });
  });

  it('gives up after the longest wait, and stops when the client goes away', async () => {
    const forever = () =>
      fakeTransport((request) =>
        jsonAnswer(200, { code: 0, data: chat(request.method === 'POST' ? 'created' : 'in_progress') }),
      );
    const slow = await sendCoze(create, input(forever().transport), 250);
    expect(slow.status).toBe(504);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 50);
    await expect(sendCoze(create, input(forever().transport, abort.signal))).rejects.toThrow(/abort/i);
  });
});
