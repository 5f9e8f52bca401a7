import type { UpstreamError } from '../types.ts';

/**
 * The HTTP status a Spark frame's error code deserves: 11200 (no license or wrong app id) is a
 * refusal, 11201–11203 are quota and rate limits, other 10xxx codes are about the request (10013 and
 * 10014: content refused by moderation, 10907: too many tokens, 10163: bad parameters).
 */
export function sparkErrorStatus(code: number): number {
  if (code === 11200 || code === 10313) return 403;
  if (code >= 11201 && code <= 11203) return 429;
  if (code >= 10000 && code < 11000) return 400;
  return 502;
}

/** A Spark error frame `{header: {code, message, sid}}`, the gateway's refusal `{message}`, or the raw text. */
export function parseXunfeiError(status: number, text: string): UpstreamError {
  try {
    const body = JSON.parse(text) as { header?: { code?: unknown; message?: unknown }; message?: unknown };
    if (typeof body.header?.code === 'number') {
      const message = typeof body.header.message === 'string' ? body.header.message : 'Spark error';
      return {
        status,
        message: `Spark ${body.header.code}: ${message}`,
        type: 'upstream_error',
        code: String(body.header.code),
      };
    }
    if (typeof body.message === 'string') {
      return { status, message: `Spark refused the connection: ${body.message}`, type: 'upstream_error', code: null };
    }
  } catch {
    // Not JSON.
  }
  return {
    status,
    message: text.slice(0, 1000) || `the Spark endpoint answered HTTP ${status}`,
    type: 'upstream_error',
    code: null,
  };
}
