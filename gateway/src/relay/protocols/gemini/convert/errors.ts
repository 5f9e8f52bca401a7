import type { Json, RelayErrorInfo } from '../../../convert/types.ts';
import { asObject, asString } from './fields.ts';

/**
 * Errors in Google's shape `{"error": {"code": <HTTP status>, "message", "status": <canonical code>}}`,
 * as the Gemini SDKs parse them.
 */

const STATUS_BY_HTTP: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Google's canonical status string for an HTTP status. */
export function geminiStatus(httpStatus: number): string {
  return (
    STATUS_BY_HTTP[httpStatus] ??
    (httpStatus >= 500 ? 'INTERNAL' : httpStatus >= 400 ? 'FAILED_PRECONDITION' : 'UNKNOWN')
  );
}

/** An error as a Gemini client expects it; the gateway's own code rides along as an ErrorInfo reason. */
export function geminiErrorBody(error: RelayErrorInfo): Json {
  const body: Json = { code: error.status, message: error.message, status: geminiStatus(error.status) };
  if (error.code) {
    body.details = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: error.code, domain: 'tollgate' }];
  }
  return { error: body };
}

const TYPE_BY_STATUS: Record<string, string> = {
  INVALID_ARGUMENT: 'invalid_request_error',
  FAILED_PRECONDITION: 'invalid_request_error',
  OUT_OF_RANGE: 'invalid_request_error',
  NOT_FOUND: 'invalid_request_error',
  UNAUTHENTICATED: 'authentication_error',
  PERMISSION_DENIED: 'permission_error',
  RESOURCE_EXHAUSTED: 'rate_limit_error',
  INTERNAL: 'server_error',
  UNAVAILABLE: 'server_error',
  DEADLINE_EXCEEDED: 'server_error',
};

/** The OpenAI-style error type for a Google status string. */
export const typeForStatus = (status: string | undefined) => (status && TYPE_BY_STATUS[status]) || 'upstream_error';

/** The code to report for a Google error: the ErrorInfo reason (API_KEY_INVALID, …) or the status. */
export function codeOfGeminiError(error: Json): string | null {
  for (const detail of Array.isArray(error.details) ? error.details : []) {
    const reason = asString(asObject(detail)?.reason);
    if (reason) return reason;
  }
  return asString(error.status) ?? null;
}
