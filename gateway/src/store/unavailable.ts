import { AppError, defineErrors } from '../errors.ts';

/** How long a caller is asked to wait before retrying while the database is unreachable. */
export const STORE_RETRY_AFTER_SECONDS = 5;

export const STORE_ERRORS = defineErrors({
  store_unavailable: {
    status: 503,
    message: {
      zh: '数据存储暂时不可用，请在 {retry_after} 秒后重试',
      en: 'Storage (the database or Redis) is unavailable right now; retry in {retry_after} s',
    },
  },
});

/** Postgres (or Redis) cannot be reached (refused, reset, timed out, shutting down): the request may succeed later. */
export class StoreUnavailableError extends AppError {
  override name = 'StoreUnavailableError';
  readonly retryAfterSeconds = STORE_RETRY_AFTER_SECONDS;

  constructor(cause?: unknown) {
    super(STORE_ERRORS.store_unavailable, { retry_after: STORE_RETRY_AFTER_SECONDS });
    if (cause !== undefined) this.cause = cause;
  }
}

/** Socket errors that mean "no database at the other end right now". */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** SQLSTATEs of a server that is going away or not taking connections (class 08: connection exception). */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03']);

/** What node-postgres says when it loses or cannot get a connection (it sets no code for these). */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout expired|Client has encountered a connection error|not currently accepting connections|Connection ended unexpectedly/i;

/** node-postgres's pool waited too long for a free client: the database is busy, not gone. */
const POOL_BUSY_MESSAGE = 'timeout exceeded when trying to connect';

/** Whether a node-postgres error means the database is unreachable (as opposed to a statement it refused). */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_STATES.has(code) || code.startsWith('08'))) {
    return true;
  }
  return UNAVAILABLE_MESSAGES.test(error.message);
}

/**
 * Whether `error` is the database being unreachable. Every query and checkout of the Postgres pool goes
 * through the guard, which turns such failures into StoreUnavailableError; other errors with socket codes
 * (an upstream provider refusing a connection) are not the store's.
 */
export function isStoreUnavailable(error: unknown): error is StoreUnavailableError {
  return error instanceof StoreUnavailableError;
}

/**
 * Fails fast while the database is known to be down. After a connection failure, every checkout for
 * `retryMs` fails at once instead of waiting for its own connect timeout; after that one checkout at a
 * time probes the database (the others keep failing fast) until one succeeds.
 */
export class StoreGuard {
  readonly #retryMs: number;
  readonly #now: () => number;
  #failedAt: number | undefined;
  /** What the last failure was, carried by the fast failures as their cause (for /health/details). */
  #lastFailure: unknown;
  #probing = false;

  constructor(retryMs = 1000, now: () => number = () => performance.now()) {
    this.#retryMs = retryMs;
    this.#now = now;
  }

  /** Whether the last contact with the database failed. */
  get down(): boolean {
    return this.#failedAt !== undefined;
  }

  /** Runs `open` (a connection checkout) unless the database is known to be down. */
  async checkout<T>(open: () => Promise<T>): Promise<T> {
    const failedAt = this.#failedAt;
    const probe = failedAt !== undefined;
    if (probe && (this.#probing || this.#now() - failedAt < this.#retryMs)) {
      throw new StoreUnavailableError(this.#lastFailure);
    }
    if (probe) this.#probing = true;
    try {
      const opened = await open();
      this.#failedAt = undefined;
      return opened;
    } catch (error) {
      // Busy: this request is refused (503) but the others go on asking.
      if (error instanceof Error && error.message === POOL_BUSY_MESSAGE) throw new StoreUnavailableError(error);
      throw this.failed(error);
    } finally {
      if (probe) this.#probing = false;
    }
  }

  /** Notes a failed statement or checkout: an unreachable database trips the guard. Answers the error to throw. */
  failed(error: unknown): unknown {
    if (error instanceof StoreUnavailableError) return error;
    if (!isConnectionFailure(error)) return error;
    this.#failedAt = this.#now();
    this.#lastFailure = error;
    return new StoreUnavailableError(error);
  }
}
