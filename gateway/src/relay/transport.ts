import type { Readable } from 'node:stream';
import { Agent, type Dispatcher, errors, request } from 'undici';
import type { UpstreamRequest } from './protocols/index.ts';
import { type WholeAnswer, WholeAnswerHandler } from './whole-answer.ts';

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable & Dispatcher.BodyMixin;
}

export interface TransportOptions {
  /** Longest wait for an upstream's response headers. */
  headersTimeoutMs: number;
  /** Longest silence between two chunks of an upstream's body (a stalled stream). */
  bodyTimeoutMs: number;
  connectionsPerOrigin: number;
}

/**
 * Upstream HTTP through one pooled undici dispatcher (keep-alive connections per origin), so a
 * request to a provider reuses a warm connection instead of a new TCP and TLS handshake.
 */
export class Transport {
  readonly #agent: Agent;
  readonly #options: TransportOptions;

  constructor(options: TransportOptions) {
    this.#options = options;
    this.#agent = new Agent({
      connections: options.connectionsPerOrigin,
      keepAliveTimeout: 30_000,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs,
    });
  }

  async send(upstream: UpstreamRequest, signal: AbortSignal): Promise<UpstreamResponse> {
    const response = await request(upstream.url, {
      method: upstream.method,
      headers: upstream.headers,
      body: upstream.body as Dispatcher.DispatchOptions['body'],
      dispatcher: this.#agent,
      signal,
      headersTimeout: this.#options.headersTimeoutMs,
      bodyTimeout: this.#options.bodyTimeoutMs,
    });
    return { status: response.statusCode, headers: response.headers, body: response.body };
  }

  /**
   * The same call with the answer read whole (a non-streaming relay call): no body stream is made.
   * Fails like `send` before the headers; a body that breaks off rejects the answer's `bytes()`.
   */
  sendWhole(upstream: UpstreamRequest, signal?: AbortSignal): Promise<WholeAnswer> {
    return new Promise((resolve, reject) => {
      const url = new URL(upstream.url);
      // As undici's request() checks it (it throws inside this executor, so the send rejects).
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new errors.InvalidArgumentError('Invalid URL protocol: the URL must start with `http:` or `https:`.');
      }
      this.#agent.dispatch(
        {
          origin: url.origin,
          path: url.search ? `${url.pathname}${url.search}` : url.pathname,
          method: upstream.method,
          headers: upstream.headers,
          body: upstream.body as Dispatcher.DispatchOptions['body'],
          headersTimeout: this.#options.headersTimeoutMs,
          bodyTimeout: this.#options.bodyTimeoutMs,
        },
        new WholeAnswerHandler({ resolve, reject }, signal),
      );
    });
  }

  /** The waits it allows, for exchanges that are not one HTTP call (a WebSocket session) to keep the same. */
  get timeouts(): Pick<TransportOptions, 'headersTimeoutMs' | 'bodyTimeoutMs'> {
    return { headersTimeoutMs: this.#options.headersTimeoutMs, bodyTimeoutMs: this.#options.bodyTimeoutMs };
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}
