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
  /**
   * Meters the stream against its request's quota (relay/overrun): after each upstream event was
   * observed, false ends the stream there — that event still goes out, the rest of its chunk does not,
   * the upstream is aborted and `cutEvents` close the client's stream.
   */
  check?: (event: SseEvent) => boolean | Promise<boolean>;
  cutEvents?: () => SseEvent[];
}

export interface ForwardResult {
  /** True when the client went away before the end (the upstream call is then aborted). */
  clientGone: boolean;
  /** True when the quota check ended the stream (the upstream call is then aborted). */
  cut: boolean;
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
  let cut = false;
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

  const { transform, check } = options;
  /** What the client gets for these upstream events, each observed first. */
  const forClient = (upstreamEvents: SseEvent[], out: SseEvent[] = []): SseEvent[] => {
    for (const event of upstreamEvents) {
      observer.observe(event);
      if (transform) transform(event, out);
      else out.push(event);
    }
    return out;
  };
  /** As forClient, checking each event with the quota check; false: cut after the event it refused. */
  const forClientChecked = async (
    upstreamEvents: SseEvent[],
    out: SseEvent[],
    allowed: (event: SseEvent) => boolean | Promise<boolean>,
  ): Promise<boolean> => {
    for (const event of upstreamEvents) {
      observer.observe(event);
      if (transform) transform(event, out);
      else out.push(event);
      const verdict = allowed(event);
      if (!(typeof verdict === 'boolean' ? verdict : await verdict)) return false;
    }
    return true;
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
      let out: SseEvent[];
      if (check) {
        out = [];
        cut = !(await forClientChecked(upstreamEvents, out, check));
      } else {
        out = forClient(upstreamEvents);
      }
      // Every event of a whole-event chunk goes out unchanged: the chunk is their text already.
      await send(out, !cut && decoder.exact && unchanged(upstreamEvents, out) ? (chunk as Uint8Array) : undefined);
      if (clientGone) break;
      if (cut) {
        abortUpstream();
        await send(options.cutEvents?.() ?? []);
        break;
      }
    }
    if (!clientGone && !cut) {
      // The closing events are ours: sent as they are, after the last upstream event was observed.
      const last = forClient(decoder.end());
      for (const event of options.finish?.() ?? []) last.push(event);
      await send(last);
    }
  } catch (error) {
    // The upstream failing mid-stream after the client went away (or was cut off) is expected; anything else is not.
    if (!clientGone && !cut) throw error;
  } finally {
    if (ping) clearInterval(ping);
    stopListening();
  }
  return { clientGone, cut, events };
}

/** Whether the client gets exactly the upstream's events: none dropped, rewritten or added. */
function unchanged(upstreamEvents: SseEvent[], out: SseEvent[]): boolean {
  if (out.length !== upstreamEvents.length) return false;
  for (let i = 0; i < out.length; i++) if (out[i] !== upstreamEvents[i]) return false;
  return true;
}
