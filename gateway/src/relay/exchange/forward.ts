import type { Readable } from 'node:stream';
import type { StreamDecoder, StreamObserver } from '../protocols/index.ts';
import type { SseEvent } from '../sse.ts';
import type { ClientSink } from './sink.ts';

export interface ForwardOptions {
  /** The events the client gets for one upstream event: rewritten, dropped ([]) or several (conversions). */
  transform?: (event: SseEvent) => SseEvent[];
  /** Sent after the upstream's last event (a synthesised usage chunk, a missing [DONE]). */
  finish?: () => SseEvent[];
  /** `: PING` comment lines while the upstream is silent this long; 0 turns pings off. */
  pingIntervalMs: number;
  /** Called with the time of the first event, for time-to-first-token. */
  onFirstEvent?: () => void;
}

export interface ForwardResult {
  /** True when the client went away before the end (the upstream call is then aborted). */
  clientGone: boolean;
  events: number;
}

/**
 * Forwards an upstream stream (SSE, or whatever framing the decoder reads) to the sink event by
 * event: nothing is buffered beyond the event being parsed, the upstream is read only as fast as the
 * client takes the bytes (backpressure), and a client that disconnects aborts the upstream so billing
 * stops at what was produced. Every upstream event is observed (metering) before it is transformed.
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

  /** Upstream events are observed and transformed; our own closing events are sent as they are. */
  const write = async (event: SseEvent, ours = false) => {
    if (!ours) observer.observe(event);
    const out = options.transform && !ours ? options.transform(event) : [event];
    for (const next of out) await send(next);
  };
  const send = async (out: SseEvent) => {
    if (clientGone) return;
    if (events++ === 0) options.onFirstEvent?.();
    lastWrite = Date.now();
    if (!sink.write(out)) await sink.drained();
  };

  try {
    for await (const chunk of upstream) {
      for (const event of decoder.push(chunk as Uint8Array)) await write(event);
      if (clientGone) break;
    }
    if (!clientGone) {
      for (const event of decoder.end()) await write(event);
      for (const event of options.finish?.() ?? []) await write(event, true);
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
