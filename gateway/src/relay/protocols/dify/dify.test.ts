import { describe, expect, it } from 'vitest';
import { AppError } from '../../../errors.ts';
import { convertRequest, convertStream } from '../../convert/index.ts';
import { sseData } from '../../sse.ts';
import { jsonAnswer, providerAnswer } from '../answer.ts';
import { chunksOf, eventsOf, fakeTransport, testChannel } from '../test-support.ts';
import type { ProviderContext } from '../types.ts';
import { difyAppKind } from './app.ts';
import { sendDify } from './assemble.ts';
import { difyAdapter } from './convert/index.ts';
import { parseDifyError } from './errors.ts';
import { difyProvider } from './index.ts';
import { DifyStreamObserver } from './stream.ts';
import { difyUsage } from './usage.ts';

const ctx = (stream = false) => ({ model: 'my-app', upstreamModel: 'my-app', stream });
const context = (other: string, userId?: number): ProviderContext => ({
  channel: testChannel({ type: 37, other }),
  model: 'my-app',
  upstreamModel: 'my-app',
  stream: false,
  options: {} as never,
  clientHeaders: {},
  ...(userId === undefined ? {} : { userId }),
});

describe('Dify requests', () => {
  it('sends the last user message as the query, with the conversation and images the client gave', () => {
    const body = difyAdapter.requestFromHub(
      {
        messages: [
          { role: 'system', content: 'Be nice' },
          { role: 'user', content: 'old' },
          { role: 'assistant', content: 'reply' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in' },
              { type: 'text', text: 'this picture?' },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
            ],
          },
        ],
        metadata: { conversation_id: 'conv-1' },
        user: 'ada',
      },
      ctx(true),
    );
    expect(body).toEqual({
      inputs: {},
      query: 'What is in\nthis picture?',
      response_mode: 'streaming',
      user: 'ada',
      conversation_id: 'conv-1',
      files: [{ type: 'image', transfer_method: 'remote_url', url: 'https://example.com/cat.png' }],
    });
  });

  it('refuses tools, inline images and a request without a user message (400s, nothing sent)', () => {
    const refuse = (body: object) =>
      expect(() => convertRequest('openai-chat', 'dify-chat', body, ctx())).toThrow(AppError);
    refuse({ messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'f' } }] });
    refuse({
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } }] }],
    });
    refuse({ messages: [{ role: 'system', content: 'only a system prompt' }] });
  });

  it('finishes the body per app kind: the Tollgate user by default, agents streamed, workflows given inputs', () => {
    const chat = { inputs: {}, query: 'hi', response_mode: 'blocking', conversation_id: 'c1' };
    expect(difyProvider.prepareBody('dify-chat', chat, context('chat', 7)).body).toEqual({
      ...chat,
      user: 'tollgate-user-7',
    });
    expect(difyProvider.prepareBody('dify-chat', chat, context('agent')).body).toMatchObject({
      response_mode: 'streaming',
      user: 'tollgate',
    });
    expect(difyProvider.prepareBody('dify-chat', { ...chat, user: 'ada' }, context('workflow', 7)).body).toEqual({
      inputs: { query: 'hi' },
      response_mode: 'blocking',
      user: 'ada',
    });
  });

  it('routes by app kind, tells a body that asks for a stream, and refuses an unknown kind with a stable code', () => {
    const build = (other: string, json: Record<string, unknown> = {}) =>
      difyProvider.buildRequest({
        format: 'dify-chat',
        channel: testChannel({ type: 37, other, baseUrl: 'https://dify.example/' }),
        key: 'app-key',
        upstreamModel: 'm',
        body: JSON.stringify(json),
        json,
        stream: false,
        options: {} as never,
        clientHeaders: {},
      });
    expect(build('')).toMatchObject({
      url: 'https://dify.example/v1/chat-messages',
      headers: { authorization: 'Bearer app-key' },
    });
    expect(build('workflow').url).toBe('https://dify.example/v1/workflows/run');
    expect(build('agent', { response_mode: 'streaming' }).asksForStream).toBe(true);
    expect(build('', { response_mode: 'blocking' }).asksForStream).toBe(false);
    expect(() => difyAppKind(testChannel({ type: 37, other: 'completion' }))).toThrow(
      expect.objectContaining({ code: 'channel:other_invalid', status: 503 }),
    );
  });
});

const CHAT_STREAM = [
  'event: ping\n\n',
  'data: {"event":"message","message_id":"m1","conversation_id":"c9","answer":"Héllo "}\n\n',
  'data: {"event":"message","message_id":"m1","conversation_id":"c9","answer":"wörld"}\n\n',
  'data: {"event":"message_end","message_id":"m1","conversation_id":"c9","metadata":{"usage":{"prompt_tokens":12,"completion_tokens":4,"total_tokens":16}}}\n\n',
].join('');

describe('Dify streams', () => {
  it.each([1, 7, 64])('becomes hub chunks with the usage and conversation id, cut every %i bytes', (size) => {
    const converter = convertStream('dify-chat', 'openai-chat', ctx(true))!;
    const observer = new DifyStreamObserver();
    const out = eventsOf(CHAT_STREAM, size).flatMap((event) => {
      observer.observe(event);
      return converter.push(event);
    });
    const chunks = chunksOf([...out, ...converter.end()]);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Héllo wörld');
    expect(chunks.every((c) => c.conversation_id === 'c9' && c.id === 'chatcmpl-m1')).toBe(true);
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 });
    expect(chunks.filter((c) => c.choices[0]?.finish_reason === 'stop')).toHaveLength(1);
    expect(observer.usage).toEqual({ promptTokens: 12, completionTokens: 4 });
    expect(observer.text).toBe('Héllo wörld');
  });

  it('ends a workflow stream at workflow_finished, billing its total tokens as prompt', () => {
    const text = [
      'data: {"event":"workflow_started","workflow_run_id":"r1","data":{}}\n\n',
      'data: {"event":"text_chunk","workflow_run_id":"r1","data":{"text":"Done."}}\n\n',
      'data: {"event":"workflow_finished","workflow_run_id":"r1","data":{"outputs":{"text":"Done."},"total_tokens":33}}\n\n',
    ].join('');
    const converter = convertStream('dify-chat', 'openai-chat', ctx(true))!;
    const observer = new DifyStreamObserver();
    const chunks = chunksOf(
      eventsOf(text, 5).flatMap((event) => {
        observer.observe(event);
        return converter.push(event);
      }),
    );
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Done.');
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 33, completion_tokens: 0, total_tokens: 33 });
    expect(observer.usage).toEqual({ promptTokens: 33, completionTokens: 0 });
  });

  it('passes an error event on as an error chunk', () => {
    const converter = convertStream('dify-chat', 'openai-chat', ctx(true))!;
    const [event] = eventsOf('data: {"event":"error","status":400,"code":"quota","message":"Out of quota"}\n\n', 3);
    expect(chunksOf(converter.push(event!))).toEqual([
      { error: { message: 'Out of quota', type: 'upstream_error', code: 'quota' } },
    ]);
  });
});

describe('Dify answers', () => {
  it('reads usage of a chat message and of a workflow run', () => {
    expect(difyUsage({ answer: 'x', metadata: { usage: { prompt_tokens: 5, completion_tokens: 2 } } })).toEqual({
      promptTokens: 5,
      completionTokens: 2,
    });
    expect(difyUsage({ workflow_run_id: 'r', data: { outputs: {}, total_tokens: 9 } })).toEqual({
      promptTokens: 9,
      completionTokens: 0,
    });
    expect(difyUsage({ answer: 'x', metadata: {} })).toBeUndefined();
  });

  it('turns a workflow’s outputs into the answer text', () => {
    const answer = (outputs: unknown) =>
      difyAdapter.responseToHub({ workflow_run_id: 'r', data: { outputs, total_tokens: 1 } }, ctx()).choices[0].message
        .content;
    expect(answer({ text: 'a' })).toBe('a');
    expect(answer({ summary: 'only one' })).toBe('only one');
    expect(answer({ a: 1, b: 'two' })).toBe('{"a":1,"b":"two"}');
  });

  it('maps Dify errors', () => {
    expect(parseDifyError(401, '{"code":"unauthorized","message":"Access token is invalid","status":401}')).toEqual({
      status: 401,
      message: 'Access token is invalid',
      type: 'authentication_error',
      code: 'unauthorized',
    });
    expect(parseDifyError(502, '<html>bad gateway</html>')).toMatchObject({
      status: 502,
      message: '<html>bad gateway</html>',
    });
  });

  it('assembles an agent app’s stream into one blocking answer, or its error', async () => {
    const request = {
      url: 'https://d/v1/chat-messages',
      method: 'POST' as const,
      headers: {},
      body: '{"response_mode":"streaming"}',
      asksForStream: true,
    };
    const input = (events: string[]) => ({
      transport: fakeTransport(() =>
        providerAnswer(200, 'text/event-stream', Buffer.from(events.map((data) => sseData(data)).join(''))),
      ).transport,
      signal: new AbortController().signal,
      stream: false,
    });
    const ok = await sendDify(
      request,
      input([
        '{"event":"agent_thought","message_id":"m2","conversation_id":"c2","thought":"thinking"}',
        '{"event":"agent_message","message_id":"m2","conversation_id":"c2","answer":"Agent "}',
        '{"event":"agent_message","message_id":"m2","conversation_id":"c2","answer":"done"}',
        '{"event":"message_replace","message_id":"m2","conversation_id":"c2","answer":"[moderated]"}',
        '{"event":"message_end","message_id":"m2","conversation_id":"c2","metadata":{"usage":{"prompt_tokens":3,"completion_tokens":2}}}',
      ]),
    );
    expect(await ok.body.json()).toMatchObject({
      answer: '[moderated]',
      conversation_id: 'c2',
      id: 'm2',
      metadata: { usage: { prompt_tokens: 3 } },
    });
    const failed = await sendDify(
      request,
      input(['{"event":"error","status":429,"code":"rate_limit","message":"slow down"}']),
    );
    expect(failed.status).toBe(429);
    expect(await failed.body.json()).toEqual({ code: 'rate_limit', message: 'slow down', status: 429 });
    // A chat app's blocking call goes out as it is.
    const plain = fakeTransport(() => jsonAnswer(200, { answer: 'x' }));
    await sendDify(
      { ...request, body: '{"response_mode":"blocking"}', asksForStream: false },
      { ...input([]), transport: plain.transport },
    );
    expect(plain.sent).toHaveLength(1);
  });

  it('answers a failed workflow run as an error, in whole answers and streams', async () => {
    const request = {
      url: 'https://d/v1/workflows/run',
      method: 'POST' as const,
      headers: {},
      body: '{"response_mode":"blocking"}',
    };
    const run = { workflow_run_id: 'r1', data: { status: 'failed', error: 'node LLM timed out', outputs: null } };
    const { transport } = fakeTransport(() => jsonAnswer(200, run));
    const failed = await sendDify(request, { transport, signal: new AbortController().signal, stream: false });
    expect(failed.status).toBe(502);
    expect(parseDifyError(failed.status, await failed.body.text())).toMatchObject({
      message: 'the Dify workflow failed: node LLM timed out',
      code: 'workflow_failed',
    });
    const ok = fakeTransport(() => jsonAnswer(200, { ...run, data: { status: 'succeeded', outputs: { text: 'x' } } }));
    const passed = await sendDify(request, {
      transport: ok.transport,
      signal: new AbortController().signal,
      stream: false,
    });
    expect(await passed.body.json()).toMatchObject({ data: { status: 'succeeded' } });
    const converter = convertStream('dify-chat', 'openai-chat', ctx(true))!;
    const [event] = eventsOf(`data: ${JSON.stringify({ event: 'workflow_finished', ...run })}\n\n`, 9);
    expect(chunksOf(converter.push(event!))).toEqual([
      {
        error: {
          message: 'the Dify workflow failed: node LLM timed out',
          type: 'upstream_error',
          code: 'workflow_failed',
        },
      },
    ]);
  });
});
