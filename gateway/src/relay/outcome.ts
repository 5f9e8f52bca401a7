import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { ClientGone } from './exchange/failure.ts';
import type { RelayErrorType, RelayMetrics } from './metrics.ts';
import type { WireFormat } from './types.ts';

/**
 * What one relay request turned out to be, counted once when its response ends — answered, refused,
 * failed or abandoned — so that no outcome escapes the metrics and none is counted twice. The
 * pipeline and the error handlers note what they learn; the count happens on the response's `close`,
 * which Node emits for every response, including hijacked streams and clients that went away.
 */
interface Outcome {
  format: WireFormat;
  /** A model the routing index serves, else `unknown`: a client's free text never becomes a label. */
  model: string;
  group: string;
  /** The channel that answered, or the last one that failed; `none` when no channel was reached. */
  channel: string;
  errorType: RelayErrorType | undefined;
  /** A WebSocket session: the request answered 101 and its socket was handed over (never an HTTP answer). */
  upgraded?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The tracked outcome of a relay request (null: not tracked). */
    relayOutcome: Outcome | null;
  }
}

/**
 * Gives every request of the app its outcome slot up front (a field, not a WeakMap entry per request:
 * the requests keep one shape, and noting a fact is a field read). Without it a tracked request gets
 * the field when tracking starts.
 */
export function keepRelayOutcomes(app: FastifyInstance): void {
  app.decorateRequest('relayOutcome', null);
}

/** Starts tracking a relay request: it is in flight until its response closes, then counted. */
export function trackRelayOutcome(
  request: FastifyRequest,
  reply: FastifyReply,
  metrics: RelayMetrics,
  format: WireFormat,
): void {
  if (request.relayOutcome) return;
  const outcome: Outcome = { format, model: 'unknown', group: 'unknown', channel: 'none', errorType: undefined };
  request.relayOutcome = outcome;
  metrics.inFlight.inc();
  const started = performance.now();
  const raw = reply.raw;
  // `on`, not `once`: a response closes once, and `once` wraps the listener anew for every request.
  raw.on('close', () => {
    metrics.inFlight.dec();
    const { status, errorType } = outcome.upgraded
      ? { status: 101, errorType: outcome.errorType ?? 'none' }
      : ending(raw.writableFinished, raw.headersSent, raw.statusCode, outcome.errorType);
    metrics.finished({
      model: outcome.model,
      channel: outcome.channel,
      group: outcome.group,
      format: outcome.format,
      status,
      errorType,
      durationMs: performance.now() - started,
    });
  });
}

/**
 * The status and error type a closed response is counted with. A client that left before the answer
 * was written is `client_closed` with nginx's 499 (it never got a status); a stream cut off after its
 * 200 keeps that status with the error that broke it.
 */
export function ending(
  finished: boolean,
  headersSent: boolean,
  statusCode: number,
  noted: RelayErrorType | undefined,
): { status: number; errorType: RelayErrorType } {
  if (noted) return { status: headersSent ? statusCode : 499, errorType: noted };
  if (!finished) return { status: headersSent ? statusCode : 499, errorType: 'client_closed' };
  return { status: statusCode, errorType: statusCode >= 400 ? errorTypeOfStatus(statusCode) : 'none' };
}

/** The facts a request's pipeline learns about it (its labels in the metrics). */
export type RelayFacts = Partial<Omit<Outcome, 'errorType'>>;

/**
 * What the pipeline notes about its request, without the HTTP framework: the route hands it
 * `relayNotes(request, reply)`.
 */
export interface RelayNotes {
  /** Records facts as the pipeline learns them. */
  note(facts: RelayFacts): void;
  /** Records why the request failed: the first reason wins, and nothing changes an answer written in full. */
  failed(errorType: RelayErrorType): void;
}

/** The notes of a tracked request (they go nowhere for a request that is not tracked). */
export function relayNotes(request: FastifyRequest, reply: FastifyReply): RelayNotes {
  return new RequestNotes(request, reply);
}

class RequestNotes implements RelayNotes {
  readonly #request: FastifyRequest;
  readonly #reply: FastifyReply;

  constructor(request: FastifyRequest, reply: FastifyReply) {
    this.#request = request;
    this.#reply = reply;
  }

  note(facts: RelayFacts): void {
    noteRelay(this.#request, facts);
  }

  failed(errorType: RelayErrorType): void {
    noteRelayFailure(this.#request, this.#reply, errorType);
  }
}

/** Records facts about a tracked request as the pipeline learns them. */
export function noteRelay(request: FastifyRequest, facts: RelayFacts): void {
  const outcome = request.relayOutcome;
  if (outcome) Object.assign(outcome, facts);
}

/**
 * Records why a WebSocket session ended badly. Its HTTP response never ends (the socket was handed
 * over), so the first reason noted stands until the socket closes.
 */
export function noteSessionFailure(request: FastifyRequest, errorType: RelayErrorType): void {
  const outcome = request.relayOutcome;
  if (outcome && !outcome.errorType) outcome.errorType = errorType;
}

/**
 * Records why a tracked request failed. The first reason noted wins (the pipeline knows an upstream
 * timeout from the error it later throws), and nothing changes an answer already written in full.
 */
export function noteRelayFailure(request: FastifyRequest, reply: FastifyReply, errorType: RelayErrorType): void {
  const outcome = request.relayOutcome;
  if (!outcome || outcome.errorType || reply.raw.writableEnded) return;
  outcome.errorType = errorType;
}

const AUTH_CODES = new Set([
  'invalid_token',
  'token_expired',
  'token_disabled',
  'access_denied',
  'user_banned',
  'group_not_usable',
  'channel_pin_forbidden',
  'model_not_allowed',
]);
const QUOTA_CODES = new Set(['insufficient_user_quota', 'pre_consume_token_quota_failed', 'period_quota_exceeded']);
const NO_CHANNEL_CODES = new Set(['model_not_found', 'channel_pin_disabled', 'format_unsupported']);
const UNAVAILABLE_CODES = new Set(['quota_ledger_closed', 'SERVER_DRAINING', 'SHUTTING_DOWN']);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** Whether an error is a wait for the upstream running out (undici's timeouts, an AbortSignal.timeout). */
export function isTimeout(error: unknown): boolean {
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  return (typeof code === 'string' && TIMEOUT_CODES.has(code)) || name === 'TimeoutError';
}

/** The error type of anything thrown while relaying: by its code when it has one, else by its status. */
export function errorTypeOf(error: unknown): RelayErrorType {
  if (error instanceof ClientGone) return 'client_closed';
  if (isTimeout(error)) return 'timeout';
  if (!(error instanceof AppError)) {
    const status = (error as { statusCode?: unknown } | null)?.statusCode;
    return typeof status === 'number' && status >= 400 && status < 500 ? errorTypeOfStatus(status) : 'internal';
  }
  const code = error.code;
  if (AUTH_CODES.has(code)) return 'auth';
  if (code === 'rate_limited') return 'rate_limit';
  if (QUOTA_CODES.has(code)) return 'quota';
  if (NO_CHANNEL_CODES.has(code) || code.startsWith('channel:')) return 'no_channel';
  if (UNAVAILABLE_CODES.has(code)) return 'unavailable';
  return errorTypeOfStatus(error.status);
}

/** The error type an HTTP status stands for when nothing more is known. */
export function errorTypeOfStatus(status: number): RelayErrorType {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limit';
  if (status < 500) return 'invalid_request';
  if (status === 503) return 'unavailable';
  return 'internal';
}
