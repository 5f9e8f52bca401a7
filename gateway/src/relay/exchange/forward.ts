import type { Readable } from 'node:stream';
import { isTimeout } from '../outcome.ts';
import type { StreamDecoder, StreamObserver } from '../protocols/index.ts';
import type { SseEvent } from '../sse.ts';
import type { ClientSink } from './sink.ts';
import type { StreamEndReason } from './stream-ending.ts';

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
   * the upstream is aborted and the `quota_exhausted` ending closes the client's stream.
   */
  check?: (event: SseEvent) => boolean | Promise<boolean>;
  /** The closing events of a stream ended early, in the client's format (stream-ending.ts); absent: none sent. */
  ending?: { observe(events: readonly SseEvent[]): void; events(reason: StreamEndReason): SseEvent[] };
  /** Aborted when this pod's drain timeout runs out: the stream is ended with `draining`. */
  draining?: AbortSignal;
}

export interface ForwardResult {
  /** True when the client went away before the end (the upstream call is then aborted). */
  clientGone: boolean;
  /**
   * Why the stream was ended before its upstream finished it (the upstream call is then aborted and the
   * client got the ending's events); undefined when it ran to its end or the client went away.
   */
  ending: StreamEndReason | undefined;
  events: number;
}

/**
 * Forwards an upstream stream (SSE, or whatever framing the decoder reads) to the sink chunk by
 * chunk: the events an upstream chunk completes go out in one write (one write per event costs the
 * HTTP layer a chunk frame each), nothing is buffered beyond the event being parsed and the queue
 * the options allow, the upstream is read only as fast as the client takes the bytes (backpressure:
 * at most `queueLength` chunks queued past the socket's own buffer), and a client that disconnects
 * aborts the upstream so billing stops at what was produced. Every upstream event is observed
 * (metering) before it is transformed. A stream the gateway ends early — the quota check refused it,
 * the upstream broke off or went silent past its idle timeout, the pod's drain ran out — gets its
 * ending's events and a normal end, never a dangling connection.
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
  let ending: StreamEndReason | undefined;
  let events = 0;
  const stopListening = sink.onGone(() => {
    clientGone = true;
    abortUpstream();
  });
  /** Ends the stream with `reason` (the first reason wins): the upstream is no longer read. */
  const endWith = (reason: StreamEndReason) => {
    if (ending || clientGone) return;
    ending = reason;
    abortUpstream();
  };
  const onDraining = () => endWith('draining');
  options.draining?.addEventListener('abort', onDraining);
  if (options.draining?.aborted) onDraining();
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
    options.ending?.observe(out);
    if (sink.write(out, bytes)) {
      queued = 0;
    } else if (queued < queueLength) {
      queued++;
    } else {
      await sink.drained();
      queued = 0;
    }
  };

  const chunks = upstream[Symbol.asyncIterator]();
  let drained = false;
  try {
    for (;;) {
      // Only the upstream's own failures end the stream with an ending; anything else is thrown.
      let next: IteratorResult<unknown>;
      try {
        next = await chunks.next();
      } catch (error) {
        endWith(isTimeout(error) ? 'upstream_timeout' : 'upstream_reset');
        break;
      }
      drained = next.done === true;
      if (drained || ending || clientGone) break;
      const chunk = next.value as Uint8Array;
      const upstreamEvents = decoder.push(chunk);
      let out: SseEvent[];
      let cut = false;
      if (check) {
        out = [];
        cut = !(await forClientChecked(upstreamEvents, out, check));
      } else {
        out = forClient(upstreamEvents);
      }
      // Every event of a whole-event chunk goes out unchanged: the chunk is their text already.
      await send(out, !cut && decoder.exact && unchanged(upstreamEvents, out) ? chunk : undefined);
      if (clientGone) break;
      if (cut) endWith('quota_exhausted');
      if (ending) break;
    }
    if (ending) {
      await send(options.ending?.events(ending) ?? []);
    } else if (!clientGone) {
      // The closing events are ours: sent as they are, after the last upstream event was observed.
      const last = forClient(decoder.end());
      for (const event of options.finish?.() ?? []) last.push(event);
      await send(last);
    }
  } finally {
    if (ping) clearInterval(ping);
    options.draining?.removeEventListener('abort', onDraining);
    stopListening();
    // An upstream left mid-way (an ending, a client gone, a failure here) is released.
    if (!drained) void chunks.return?.().catch(() => {});
  }
  return { clientGone, ending, events };
}

/** Whether the client gets exactly the upstream's events: none dropped, rewritten or added. */
function unchanged(upstreamEvents: SseEvent[], out: SseEvent[]): boolean {
  if (out.length !== upstreamEvents.length) return false;
  for (let i = 0; i < out.length; i++) if (out[i] !== upstreamEvents[i]) return false;
  return true;
}
