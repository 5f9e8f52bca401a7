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
