import { type Dispatcher, errors } from 'undici';
import type { UpstreamResponse } from './transport.ts';

/**
 * An upstream answer read whole (a non-streaming call): its status and headers once they arrive, its
 * body once all of it has. A call that fails before the headers rejects the send; one that breaks off
 * after them rejects `bytes()`, as a streamed body's read would.
 */
export interface WholeAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The whole body (read it once). */
  bytes(): Promise<Buffer>;
}

/** The body as text, decoded as undici's `body.text()` decodes it (UTF-8, a leading BOM dropped). */
export function bodyText(bytes: Buffer): string {
  const start = bytes.length > 2 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return bytes.toString('utf8', start);
}

/** A streamed answer (a provider's own exchange, or a stream request answered whole) as a whole one. */
export function wholeOf(response: UpstreamResponse): WholeAnswer {
  return {
    status: response.status,
    headers: response.headers,
    bytes: async () => Buffer.from(await response.body.arrayBuffer()),
  };
}

/**
 * undici's dispatch handler for an answer read whole: the chunks are kept as they arrive and joined
 * once at the end. undici's `request()` makes a Readable per answer and reads it back through its
 * stream machinery (push, readable events, ticks), which a small JSON answer does not need.
 */
export class WholeAnswerHandler implements Dispatcher.DispatchHandler {
  /** Settles the send: the answer at its headers, or the failure before them. */
  readonly #started: { resolve: (answer: WholeAnswer) => void; reject: (error: unknown) => void };
  readonly #signal: AbortSignal | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #chunks: Buffer[] = [];
  #length = 0;
  #answered = false;
  #body: { done: boolean; bytes?: Buffer; error?: unknown } = { done: false };
  #reader: { resolve: (bytes: Buffer) => void; reject: (error: unknown) => void } | undefined;

  constructor(
    started: { resolve: (answer: WholeAnswer) => void; reject: (error: unknown) => void },
    signal: AbortSignal | undefined,
  ) {
    this.#started = started;
    this.#signal = signal;
    // A listener only when there is a signal: the relay's non-streaming calls have none.
    signal?.addEventListener('abort', this.#onAbort);
  }

  readonly #onAbort = () => this.#controller?.abort(abortReason(this.#signal));

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#signal?.aborted) {
      controller.abort(abortReason(this.#signal));
      return;
    }
    this.#controller = controller;
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // Informational answers (1xx) come before the real one.
    if (statusCode < 200) return;
    this.#answered = true;
    this.#started.resolve({ status: statusCode, headers, bytes: () => this.#read() });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#length += chunk.length;
  }

  onResponseEnd(): void {
    const chunks = this.#chunks;
    this.#chunks = [];
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.#length);
    this.#finish({ done: true, bytes });
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    this.#chunks = [];
    if (!this.#answered) {
      this.#signal?.removeEventListener('abort', this.#onAbort);
      this.#started.reject(error);
      return;
    }
    this.#finish({ done: true, error });
  }

  #finish(body: { done: true; bytes?: Buffer; error?: unknown }): void {
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#body = body;
    const reader = this.#reader;
    if (!reader) return;
    this.#reader = undefined;
    if (body.bytes) reader.resolve(body.bytes);
    else reader.reject(body.error);
  }

  /** The body, now or once it has all arrived; a failure waits here until someone reads. */
  #read(): Promise<Buffer> {
    const body = this.#body;
    if (body.done) return body.bytes ? Promise.resolve(body.bytes) : Promise.reject(body.error);
    return new Promise((resolve, reject) => {
      this.#reader = { resolve, reject };
    });
  }
}

/** What undici's request() fails with when its signal aborts: the signal's reason. */
function abortReason(signal: AbortSignal | undefined): Error {
  return (signal?.reason as Error | undefined) ?? new errors.RequestAbortedError();
}
