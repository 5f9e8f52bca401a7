import type { Json, RelayErrorInfo } from '../../../convert/types.ts';

/** Claude's documented error types, by HTTP status. */
const BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

const CLAUDE_TYPES = new Set([...Object.values(BY_STATUS), 'billing_error', 'timeout_error']);

/** The Claude error type for a status: the documented one, else invalid_request_error (4xx) or api_error. */
export function claudeErrorType(status: number): string {
  return BY_STATUS[status] ?? (status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error');
}

/** An error as Claude's clients parse it: `{"type":"error","error":{"type","message"}}`. */
export function claudeErrorBody(error: RelayErrorInfo): Json {
  return { type: 'error', error: { type: claudeErrorType(error.status), message: error.message } };
}

/** The Claude error type for an error met inside a hub stream (no status there: read its type and code). */
export function claudeStreamErrorType(type: unknown, code: unknown): string {
  for (const value of [type, code]) {
    if (typeof value !== 'string') continue;
    if (CLAUDE_TYPES.has(value)) return value;
    if (value.includes('rate_limit')) return 'rate_limit_error';
    if (value.includes('overload')) return 'overloaded_error';
    if (value === 'invalid_request_error') return 'invalid_request_error';
  }
  return 'api_error';
}
