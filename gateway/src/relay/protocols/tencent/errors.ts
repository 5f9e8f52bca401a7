import type { UpstreamError } from '../types.ts';

/**
 * The HTTP status an error code of Tencent Cloud deserves. Tencent answers every API error with HTTP
 * 200 and `Response.Error`; the relay needs a status to retry, disable and answer by.
 */
export function tencentErrorStatus(code: string): number {
  if (code.startsWith('AuthFailure')) return 401;
  if (code.startsWith('LimitExceeded') || code === 'RequestLimitExceeded') return 429;
  if (code.startsWith('ResourceInsufficient') || code.startsWith('ResourceUnavailable')) return 403;
  if (code.startsWith('InvalidParameter') || code.startsWith('MissingParameter') || code.startsWith('Unsupported')) {
    return 400;
  }
  if (code === 'InvalidAction' || code === 'InvalidRequest' || code.startsWith('OperationDenied')) return 400;
  return 502;
}

/** The `Response.Error` of a Tencent Cloud answer, if it is one. */
export function tencentError(text: string): { code: string; message: string } | undefined {
  try {
    const error = (JSON.parse(text) as { Response?: { Error?: { Code?: unknown; Message?: unknown } } }).Response
      ?.Error;
    if (error && typeof error.Code === 'string') {
      return { code: error.Code, message: typeof error.Message === 'string' ? error.Message : error.Code };
    }
  } catch {
    // Not JSON.
  }
  return undefined;
}

/** `{Response: {Error: {Code, Message}, RequestId}}`, or whatever text the upstream sent. */
export function parseTencentError(status: number, text: string): UpstreamError {
  const error = tencentError(text);
  if (error) return { status, message: `${error.code}: ${error.message}`, type: 'upstream_error', code: error.code };
  return {
    status,
    message: text.slice(0, 1000) || `upstream answered HTTP ${status}`,
    type: 'upstream_error',
    code: null,
  };
}
