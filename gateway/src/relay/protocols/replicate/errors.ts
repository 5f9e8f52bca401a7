import { errorType } from '../hub-answer.ts';
import type { UpstreamError } from '../types.ts';

/** Replicate's problem body `{title, detail, status}`, or whatever text it sent. */
export function parseReplicateError(status: number, text: string): UpstreamError {
  try {
    const body = JSON.parse(text) as { title?: unknown; detail?: unknown };
    const message = typeof body.detail === 'string' && body.detail !== '' ? body.detail : body.title;
    if (typeof message === 'string' && message !== '') {
      return {
        status,
        message,
        type: errorType(status),
        code: typeof body.title === 'string' ? body.title.toLowerCase().replaceAll(' ', '_') : null,
      };
    }
  } catch {
    // Not JSON: the raw text below.
  }
  return {
    status,
    message: text.slice(0, 1000) || `Replicate answered HTTP ${status}`,
    type: errorType(status),
    code: null,
  };
}
