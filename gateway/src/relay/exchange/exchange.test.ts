import { Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OPTION_DEFINITIONS, type OptionsService } from '../../domain/options/index.ts';
import type { StreamBudget } from '../overrun/guard.ts';
import { providerAnswer } from '../protocols/answer.ts';
import { fakeTransport, testChannel } from '../protocols/test-support.ts';
import { type SseEvent, sseData, sseFrames } from '../sse.ts';
import type { ChannelSnapshot } from '../types.ts';
import { Exchange, type ExchangeSpec } from './exchange.ts';
import { UpstreamFailure } from './failure.ts';
import { prepareUpstream, upstreamTarget } from './prepare.ts';
import type { ClientSink } from './sink.ts';
import { STREAM_ENDINGS } from './stream-ending.ts';

/** The options service's getters over the defined defaults. */
const options = (() => {
  const all = new Map<string, string>(OPTION_DEFINITIONS.map((d) => [d.key, d.default]));
  const get = (key: string) => all.get(key) ?? '';
  return {
    get,
    getBoolean: (key: string) => get(key) === 'true',
    getNumber: (key: string) => Number(get(key)),
    getJson: (key: string) => JSON.parse(get(key) || 'null'),
  } as unknown as OptionsService;
})();

/** A client that takes everything: what it was sent, as the bytes a socket would carry. */
function recordingSink() {
  const written: string[] = [];
  const events: SseEvent[] = [];
  /** Upstream chunks written as they came. */
  const passedChunks: Uint8Array[] = [];
  let status: number | undefined;
  const sink: ClientSink = {
    answer: async (code, _type, body) => {
      status = code;
      written.push(Buffer.from(body).toString('utf8'));
    },
    open: () => {
      status = 200;
    },
    write: (batch, bytes) => {
      events.push(...batch);
      written.push(bytes ? Buffer.from(bytes).toString('utf8') : sseFrames(batch));
      if (bytes) passedChunks.push(bytes);
      return true;
    },
    drained: async () => {},
    ping: () => {},
    end: () => {},
    destroy: () => {},
    onGone: () => () => {},
    get started() {
      return status !== undefined;
    },
  };
  return { sink, written, events, passedChunks, status: () => status };
}

/** An exchange of an OpenAI chat request with `channel`, whose upstream answers `answer`. */
function exchangeWith(
  channel: ChannelSnapshot,
  answer: () => ReturnType<typeof providerAnswer>,
  client: { stream: boolean; wantsStreamUsage?: boolean },
  budget?: StreamBudget,
): Exchange {
  const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: client.stream };
  const input = {
    channel,
    key: 'k',
    format: 'openai-chat' as const,
    body,
    model: 'm',
    stream: client.stream,
    options,
    clientHeaders: {},
    requestPath: '/v1/chat/completions',
    retryIndex: 0,
  };
  const prepared = prepareUpstream(upstreamTarget(channel, 'openai-chat', 'm', options), input);
  const spec: ExchangeSpec = {
    channel,
    keyIndex: 0,
    key: 'k',
    prepared,
    transport: fakeTransport(answer).transport,
    startedMs: Date.now(),
    client: {
      format: 'openai-chat',
      model: 'm',
      stream: client.stream,
      wantsStreamUsage: client.wantsStreamUsage ?? true,
      pingIntervalMs: 0,
      promptEstimate: () => 1,
    },
    budget,
  };
  return new Exchange(spec);
}

const sse = (text: string) => providerAnswer(200, 'text/event-stream', Readable.from([Buffer.from(text)]));

afterEach(() => {
  vi.restoreAllMocks();
});

describe('Exchange', () => {
  it('parses each upstream stream event once for metering, conversion and the usage-chunk check', async () => {
    const claude = [
      ['message_start', { type: 'message_start', message: { id: 'msg_1', usage: { input_tokens: 12 } } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }],
      ['message_stop', { type: 'message_stop' }],
    ] as const;
    const text = claude.map(([name, data]) => sseData(JSON.stringify(data), name)).join('');
    const channel = testChannel({ type: 14, baseUrl: 'https://claude.test' });
    // The client declined the usage chunk: each converted event is checked for being one.
    const exchange = exchangeWith(channel, () => sse(text), { stream: true, wantsStreamUsage: false });
    const client = recordingSink();

    const parse = vi.spyOn(JSON, 'parse');
    const outcome = await exchange.run(client.sink);
    const parses = parse.mock.calls.length;
    parse.mockRestore();

    expect(parses).toBe(claude.length);
    expect(outcome.usage).toMatchObject({ promptTokens: 12, completionTokens: 3 });
    expect(outcome.text()).toBe('Hello');
    const chunks = client.events.filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data));
    expect(chunks.map((c) => c.choices?.[0]?.delta?.content).join('')).toBe('Hello');
    expect(chunks.some((c) => Array.isArray(c.choices) && c.choices.length === 0)).toBe(false);
    expect(client.events.at(-1)?.data).toBe('[DONE]');
  });

  it('cuts a stream where its quota check refuses: the rest of the chunk stays back, the client gets the error', async () => {
    const chunk = (content: string) =>
      JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] });
    // One upstream chunk of four events; the check refuses the second (after a top-up it waited for).
    const events = ['one', 'two', 'three', 'four'].map((word) => `data: ${chunk(word)}\n\n`).join('');
    const seen: string[] = [];
    const budget: StreamBudget = {
      follow: (observer) => (event) => {
        seen.push(event.data);
        return seen.length === 2 ? Promise.resolve(observer.text !== 'onetwo') : true;
      },
    };
    const channel = testChannel({ type: 1, baseUrl: 'https://openai.test' });
    const exchange = exchangeWith(channel, () => sse(`${events}data: [DONE]\n\n`), { stream: true }, budget);
    const client = recordingSink();

    const outcome = await exchange.run(client.sink);

    expect(outcome).toMatchObject({ ending: 'quota_exhausted', clientGone: false });
    expect(seen).toHaveLength(2);
    expect(outcome.text()).toBe('onetwo');
    expect(client.written.join('')).toBe(
      `data: ${chunk('one')}\n\ndata: ${chunk('two')}\n\n` +
        `data: {"error":{"message":"${STREAM_ENDINGS.quota_exhausted.message}","type":"insufficient_quota","param":null,"code":"quota_exhausted"}}\n\n` +
        'data: [DONE]\n\n',
    );
  });

  it("passes a same-format stream through as the upstream's own bytes, parsing only its usage event", async () => {
    const chunk = (content: string) =>
      JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] });
    const usage = JSON.stringify({
      id: 'c1',
      object: 'chat.completion.chunk',
      choices: [],
      usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 },
    });
    // Framed unlike Tollgate would frame them: no space after `data:`, CRLF line ends.
    const events = [chunk('Hi'), chunk(' there'), usage].map((data) => `data:${data}\r\n\r\n`).join('');
    const channel = testChannel({ type: 1, baseUrl: 'https://openai.test' });
    const exchange = exchangeWith(channel, () => sse(`${events}data: [DONE]\n\n`), { stream: true });
    const client = recordingSink();

    const parse = vi.spyOn(JSON, 'parse');
    const outcome = await exchange.run(client.sink);
    const parses = parse.mock.calls.length;
    parse.mockRestore();

    expect(client.written.join('')).toBe(`${events}data: [DONE]\n\n`);
    // Only the usage event: the content events' text is read only if the upstream reports no usage.
    expect(parses).toBe(1);
    expect(outcome.usage).toMatchObject({ promptTokens: 4, completionTokens: 2 });
    expect(outcome.text()).toBe('Hi there');
  });

  it('writes the events of one upstream chunk to the client in one write', async () => {
    const chunk = (content: string) =>
      sseData(
        JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] }),
      );
    const usage = sseData(
      JSON.stringify({
        id: 'c1',
        object: 'chat.completion.chunk',
        choices: [],
        usage: { prompt_tokens: 4, completion_tokens: 3 },
      }),
    );
    const first = Buffer.from(chunk('a') + chunk('b') + chunk('c'));
    const second = Buffer.from(`${usage}data: [DONE]\n\n`);
    const channel = testChannel({ type: 1, baseUrl: 'https://openai.test' });
    const upstream = () => providerAnswer(200, 'text/event-stream', Readable.from([first, second]));
    const client = recordingSink();

    await exchangeWith(channel, upstream, { stream: true }).run(client.sink);

    // One write per upstream chunk (the [DONE] held back: none of the second's own), then the closing one.
    expect(client.written).toEqual([first.toString(), usage, 'data: [DONE]\n\n']);
    // The first chunk passed through unchanged: it went out as it came, not re-encoded.
    expect(client.passedChunks).toHaveLength(1);
    expect(client.passedChunks[0]).toBe(first);
  });

  it('writes the frames, not the chunk, when a chunk is not whole events', async () => {
    const usage = '{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}';
    const text = `${sseData('{"choices":[{"delta":{"content":"a"}}]}')}: keep-alive\n\n${sseData(usage)}`;
    const cut = text.indexOf('content');
    const chunks = [text.slice(0, cut), text.slice(cut), 'data: [DONE]\n\n'].map((part) => Buffer.from(part));
    const channel = testChannel({ type: 1, baseUrl: 'https://openai.test' });
    const upstream = () => providerAnswer(200, 'text/event-stream', Readable.from(chunks));
    const client = recordingSink();

    await exchangeWith(channel, upstream, { stream: true }).run(client.sink);

    // The first chunk ends inside an event, the second starts inside one and holds a comment.
    expect(client.passedChunks).toEqual([]);
    expect(client.written.join('')).toBe(
      `${sseData('{"choices":[{"delta":{"content":"a"}}]}')}${sseData(usage)}data: [DONE]\n\n`,
    );
  });

  it("maps an error answer's status through the channel's status_code_mapping, writing nothing", async () => {
    const channel = testChannel({ type: 1, baseUrl: 'https://openai.test', statusCodeMapping: { '429': '503' } });
    const exchange = exchangeWith(
      channel,
      () => providerAnswer(429, 'application/json', Buffer.from(JSON.stringify({ error: { message: 'slow down' } }))),
      { stream: false },
    );
    const client = recordingSink();
    const failure = await exchange.run(client.sink).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UpstreamFailure);
    expect((failure as UpstreamFailure).error).toMatchObject({ status: 503, message: 'slow down' });
    expect(client.sink.started).toBe(false);
  });

  it('answers a whole answer in the upstream format as it came, converted only when the formats differ', async () => {
    const answer = { id: 'c1', object: 'chat.completion', choices: [{ message: { content: 'ok' } }] };
    const channel = testChannel({ type: 1, baseUrl: 'https://openai.test' });
    const exchange = exchangeWith(
      channel,
      () => providerAnswer(200, 'application/json', Buffer.from(JSON.stringify(answer))),
      { stream: false },
    );
    const client = recordingSink();
    const outcome = await exchange.run(client.sink);
    expect(client.status()).toBe(200);
    expect(client.written).toEqual([JSON.stringify(answer)]);
    expect(outcome.usage).toBeUndefined();
    expect(outcome.text()).toBe('ok');
  });
});
