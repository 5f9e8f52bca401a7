import type { Readable } from 'node:stream';
import type { StreamDecoder, StreamObserver } from '../protocols/index.ts';
import type { SseEvent } from '../sse.ts';
import type { ClientSink } from './sink.ts';

export interface ForwardOptions {
  /**
   * Adds to `out` the events the client gets for one upstream event: the event itself, a rewrite,
   * none, or several (conversions). Absent: every event goes out as it came.
   */
  transform?: (event: SseEvent, out: SseEvent[]) => void;
  /** Sent after the upstream's last event (a synthesised usage chunk, a missing [DONE]). */
  finish?: () => SseEvent[];
  /** `: PING` comment lines while the upstream is silent this long; 0 turns pings off. */
  pingIntervalMs: number;
  /**
   * Option StreamCacheQueueLength: how many upstream chunks may be queued for a client that is not
   * taking them (its socket reported backpressure) before the upstream is no longer read until the
   * client drains; 0 (absent): stop reading at the first sign of backpressure.
   */
  queueLength?: number;
  /** Called with the time of the first event, for time-to-first-token. */
  onFirstEvent?: () => void;
}

export interface ForwardResult {
  /** True when the client went away before the end (the upstream call is then aborted). */
  clientGone: boolean;
  events: number;
}

/**
 * Forwards an upstream stream (SSE, or whatever framing the decoder reads) to the sink chunk by
 * chunk: the events an upstream chunk completes go out in one write (one write per event costs the
 * HTTP layer a chunk frame each), nothing is buffered beyond the event being parsed and the queue
 * the options allow, the upstream is read only as fast as the client takes the bytes (backpressure:
 * at most `queueLength` chunks queued past the socket's own buffer), and a client that disconnects
 * aborts the upstream so billing stops at what was produced. Every upstream event is observed
 * (metering) before it is transformed.
 */
export async function forwardStream(
  upstream: Readable,
  decoder: StreamDecoder,
  sink: ClientSink,
  observer: StreamObserver,
  abortUpstream: () => void,
  options: ForwardOptions,
): Promise<ForwardResult> {
  let clientGone = false;
  let events = 0;
  const stopListening = sink.onGone(() => {
    clientGone = true;
    abortUpstream();
  });
  let lastWrite = Date.now();
  const ping =
    options.pingIntervalMs > 0
      ? setInterval(
          () => {
            if (Date.now() - lastWrite >= options.pingIntervalMs && !clientGone) {
              sink.ping();
              lastWrite = Date.now();
            }
          },
          Math.min(options.pingIntervalMs, 1000),
        )
      : undefined;

  const { transform } = options;
  /** What the client gets for these upstream events, each observed first. */
  const forClient = (upstreamEvents: SseEvent[], out: SseEvent[] = []): SseEvent[] => {
    for (const event of upstreamEvents) {
      observer.observe(event);
      if (transform) transform(event, out);
      else out.push(event);
    }
    return out;
  };
  const queueLength = options.queueLength ?? 0;
  /** Writes made since the client's socket last reported backpressure: each is queued in memory. */
  let queued = 0;
  const send = async (out: SseEvent[], bytes?: Uint8Array) => {
    if (clientGone || out.length === 0) return;
    if (events === 0) options.onFirstEvent?.();
    events += out.length;
    lastWrite = Date.now();
    if (sink.write(out, bytes)) {
      queued = 0;
    } else if (queued < queueLength) {
      queued++;
    } else {
      await sink.drained();
      queued = 0;
    }
  };

  try {
    for await (const chunk of upstream) {
      const upstreamEvents = decoder.push(chunk as Uint8Array);
      const out = forClient(upstreamEvents);
      // Every event of a whole-event chunk goes out unchanged: the chunk is their text already.
      await send(out, decoder.exact && unchanged(upstreamEvents, out) ? (chunk as Uint8Array) : undefined);
      if (clientGone) break;
    }
    if (!clientGone) {
      // The closing events are ours: sent as they are, after the last upstream event was observed.
      const last = forClient(decoder.end());
      for (const event of options.finish?.() ?? []) last.push(event);
      await send(last);
    }
  } catch (error) {
    // The upstream failing mid-stream after the client went away is expected; anything else is not.
    if (!clientGone) throw error;
  } finally {
    if (ping) clearInterval(ping);
    stopListening();
  }
  return { clientGone, events };
}

/** Whether the client gets exactly the upstream's events: none dropped, rewritten or added. */
function unchanged(upstreamEvents: SseEvent[], out: SseEvent[]): boolean {
  if (out.length !== upstreamEvents.length) return false;
  for (let i = 0; i < out.length; i++) if (out[i] !== upstreamEvents[i]) return false;
  return true;
}
