import { errorBodyFor, type RelayErrorInfo } from '../convert/index.ts';
import type { RelayErrorType } from '../metrics.ts';
import { jsonEvent, parsedData, type SseEvent } from '../sse.ts';
import type { WireFormat } from '../types.ts';

/**
 * Why the gateway ended a stream before its upstream finished it: the quota could not cover more, the
 * upstream connection broke, the upstream went silent past STREAMING_TIMEOUT_SECONDS, or this pod is
 * shutting down and its drain timeout ran out. Also the consume log's end reason.
 */
export type StreamEndReason = 'quota_exhausted' | 'upstream_reset' | 'upstream_timeout' | 'draining';

/** The error each ending tells the client: constant texts of ours, never the upstream's. */
export const STREAM_ENDINGS: Readonly<Record<StreamEndReason, RelayErrorInfo>> = {
  quota_exhausted: {
    status: 403,
    type: 'insufficient_quota',
    code: 'quota_exhausted',
    message: 'quota exhausted: the answer was cut off where the remaining quota ends',
  },
  upstream_reset: {
    status: 502,
    type: 'upstream_error',
    code: 'upstream_reset',
    message: 'the upstream connection broke off: the answer is incomplete',
  },
  upstream_timeout: {
    status: 504,
    type: 'upstream_error',
    code: 'upstream_timeout',
    message: 'the upstream sent nothing for too long: the answer is incomplete',
  },
  draining: {
    status: 503,
    type: 'server_error',
    code: 'draining',
    message: 'the gateway is shutting down: the answer was ended early, retry the request',
  },
};

/** How the relay's metrics count a request whose stream ended so (quota, upstream, timeout, unavailable). */
export const ENDING_ERROR_TYPES: Readonly<Record<StreamEndReason, RelayErrorType>> = {
  quota_exhausted: 'quota',
  upstream_reset: 'upstream',
  upstream_timeout: 'timeout',
  draining: 'unavailable',
};

/**
 * The last events of a client's stream that the gateway ends, in the client's format: OpenAI chat and
 * completions a `data:` error chunk then `[DONE]`; Claude an `error` event; Responses an `error` event
 * then `response.failed` (naming the response its `response.created` announced); Gemini the error
 * object as its last chunk. Each error body is the one every relay error of that format has (errorBodyFor).
 */
export class StreamEnding {
  readonly #format: WireFormat;
  /** The Responses stream's own response (id, model, created_at), read from its first event. */
  #response: Record<string, unknown> | undefined;
  /** Whether the first events were seen: `response.created` opens a Responses stream, nothing later is read. */
  #looked = false;

  constructor(format: WireFormat) {
    this.#format = format;
  }

  /** Sees the events going to the client (only a Responses stream's first write is read). */
  observe(events: readonly SseEvent[]): void {
    if (this.#looked || this.#format !== 'openai-responses') return;
    this.#looked = true;
    for (const event of events) {
      const data = parsedData(event) as { type?: unknown; response?: Record<string, unknown> } | undefined;
      if (data?.type !== 'response.created') continue;
      const { id, created_at, model } = data.response ?? {};
      this.#response = { id, created_at, model };
      return;
    }
  }

  events(reason: StreamEndReason): SseEvent[] {
    return streamEndingEvents(this.#format, STREAM_ENDINGS[reason], this.#response);
  }
}

/** The closing events of a stream that ends with `error` (see StreamEnding). */
export function streamEndingEvents(
  format: WireFormat,
  error: RelayErrorInfo,
  response: Record<string, unknown> = {},
): SseEvent[] {
  switch (format) {
    case 'claude-messages':
      return [jsonEvent(errorBodyFor(format, error), 'error')];
    case 'openai-responses': {
      const failed = {
        ...response,
        object: 'response',
        status: 'failed',
        error: { code: error.code, message: error.message },
      };
      return [
        jsonEvent({ type: 'error', code: error.code, message: error.message, param: null }, 'error'),
        jsonEvent({ type: 'response.failed', response: failed }, 'response.failed'),
      ];
    }
    case 'openai-chat':
    case 'openai-completions':
      return [jsonEvent(errorBodyFor(format, error)), { data: '[DONE]' }];
    default:
      return [jsonEvent(errorBodyFor(format, error))];
  }
}
