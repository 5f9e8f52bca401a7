import type { UpstreamError } from '../types.ts';

/**
 * Claude's error body `{"type":"error","error":{"type","message"}}` (Claude has no separate code:
 * its error type serves as one), an OpenAI-shaped body from a compatible proxy, or the raw text.
 */
export function parseClaudeError(status: number, text: string): UpstreamError {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const error =
      typeof body.error === 'object' && body.error !== null
        ? (body.error as { type?: unknown; message?: unknown; code?: unknown })
        : undefined;
    const message = error?.message ?? (typeof body.error === 'string' ? body.error : body.message);
    if (typeof message === 'string' && message !== '') {
      const type = typeof error?.type === 'string' ? error.type : 'upstream_error';
      const code =
        typeof error?.code === 'string'
          ? error.code
          : typeof error?.code === 'number'
            ? String(error.code)
            : typeof error?.type === 'string'
              ? error.type
              : null;
      return { status, message, type, code };
    }
  } catch {
    // Not JSON: the text itself.
  }
  return {
    status,
    message: text.slice(0, 1000) || `upstream answered HTTP ${status}`,
    type: 'upstream_error',
    code: null,
  };
}
