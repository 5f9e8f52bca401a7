import { describe, expect, it } from 'vitest';
import { AppError } from '../../../errors.ts';
import { convertRequest, convertResponse, convertStream } from '../../convert/index.ts';
import { jsonAnswer, providerAnswer } from '../answer.ts';
import { chunksOf, eventsOf, fakeTransport, testChannel } from '../test-support.ts';
import type { UpstreamRequest } from '../types.ts';
import { parseReplicateError } from './errors.ts';
import { replicateProvider } from './index.ts';
import { buildReplicateRequest, parseModelRef } from './request.ts';
import { sendReplicate } from './send.ts';
import { ReplicateStreamObserver } from './stream.ts';

const LLAMA = 'meta/meta-llama-3-8b-instruct';
const ctx = (upstreamModel = LLAMA, stream = false) => ({ model: upstreamModel, upstreamModel, stream });

describe('Replicate requests', () => {
  it('parses model references, with and without a version', () => {
    expect(parseModelRef(LLAMA)).toEqual({ owner: 'meta', name: 'meta-llama-3-8b-instruct' });
    expect(parseModelRef(`a/b:${'f'.repeat(64)}`)).toEqual({ owner: 'a', name: 'b', version: 'f'.repeat(64) });
    expect(() => parseModelRef('gpt-4o')).toThrow(/not a Replicate model/);
  });

  it('sends one user turn as the prompt, a conversation as a transcript, with the sampling settings', () => {
    const single = convertRequest(
      'openai-chat',
      'replicate-chat',
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
        max_tokens: 10,
        temperature: 0.2,
        stop: ['END', 'STOP'],
      },
      ctx(LLAMA, true),
    );
    expect(single).toEqual({
      input: { prompt: 'Hi', system_prompt: 'Be brief.', max_tokens: 10, temperature: 0.2, stop_sequences: 'END,STOP' },
      stream: true,
    });
    const turns = convertRequest(
      'openai-chat',
      'replicate-chat',
      {
        messages: [
          { role: 'user', content: 'A' },
          { role: 'assistant', content: 'B' },
          { role: 'user', content: 'C' },
        ],
      },
      ctx(`x/y:${'0'.repeat(64)}`),
    );
    expect(turns).toEqual({ version: '0'.repeat(64), input: { prompt: 'User: A\nAssistant: B\nUser: C\nAssistant:' } });
  });

  it('refuses tools, images in chat, a model that is not owner/name, and b64 images (400s)', () => {
    const user = { messages: [{ role: 'user', content: 'x' }] };
    expect(() =>
      convertRequest('openai-chat', 'replicate-chat', { ...user, tools: [{ type: 'function' }] }, ctx()),
    ).toThrow(AppError);
    expect(() => convertRequest('openai-chat', 'replicate-chat', user, ctx('llama'))).toThrow(AppError);
    const picture = [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }];
    expect(() =>
      convertRequest('openai-chat', 'replicate-chat', { messages: [{ role: 'user', content: picture }] }, ctx()),
    ).toThrow(AppError);
    expect(() =>
      convertRequest('openai-images', 'replicate-images', { prompt: 'x', response_format: 'b64_json' }, ctx('a/b')),
    ).toThrow(AppError);
  });

  it('asks an image model for the images and aspect ratio an OpenAI client asked for', () => {
    expect(
      convertRequest('openai-images', 'replicate-images', { prompt: 'a cat', n: 3, size: '1024x1792' }, ctx('a/b')),
    ).toEqual({ input: { prompt: 'a cat', num_outputs: 3, aspect_ratio: '9:16' } });
    expect(
      convertResponse(
        'replicate-images',
        'openai-images',
        { output: ['https://r/1.webp', 'https://r/2.webp'] },
        ctx('a/b'),
      ).data,
    ).toEqual([{ url: 'https://r/1.webp' }, { url: 'https://r/2.webp' }]);
    expect(replicateProvider.nativeFormat('openai-images')).toBe('replicate-images');
    expect(replicateProvider.nativeFormat('claude-messages')).toBe('replicate-chat');
    expect(replicateProvider.nativeFormat('openai-embeddings')).toBeUndefined();
  });

  it('builds the model’s predictions URL, waiting only for whole answers', () => {
    const build = (model: string, stream: boolean) =>
      buildReplicateRequest({
        format: 'replicate-chat',
        channel: testChannel({ type: 56 }),
        key: 'r8_x',
        upstreamModel: model,
        body: '{}',
        stream,
        options: {} as never,
        clientHeaders: {},
      });
    expect(build(LLAMA, false)).toMatchObject({
      url: `https://api.replicate.com/v1/models/${LLAMA}/predictions`,
      headers: { authorization: 'Bearer r8_x', prefer: 'wait' },
    });
    expect(build(LLAMA, true).headers.prefer).toBeUndefined();
    expect(build(`a/b:${'1'.repeat(64)}`, false).url).toBe('https://api.replicate.com/v1/predictions');
  });
});

const STREAM = [
  'event: output\nid: 1\ndata: Héllo\n\n',
  'event: output\nid: 2\ndata:  there\ndata: \n\n',
  'event: output\nid: 3\ndata: next line\n\n',
  'event: done\ndata: {}\n\n',
  '\nevent: prediction\ndata: {"id":"p1","status":"succeeded","metrics":{"input_token_count":14,"output_token_count":3}}\n\n',
].join('');

describe('Replicate streams', () => {
  it.each([1, 6, 200])('become hub chunks with the prediction’s metrics, cut every %i bytes', (size) => {
    const converter = convertStream('replicate-chat', 'openai-chat', ctx(LLAMA, true))!;
    const observer = new ReplicateStreamObserver();
    const out = eventsOf(STREAM, size).flatMap((event) => {
      observer.observe(event);
      return converter.push(event);
    });
    const chunks = chunksOf([...out, ...converter.end()]);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Héllo there\nnext line');
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 14, completion_tokens: 3, total_tokens: 17 });
    expect(observer.usage).toEqual({ promptTokens: 14, completionTokens: 3 });
    expect(observer.text).toBe('Héllo there\nnext line');
  });

  it('passes an error event on as an error chunk', () => {
    const converter = convertStream('replicate-chat', 'openai-chat', ctx(LLAMA, true))!;
    const [event] = eventsOf('event: error\ndata: {"detail":"CUDA out of memory"}\n\n', 5);
    expect(chunksOf(converter.push(event!))).toEqual([
      { error: { message: 'CUDA out of memory', type: 'upstream_error', code: 'prediction_failed' } },
    ]);
  });
});

describe('Replicate exchanges', () => {
  const create: UpstreamRequest = {
    url: `https://rep.test/v1/models/${LLAMA}/predictions`,
    method: 'POST',
    headers: { authorization: 'Bearer r8_x' },
    body: '{}',
  };
  const urls = { get: 'https://rep.test/v1/predictions/p1', stream: 'https://stream.rep.test/v1/files/p1' };
  const signal = new AbortController().signal;

  it('follows the stream URL and appends the finished prediction', async () => {
    const { transport, sent } = fakeTransport((request) => {
      if (request.method === 'POST') return jsonAnswer(201, { id: 'p1', status: 'starting', urls });
      if (request.url === urls.stream) {
        return providerAnswer(
          200,
          'text/event-stream',
          Buffer.from('event: output\ndata: Hi\n\nevent: done\ndata: {}\n\n'),
        );
      }
      return jsonAnswer(200, {
        id: 'p1',
        status: 'succeeded',
        metrics: { input_token_count: 4, output_token_count: 1 },
      });
    });
    const response = await sendReplicate(create, { transport, signal, stream: true });
    const events = eventsOf(await response.body.text(), 1000);
    expect(events.map((e) => e.event)).toEqual(['output', 'done', 'prediction']);
    expect(JSON.parse(events[2]!.data).metrics).toEqual({ input_token_count: 4, output_token_count: 1 });
    expect(sent[1]!.headers.accept).toBe('text/event-stream');
  });

  it('polls a prediction Replicate’s wait did not finish, and answers a failed one as an error', async () => {
    const states = ['processing', 'succeeded'];
    const polled = fakeTransport((request) =>
      request.method === 'POST'
        ? jsonAnswer(201, { id: 'p1', status: 'processing', urls })
        : jsonAnswer(200, {
            id: 'p1',
            status: states.shift() ?? 'succeeded',
            output: ['a', 'b'],
            metrics: { input_token_count: 2, output_token_count: 2 },
          }),
    );
    const done = await sendReplicate(create, { transport: polled.transport, signal, stream: false });
    expect(await done.body.json()).toMatchObject({ status: 'succeeded', output: ['a', 'b'] });
    const failed = fakeTransport(() => jsonAnswer(201, { id: 'p2', status: 'failed', error: 'bad input', urls }));
    const answer = await sendReplicate(create, { transport: failed.transport, signal, stream: false });
    expect(answer.status).toBe(502);
    expect(parseReplicateError(answer.status, await answer.body.text())).toMatchObject({
      message: 'prediction failed: bad input',
      code: 'prediction_failed',
    });
  });

  it('gives up on a prediction that never finishes', async () => {
    const { transport } = fakeTransport(() => jsonAnswer(201, { id: 'p1', status: 'processing', urls }));
    expect((await sendReplicate(create, { transport, signal, stream: false }, 200)).status).toBe(504);
  });

  it('maps Replicate problems', () => {
    expect(
      parseReplicateError(
        401,
        '{"title":"Unauthenticated","detail":"You did not pass a valid authentication token","status":401}',
      ),
    ).toEqual({
      status: 401,
      message: 'You did not pass a valid authentication token',
      type: 'authentication_error',
      code: 'unauthenticated',
    });
  });
});
