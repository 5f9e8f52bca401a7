import type { FastifyReply, FastifyRequest } from 'fastify';
import { LEDGER_ERRORS } from '../domain/ledger/errors.ts';
import type { AppError, Language } from '../errors.ts';
import { HTTP_ERRORS, requestLanguage, toAppError } from '../http/errors.ts';
import { STORE_ERRORS, StoreUnavailableError } from '../store/unavailable.ts';

/** new-api's answer shape on every /api call: {success, message, data}; failures add a stable `code`. */
export interface Envelope<T = unknown> {
  success: boolean;
  message: string;
  data?: T;
  code?: string;
  /** Seconds to wait before retrying (a 503 while the database is unreachable); also the Retry-After header. */
  retry_after?: number;
}

export function ok<T>(data?: T, message = ''): Envelope<T> {
  return data === undefined ? { success: true, message } : { success: true, message, data };
}

/** A success message in the caller's language. */
export function say(request: FastifyRequest, message: Record<Language, string>): string {
  return message[requestLanguage(request)];
}

export function failure(request: FastifyRequest, error: AppError): Envelope<never> {
  const answer: Envelope<never> = {
    success: false,
    message: error.localized(requestLanguage(request)),
    code: error.code,
  };
  if (error instanceof StoreUnavailableError) answer.retry_after = error.retryAfterSeconds;
  return answer;
}

/** Sets `Retry-After` on an answer the caller should retry later (the database unreachable). */
export function setStoreRetryAfter(reply: FastifyReply, error: AppError): void {
  if (error instanceof StoreUnavailableError) reply.header('retry-after', String(error.retryAfterSeconds));
}

/**
 * Refusals that are about this server's state rather than the request: they keep their 5xx, so clients,
 * load balancers and retries treat them as "try again elsewhere or later".
 */
const SERVER_STATE = new Set(
  [
    HTTP_ERRORS.INTERNAL_ERROR,
    HTTP_ERRORS.SERVER_DRAINING,
    HTTP_ERRORS.SHUTTING_DOWN,
    HTTP_ERRORS.SCHEMA_NOT_READY,
    LEDGER_ERRORS.quota_ledger_closed,
    STORE_ERRORS.store_unavailable,
  ].map((spec) => spec.code),
);

/**
 * The HTTP status of a refused /api call, as new-api answers it. Its web front end signs the user out on
 * any 401 and shows only "Request failed with status code N" for other non-200 answers, so every business
 * and validation refusal (an upstream or mail server failing included) is a 200 with success:false and our
 * message. 401 stays for "not signed in", 429 for limits, 404 for a path no route serves, and 5xx for the
 * server's own state.
 */
export function apiStatus(error: AppError): number {
  if (error.status === 401 || error.status === 429 || SERVER_STATE.has(error.code)) return error.status;
  if (error.spec === HTTP_ERRORS.NOT_FOUND) return 404;
  return 200;
}

/**
 * Answers anything thrown by an /api route in the envelope, with the status `apiStatus` gives. `echoInData`
 * repeats the message in `data`, for the pages of new-api's front end that show `data` as the error.
 */
export function sendFailure(error: unknown, request: FastifyRequest, reply: FastifyReply, echoInData = false) {
  const appError = toAppError(error);
  if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
  const answer = failure(request, appError);
  setStoreRetryAfter(reply, appError);
  return reply.code(apiStatus(appError)).send(echoInData ? { ...answer, data: answer.message } : answer);
}
