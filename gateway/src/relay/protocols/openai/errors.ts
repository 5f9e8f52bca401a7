import type { UpstreamError } from '../types.ts';

/** OpenAI's error body `{"error": {message, type, code}}`, or whatever text the upstream sent. */
export function parseOpenAIError(status: number, text: string): UpstreamError {
  try {
    const body = JSON.parse(text) as {
      error?: { message?: unknown; type?: unknown; code?: unknown } | string;
      message?: unknown;
    };
    const error = typeof body.error === 'object' && body.error !== null ? body.error : undefined;
    const message = error?.message ?? (typeof body.error === 'string' ? body.error : body.message);
    if (typeof message === 'string' && message !== '') {
      return {
        status,
        message,
        type: typeof error?.type === 'string' ? error.type : 'upstream_error',
        code:
          typeof error?.code === 'string' ? error.code : typeof error?.code === 'number' ? String(error.code) : null,
      };
    }
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return {
    status,
    message: text.slice(0, 1000) || `upstream answered HTTP ${status}`,
    type: 'upstream_error',
    code: null,
  };
}
