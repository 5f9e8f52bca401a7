import type { UpstreamError } from '../types.ts';

/** Error codes meaning the access token is invalid (110) or expired (111): fetch a new one and retry once. */
export const TOKEN_ERRORS: ReadonlySet<number> = new Set([110, 111]);

/** Baidu's request-limit codes (QPS, daily and total quotas). */
const LIMIT_ERRORS: ReadonlySet<number> = new Set([4, 17, 18, 19, 336501, 336502]);

/** The HTTP status a Baidu error code (sent with HTTP 200) stands for. */
export function statusForBaiduCode(code: number): number {
  if (TOKEN_ERRORS.has(code) || code === 6 || code === 14 || code === 15) return 401;
  if (LIMIT_ERRORS.has(code)) return 429;
  if (code === 336000 || code === 336100 || code === 2 || code === 1) return 503;
  return 400;
}

/**
 * Baidu's errors: the API's `{error_code, error_msg}` and the OAuth endpoint's
 * `{error, error_description}` (a key the token endpoint refused).
 */
export function parseBaiduError(status: number, text: string): UpstreamError {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    if (typeof body.error_msg === 'string') {
      const code = typeof body.error_code === 'number' ? String(body.error_code) : null;
      return { status, message: body.error_msg, type: 'baidu_error', code };
    }
    if (typeof body.error === 'string') {
      const detail = typeof body.error_description === 'string' ? body.error_description : body.error;
      return {
        status,
        message: `Baidu refused the channel's APIKey|SecretKey: ${detail}`,
        type: 'authentication_error',
        code: body.error,
      };
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
