import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WebSocket } from 'ws';
import { realtimeSubprotocolKey } from '../auth/key-auth.ts';
import type { ChannelSnapshot } from '../types.ts';
import { closeReason, errorEvent, relayFrames, sendableCloseCode, watchLiveness } from './frames.ts';
import { realtimeTarget, servesRealtime, wantsBeta } from './upstream.ts';
import { addUsage, realtimeUsage } from './usage.ts';

const channel = (over: Partial<ChannelSnapshot>): ChannelSnapshot =>
  ({
    id: 1,
    type: 1,
    name: 'c',
    baseUrl: '',
    keys: ['k'],
    other: '',
    openaiOrganization: null,
    ...over,
  }) as ChannelSnapshot;

describe('realtime usage', () => {
  it('splits a response.done usage into disjoint billed parts', () => {
    const usage = realtimeUsage({
      total_tokens: 470,
      input_tokens: 420,
      output_tokens: 50,
      input_token_details: {
        text_tokens: 120,
        audio_tokens: 300,
        cached_tokens: 100,
        cached_tokens_details: { text_tokens: 40, audio_tokens: 60 },
      },
      output_token_details: { text_tokens: 10, audio_tokens: 40 },
    });
    // Cached audio is priced as cache, not audio too: 300 − 60 uncached audio tokens.
    expect(usage).toEqual({
      promptTokens: 420,
      completionTokens: 50,
      cachedTokens: 100,
      audioInputTokens: 240,
      imageInputTokens: 0,
      audioOutputTokens: 40,
    });
    expect(realtimeUsage(null)).toBeUndefined();
    expect(realtimeUsage({ input_tokens: -3, output_tokens: 'x' })).toMatchObject({
      promptTokens: 0,
      completionTokens: 0,
    });
  });

  it('adds usages up for the session log', () => {
    const one = { promptTokens: 10, completionTokens: 5, cachedTokens: 2, audioInputTokens: 3, audioOutputTokens: 4 };
    expect(addUsage(addUsage({ promptTokens: 0, completionTokens: 0 }, one), one)).toEqual({
      promptTokens: 20,
      completionTokens: 10,
      cachedTokens: 4,
      audioInputTokens: 6,
      imageInputTokens: 0,
      audioOutputTokens: 8,
    });
  });
});

describe('realtime upstream', () => {
  it('dials OpenAI with a bearer key, and the beta protocol only when asked', () => {
    expect(realtimeTarget(channel({}), 'sk-up', 'gpt-realtime', false)).toEqual({
      url: 'wss://api.openai.com/v1/realtime?model=gpt-realtime',
      headers: { authorization: 'Bearer sk-up' },
    });
    const beta = realtimeTarget(
      channel({ baseUrl: 'http://127.0.0.1:9/', openaiOrganization: 'org-1' }),
      'k',
      'm',
      true,
    );
    expect(beta).toEqual({
      url: 'ws://127.0.0.1:9/v1/realtime?model=m',
      headers: { authorization: 'Bearer k', 'openai-beta': 'realtime=v1', 'openai-organization': 'org-1' },
    });
  });

  it('dials Azure by deployment and api-version with api-key', () => {
    const azure = realtimeTarget(
      channel({ type: 3, baseUrl: 'https://res.openai.azure.com', other: '2024-10-01-preview' }),
      'az',
      'gpt-4.1-realtime',
      false,
    );
    expect(azure).toEqual({
      url: 'wss://res.openai.azure.com/openai/realtime?api-version=2024-10-01-preview&deployment=gpt-41-realtime',
      headers: { 'api-key': 'az' },
    });
    expect(realtimeTarget(channel({ type: 3, baseUrl: 'https://r' }), 'az', 'm', false).url).toBe(
      'wss://r/openai/realtime?api-version=2025-04-01-preview&deployment=m',
    );
  });

  it('dials Azure’s GA v1 endpoint by model when the API version is v1 (or latest / preview)', () => {
    for (const other of ['v1', ' V1 ', 'latest', 'preview']) {
      expect(
        realtimeTarget(
          channel({ type: 3, baseUrl: 'https://res.openai.azure.com/', other }),
          'az',
          'gpt-realtime',
          true,
        ),
      ).toEqual({
        url: 'wss://res.openai.azure.com/openai/v1/realtime?model=gpt-realtime',
        headers: { 'api-key': 'az', 'openai-beta': 'realtime=v1' },
      });
    }
  });

  it('is served by the types whose registry entry offers it: OpenAI and Azure', () => {
    expect([1, 3, 8, 14, 24].map(servesRealtime)).toEqual([true, true, false, false, false]);
  });

  it('knows a beta client by its header or its subprotocol', () => {
    expect(wantsBeta({ 'openai-beta': 'realtime=v1' })).toBe(true);
    expect(wantsBeta({ 'sec-websocket-protocol': 'realtime, openai-beta.realtime-v1' })).toBe(true);
    expect(wantsBeta({ 'sec-websocket-protocol': 'realtime' })).toBe(false);
  });
});

describe('realtime frames', () => {
  it('reads the key from the browser subprotocol list', () => {
    expect(realtimeSubprotocolKey('realtime, openai-insecure-api-key.sk-abc, openai-beta.realtime-v1')).toBe('sk-abc');
    expect(realtimeSubprotocolKey(['realtime', 'openai-insecure-api-key.xyz'])).toBe('xyz');
    expect(realtimeSubprotocolKey('realtime, openai-insecure-api-key.')).toBeUndefined();
    expect(realtimeSubprotocolKey(undefined)).toBeUndefined();
  });

  it('passes on only close codes one may send, and reasons that fit a close frame', () => {
    expect([1000, 1001, 1008, 1011, 4000].map(sendableCloseCode)).toEqual([1000, 1001, 1008, 1011, 4000]);
    expect([1005, 1006, 1015, 999, 2000].map(sendableCloseCode)).toEqual([1000, 1000, 1000, 1000, 1000]);
    expect(Buffer.byteLength(closeReason('é'.repeat(100)))).toBeLessThanOrEqual(123);
  });

  it('shapes error events as OpenAI does', () => {
    expect(errorEvent('insufficient_quota', 'insufficient_quota', 'out')).toEqual({
      type: 'error',
      event_id: expect.stringMatching(/^event_\w{22}$/),
      error: { type: 'insufficient_quota', code: 'insufficient_quota', message: 'out', param: null, event_id: null },
    });
  });
});

/** A socket as relayFrames uses it: frames sent are held until `flush` calls their callbacks. */
class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  isPaused = false;
  sent: Array<{ data: Buffer; binary: boolean; done: () => void }> = [];
  pause() {
    this.isPaused = true;
  }
  resume() {
    this.isPaused = false;
  }
  pings = 0;
  ping() {
    this.pings += 1;
  }
  send(data: Buffer, options: { binary: boolean }, done: () => void) {
    this.sent.push({ data, binary: options.binary, done });
  }
  flush() {
    for (const frame of this.sent.splice(0)) frame.done();
  }
}

describe('relayFrames', () => {
  it('passes each frame on at once, text as text and binary as binary, then lets it be inspected', () => {
    const from = new FakeSocket();
    const to = new FakeSocket();
    const inspected: string[] = [];
    relayFrames(from as unknown as WebSocket, to as unknown as WebSocket, (data) => inspected.push(String(data)));
    from.emit('message', Buffer.from('{"type":"a"}'), false);
    from.emit('message', [Buffer.from([1, 2]), Buffer.from([3])], true);
    expect(to.sent.map((f) => [f.data, f.binary])).toEqual([
      [Buffer.from('{"type":"a"}'), false],
      [Buffer.from([1, 2, 3]), true],
    ]);
    expect(inspected).toHaveLength(2);
  });

  it('stops reading the sender while the receiver has a megabyte queued, and reads again once it drains', () => {
    const from = new FakeSocket();
    const to = new FakeSocket();
    relayFrames(from as unknown as WebSocket, to as unknown as WebSocket);
    const chunk = Buffer.alloc(300_000);
    for (let i = 0; i < 3; i++) from.emit('message', chunk, true);
    expect(from.isPaused).toBe(false);
    from.emit('message', chunk, true);
    expect(from.isPaused).toBe(true);
    expect(to.sent).toHaveLength(4);
    to.flush();
    expect(from.isPaused).toBe(false);
  });

  it('drops frames for a receiver that is no longer open, but still lets them be inspected', () => {
    const from = new FakeSocket();
    const to = new FakeSocket();
    to.readyState = 2;
    const inspected: string[] = [];
    relayFrames(from as unknown as WebSocket, to as unknown as WebSocket, (data) => inspected.push(String(data)));
    from.emit('message', Buffer.from('x'), false);
    expect(to.sent).toEqual([]);
    expect(inspected).toEqual(['x']);
  });

  it('holds the frames after one a rewrite decides later, and passes them on in order once it has', async () => {
    const from = new FakeSocket();
    const to = new FakeSocket();
    let admit: (frame: Buffer | undefined) => void = () => {};
    relayFrames(from as unknown as WebSocket, to as unknown as WebSocket, undefined, (data) =>
      String(data) === 'turn' ? new Promise<Buffer | undefined>((resolve) => (admit = resolve)) : data,
    );
    from.emit('message', Buffer.from('a'), false);
    from.emit('message', Buffer.from('turn'), false);
    from.emit('message', Buffer.from('b'), false);
    expect(to.sent.map((f) => String(f.data))).toEqual(['a']);
    admit(Buffer.from('turn'));
    await vi.waitFor(() => expect(to.sent.map((f) => String(f.data))).toEqual(['a', 'turn', 'b']));
    // A refused one is dropped, the frames behind it still passed on.
    from.emit('message', Buffer.from('turn'), false);
    from.emit('message', Buffer.from('c'), false);
    admit(undefined);
    await vi.waitFor(() => expect(to.sent.map((f) => String(f.data))).toEqual(['a', 'turn', 'b', 'c']));
    from.emit('message', Buffer.from('d'), false);
    expect(to.sent.map((f) => String(f.data)).at(-1)).toBe('d');
  });
});

describe('watchLiveness', () => {
  afterEach(() => vi.useRealTimers());

  it('pings a quiet peer, keeps one that answers, and reports one silent for the whole wait dead, once', () => {
    vi.useFakeTimers();
    const socket = new FakeSocket();
    let dead = 0;
    watchLiveness(socket as unknown as WebSocket, 10_000, () => dead++);
    vi.advanceTimersByTime(5_000);
    expect(socket.pings).toBe(1);
    socket.emit('pong');
    vi.advanceTimersByTime(5_000);
    socket.emit('message', Buffer.from('{}'), false);
    vi.advanceTimersByTime(5_000);
    expect([socket.pings, dead]).toEqual([3, 0]);
    vi.advanceTimersByTime(10_000);
    expect(dead).toBe(1);
    vi.advanceTimersByTime(60_000);
    expect([socket.pings, dead]).toEqual([3, 1]);
  });
});
