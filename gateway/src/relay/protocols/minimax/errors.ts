import { parseOpenAIError } from '../openai/errors.ts';
import type { UpstreamError } from '../types.ts';

/**
 * The HTTP status a MiniMax `base_resp.status_code` deserves: MiniMax reports errors with HTTP 200.
 * 1004/2049: bad key; 1002/1039: rate or token limits; 1008: balance used up; 1026/1027: content
 * refused; 2013 and other 20xx: bad parameters.
 */
export function minimaxErrorStatus(code: number): number {
  if (code === 1004 || code === 2049) return 401;
  if (code === 1002 || code === 1039) return 429;
  if (code === 1008) return 403;
  if (code === 1026 || code === 1027 || (code >= 2000 && code < 3000)) return 400;
  return 502;
}

/** A failed `base_resp` of a MiniMax answer, if it is one. */
export function minimaxFailure(text: string): { code: number; message: string } | undefined {
  try {
    const base = (JSON.parse(text) as { base_resp?: { status_code?: unknown; status_msg?: unknown } }).base_resp;
    if (typeof base?.status_code === 'number' && base.status_code !== 0) {
      return { code: base.status_code, message: typeof base.status_msg === 'string' ? base.status_msg : '' };
    }
  } catch {
    // Not JSON.
  }
  return undefined;
}

export function parseMinimaxError(status: number, text: string): UpstreamError {
  const failure = minimaxFailure(text);
  if (failure) {
    return {
      status,
      message: `MiniMax ${failure.code}: ${failure.message}`,
      type: 'upstream_error',
      code: String(failure.code),
    };
  }
  return parseOpenAIError(status, text);
}
