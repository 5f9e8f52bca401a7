import { errorType } from '../hub-answer.ts';
import type { UpstreamError } from '../types.ts';

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
