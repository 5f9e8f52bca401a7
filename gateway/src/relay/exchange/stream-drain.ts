/**
 * This pod's signal to end its open streams: a graceful stop waits for them up to its drain timeout
 * (shutdown.ts), then ends the ones still open with the `draining` ending (stream-ending.ts) — billed for
 * what they delivered — rather than cutting their connections.
 */
export class StreamDrain {
  readonly #controller = new AbortController();

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Ends every open stream, and any that starts after. */
  end(): void {
    this.#controller.abort();
  }
}
