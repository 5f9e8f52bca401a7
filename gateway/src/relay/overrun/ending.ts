import { errorBodyFor, type RelayErrorInfo } from '../convert/index.ts';
import { jsonEvent, type SseEvent } from '../sse.ts';
import type { WireFormat } from '../types.ts';

/** The error a stream ends with when the quota cannot cover more of it (the consume log's end reason too). */
export const QUOTA_EXHAUSTED: RelayErrorInfo = {
  status: 403,
  type: 'insufficient_quota',
  code: 'quota_exhausted',
  message: 'quota exhausted: the answer was cut off where the remaining quota ends',
};

/**
 * The events that end a client's stream with `error`, in the client's format and with the error body
 * every relay error of that format has (errorBodyFor): OpenAI chat and completions a `data:` error chunk
 * and then `[DONE]`; Claude an `error` event; Responses an `error` event with the code; Gemini the
 * error object as its last chunk.
 */
export function streamErrorEvents(format: WireFormat, error: RelayErrorInfo): SseEvent[] {
  switch (format) {
    case 'claude-messages':
      return [jsonEvent(errorBodyFor(format, error), 'error')];
    case 'openai-responses':
      return [jsonEvent({ type: 'error', code: error.code, message: error.message, param: null }, 'error')];
    case 'openai-chat':
    case 'openai-completions':
      return [jsonEvent(errorBodyFor(format, error)), { data: '[DONE]' }];
    default:
      return [jsonEvent(errorBodyFor(format, error))];
  }
}
