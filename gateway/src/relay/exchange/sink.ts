import type { SseEvent } from '../sse.ts';

/**
 * Where an exchange writes its answer: the client's HTTP response at the route (relay/client-sink.ts),
 * or the channel tester, which only reads it. The exchange never sees the HTTP framework.
 */
export interface ClientSink {
  /** A whole answer: status, content type and body. */
  answer(status: number, contentType: string, body: Uint8Array): Promise<void>;
  /** Starts a stream: status 200 and these headers. */
  open(headers: Record<string, string>): void;
  /**
   * Writes events (those one upstream chunk completed) in one write: `bytes` when given (the
   * upstream chunk that is exactly these events, passing through), else their frames. False when
   * the client is not taking more yet (wait for `drained`).
   */
  write(events: readonly SseEvent[], bytes?: Uint8Array): boolean;
  /** Resolves when the client can take more, or has gone. */
  drained(): Promise<void>;
  /** A keep-alive comment while the upstream is silent. */
  ping(): void;
  end(): void;
  /** Cuts the stream off: how a client learns that the upstream broke off after the 200 went out. */
  destroy(): void;
  /**
   * Calls `listener` if the client goes away before the answer has ended; returns what stops
   * listening.
   */
  onGone(listener: () => void): () => void;
  /** Sets a response header while the status has not gone out (the route's debug header); a sink without headers has none. */
  header?(name: string, value: string): void;
  /** Whether the status has gone out: after that, no retry can answer instead. */
  readonly started: boolean;
}
