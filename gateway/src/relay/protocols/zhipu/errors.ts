import type { UpstreamError } from '../types.ts';

/** The HTTP status a Zhipu error code stands for (v3 reports many with HTTP 200 and `success: false`). */
export function statusForZhipuCode(code: number): number {
  if (code >= 1000 && code <= 1004) return 401;
  if (code === 1113) return 402;
  if (code === 1302 || code === 1303 || code === 1305) return 429;
  if (code >= 500 && code < 600) return 503;
  return 400;
}

/** Zhipu's `{code, msg, success}`, or whatever text the upstream sent. */
export function parseZhipuError(status: number, text: string): UpstreamError {
  try {
    const body = JSON.parse(text) as { code?: unknown; msg?: unknown; error?: { code?: unknown; message?: unknown } };
    const message = body.msg ?? body.error?.message;
    if (typeof message === 'string' && message !== '') {
      const code = body.code ?? body.error?.code;
      return { status, message, type: 'zhipu_error', code: code === undefined ? null : String(code) };
    }
  } catch {
    // Not JSON: the raw text below.
  }
  return {
    status,
    message: text.slice(0, 1000) || `upstream answered HTTP ${status}`,
    type: 'upstream_error',
    code: null,
  };
}
