import type { UpstreamError } from '../types.ts';

/** OpenAI error types for the HTTP statuses an app platform answers. */
export function errorType(status: number): string {
  if (status === 400 || status === 404 || status === 413 || status === 415) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  return 'upstream_error';
}

/** Dify's error body `{code, message, status}`, or whatever text it sent. */
export function parseDifyError(status: number, text: string): UpstreamError {
  try {
    const body = JSON.parse(text) as { code?: unknown; message?: unknown };
    if (typeof body.message === 'string' && body.message !== '') {
      return {
        status,
        message: body.message,
        type: errorType(status),
        code: typeof body.code === 'string' ? body.code : null,
      };
    }
  } catch {
    // Not JSON: the raw text below.
  }
  return {
    status,
    message: text.slice(0, 1000) || `Dify answered HTTP ${status}`,
    type: errorType(status),
    code: null,
  };
}
