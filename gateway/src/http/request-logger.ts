import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type LogArgs = unknown[];
type LogMethod = (...args: LogArgs) => void;
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * `request.log`, made on first use: Fastify asks for a child logger (bound to the request id) for
 * every request, while most requests log only their access line, which the server writes through its
 * own logger with the id as a field. Until something logs through it, a request pays for this small
 * object instead of a pino child.
 */
class RequestLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions | undefined;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions | undefined) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get #log(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? this.#options?.level ?? this.#parent.level;
  }
  set level(level: string) {
    this.#log.level = level;
  }

  /** Called on the child (pino's methods read `this`). */
  #call(level: Level, args: LogArgs): void {
    (this.#log as unknown as Record<Level, LogMethod>)[level](...args);
  }

  // Methods on the prototype, not arrow fields: nothing made per request but the object itself.
  fatal(...args: LogArgs): void {
    this.#call('fatal', args);
  }
  error(...args: LogArgs): void {
    this.#call('error', args);
  }
  warn(...args: LogArgs): void {
    this.#call('warn', args);
  }
  info(...args: LogArgs): void {
    this.#call('info', args);
  }
  debug(...args: LogArgs): void {
    this.#call('debug', args);
  }
  trace(...args: LogArgs): void {
    this.#call('trace', args);
  }
  silent(...args: LogArgs): void {
    this.#call('silent', args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#log.child(bindings, options);
  }
}

/** Fastify's childLoggerFactory: request loggers made on first use. */
export function requestLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  // Fastify passes {} when the route sets nothing: pino's child takes a faster path without options.
  const given = options.level !== undefined || options.serializers !== undefined ? options : undefined;
  // Its methods take what pino's take (the overloads are pino's to check, where they are called).
  return new RequestLogger(logger, bindings, given) as unknown as FastifyBaseLogger;
}
