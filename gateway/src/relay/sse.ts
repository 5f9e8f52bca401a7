/** One server-sent event: the `event:` name (if any) and its `data:` lines joined with newlines. */
export interface SseEvent {
  event?: string;
  data: string;
}

/**
 * Incremental SSE parser: feed it chunks as they arrive, get back the events each chunk completed.
 * Chunks may split anywhere (inside a line, inside a UTF-8 character); comments (`: ping`) are skipped.
 */
export class SseParser {
  readonly #decoder = new TextDecoder();
  #buffer = '';
  #event: string | undefined;
  #data: string[] = [];

  push(chunk: Uint8Array): SseEvent[] {
    this.#buffer += this.#decoder.decode(chunk, { stream: true });
    return this.#drain();
  }

  /** The last event, if the stream ended without its closing blank line. */
  end(): SseEvent[] {
    this.#buffer += `${this.#decoder.decode()}\n\n`;
    return this.#drain();
  }

  #drain(): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const newline = this.#buffer.indexOf('\n', start);
      if (newline === -1) break;
      let line = this.#buffer.slice(start, newline);
      start = newline + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (this.#data.length > 0) {
          events.push(
            this.#event === undefined
              ? { data: this.#data.join('\n') }
              : { event: this.#event, data: this.#data.join('\n') },
          );
        }
        this.#event = undefined;
        this.#data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
      if (field === 'data') this.#data.push(value);
      else if (field === 'event') this.#event = value;
    }
    this.#buffer = this.#buffer.slice(start);
    return events;
  }
}

/** Serialises an event the way OpenAI streams do. */
export function sseData(data: string, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${data}\n\n`;
}
