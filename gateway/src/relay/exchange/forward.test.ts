import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { SseParser, sseFrames } from '../sse.ts';
import { forwardStream } from './forward.ts';
import type { ClientSink } from './sink.ts';

const CHUNKS = 12;
const chunkText = (i: number) => `data: {"i":${i},"pad":"${'x'.repeat(i)}"}\n\n`;

/** An upstream that makes each chunk only when it is asked for the next: `pulled` is how far it was read. */
function lazyUpstream() {
  const state = { pulled: 0 };
  async function* chunks() {
    for (let i = 0; i < CHUNKS; i++) {
      state.pulled++;
      yield Buffer.from(chunkText(i));
    }
  }
  return { state, stream: chunks() as unknown as Readable };
}

/**
 * A client whose socket is full until `resume()`: every write reports backpressure while paused.
 * `stalled` resolves when the forwarder waits for it to drain.
 */
function pausedClient() {
  const received: Buffer[] = [];
  let paused = true;
  let release: () => void = () => {};
  let onStall: () => void = () => {};
  let stalled = new Promise<void>((resolve) => {
    onStall = resolve;
  });
  const sink: ClientSink = {
    answer: async () => {},
    open: () => {},
    write: (events, bytes) => {
      received.push(Buffer.from(bytes ?? sseFrames(events)));
      return !paused;
    },
    drained: () => {
      const waiting = new Promise<void>((resolve) => {
        release = resolve;
      });
      onStall();
      return waiting;
    },
    ping: () => {},
    end: () => {},
    destroy: () => {},
    onGone: () => () => {},
    started: true,
  };
  return {
    sink,
    received,
    stalled: () => stalled,
    /** Drains once: the forwarder goes on; a later stall is awaited anew. */
    drainOnce() {
      stalled = new Promise<void>((resolve) => {
        onStall = resolve;
      });
      release();
    },
    resume() {
      paused = false;
      release();
    },
  };
}

const observer = { observe: () => {}, usage: undefined, text: '', toolCalls: 0 };

function forward(upstream: Readable, sink: ClientSink, queueLength?: number) {
  return forwardStream(upstream, new SseParser(), sink, observer, () => {}, {
    pingIntervalMs: 0,
    ...(queueLength === undefined ? {} : { queueLength }),
  });
}

const everything = () => Buffer.from(Array.from({ length: CHUNKS }, (_, i) => chunkText(i)).join(''));

describe('forwardStream and a client that does not read (StreamCacheQueueLength)', () => {
  it('queue 0: stops reading the upstream at the first backpressure, until the client drains', async () => {
    const upstream = lazyUpstream();
    const client = pausedClient();
    const done = forward(upstream.stream, client.sink, 0);
    await client.stalled();
    expect(upstream.state.pulled).toBe(1);
    client.drainOnce();
    await client.stalled();
    // One drain lets exactly one more chunk through.
    expect(upstream.state.pulled).toBe(2);
    client.resume();
    await done;
    expect(upstream.state.pulled).toBe(CHUNKS);
    expect(Buffer.concat(client.received).equals(everything())).toBe(true);
  });

  it('queue N: reads N more chunks for the slow client, then stops until it drains', async () => {
    const upstream = lazyUpstream();
    const client = pausedClient();
    const done = forward(upstream.stream, client.sink, 4);
    await client.stalled();
    expect(upstream.state.pulled).toBe(5);
    expect(client.received).toHaveLength(5);
    client.drainOnce();
    await client.stalled();
    // Still paused after the drain: the queue fills again before the next wait.
    expect(upstream.state.pulled).toBe(10);
    client.resume();
    await done;
    expect(Buffer.concat(client.received).equals(everything())).toBe(true);
  });

  it('a queue longer than the stream reads it all without waiting for the client', async () => {
    const upstream = lazyUpstream();
    const client = pausedClient();
    let stalled = false;
    void client.stalled().then(() => {
      stalled = true;
    });
    await forward(upstream.stream, client.sink, CHUNKS);
    expect(stalled).toBe(false);
    expect(upstream.state.pulled).toBe(CHUNKS);
    expect(Buffer.concat(client.received).equals(everything())).toBe(true);
  });

  it('without the option, behaves as queue 0', async () => {
    const upstream = lazyUpstream();
    const client = pausedClient();
    const done = forward(upstream.stream, client.sink);
    await client.stalled();
    expect(upstream.state.pulled).toBe(1);
    client.resume();
    await done;
  });
});

describe('forwardStream ending a stream early', () => {
  /**
   * Two whole events and half a third, then `failure`; or, without one, silence until aborted, when its
   * read fails as an undici body's does.
   */
  function failingUpstream(failure?: Error) {
    const aborted = new AbortController();
    async function* chunks() {
      yield Buffer.from(chunkText(0) + chunkText(1));
      yield Buffer.from('data: {"i":2,"pa');
      if (failure) throw failure;
      await new Promise((_, reject) => aborted.signal.addEventListener('abort', () => reject(new Error('aborted'))));
    }
    return {
      stream: chunks() as unknown as Readable,
      abort: () => aborted.abort(),
      aborted: () => aborted.signal.aborted,
    };
  }

  function endedClient() {
    const client = pausedClient();
    client.resume();
    return client;
  }

  const ending = {
    observe: () => {},
    events: (reason: string) => [{ data: `{"ended":"${reason}"}` }],
  };

  it('ends with upstream_reset when the upstream breaks off, the partial event never forwarded', async () => {
    const upstream = failingUpstream(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
    const client = endedClient();
    const result = await forwardStream(upstream.stream, new SseParser(), client.sink, observer, upstream.abort, {
      pingIntervalMs: 0,
      ending,
      finish: () => [{ data: '[DONE]' }],
    });
    expect(result).toMatchObject({ ending: 'upstream_reset', clientGone: false });
    expect(upstream.aborted()).toBe(true);
    expect(Buffer.concat(client.received).toString()).toBe(
      `${chunkText(0)}${chunkText(1)}data: {"ended":"upstream_reset"}\n\n`,
    );
  });

  it('ends with upstream_timeout when the upstream went silent past its idle timeout', async () => {
    const upstream = failingUpstream(Object.assign(new Error('Body Timeout Error'), { code: 'UND_ERR_BODY_TIMEOUT' }));
    const client = endedClient();
    const result = await forwardStream(upstream.stream, new SseParser(), client.sink, observer, upstream.abort, {
      pingIntervalMs: 0,
      ending,
    });
    expect(result.ending).toBe('upstream_timeout');
    expect(Buffer.concat(client.received).toString()).toMatch(/data: \{"ended":"upstream_timeout"\}\n\n$/);
  });

  it('ends with draining when the pod’s drain runs out, whatever the upstream does', async () => {
    const upstream = failingUpstream();
    const client = endedClient();
    const drain = new AbortController();
    const forwarding = forwardStream(upstream.stream, new SseParser(), client.sink, observer, upstream.abort, {
      pingIntervalMs: 0,
      ending,
      draining: drain.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(client.received).toHaveLength(1);
    drain.abort();
    const result = await forwarding;
    expect(result.ending).toBe('draining');
    expect(upstream.aborted()).toBe(true);
    expect(Buffer.concat(client.received).toString()).toBe(
      `${chunkText(0)}${chunkText(1)}data: {"ended":"draining"}\n\n`,
    );
  });
});
