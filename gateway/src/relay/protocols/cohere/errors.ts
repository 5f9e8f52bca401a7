import type { UpstreamError } from '../types.ts';

/** OpenAI-style error types for Cohere's statuses (Cohere's body has a message only). */
function typeForStatus(status: number): string {
  if (status === 400 || status === 422) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  return 'upstream_error';
}

/** Cohere's error body `{"id": "…", "message": "…"}` (the id is left out of older answers), or the raw text. */
export function parseCohereError(status: number, text: string): UpstreamError {
  let message: unknown;
  try {
    message = (JSON.parse(text) as { message?: unknown }).message;
  } catch {
    // Not JSON (a proxy's HTML page): the text itself says what happened.
  }
  return {
    status,
    message:
      typeof message === 'string' && message !== ''
        ? message
        : text.slice(0, 1000) || `upstream answered HTTP ${status}`,
    type: typeForStatus(status),
    code: null,
  };
}
