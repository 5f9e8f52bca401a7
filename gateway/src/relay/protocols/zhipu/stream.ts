import { parsedData, type SseEvent, StreamEvent } from '../../sse.ts';
import type { Usage } from '../../types.ts';
import type { StreamDecoder, StreamObserver } from '../types.ts';
import { zhipuUsage } from './usage.ts';

/**
 * Zhipu v3's `sse-invoke` stream: SSE-like events `add` (a piece of text), `finish`, `error` and
 * `interrupted`, whose `data:` lines are raw text (kept exactly, leading spaces included: they are
 * the model's), and a `meta:` line on `finish` with the usage. Decoded as the events themselves and,
 * after a finish, an event `meta` whose data is that JSON.
 */
export class ZhipuStreamDecoder implements StreamDecoder {
  readonly #decoder = new TextDecoder();
  #buffer = '';
  #event: string | undefined;
  #data: string[] | undefined;
  #meta: string | undefined;

  push(chunk: Uint8Array): SseEvent[] {
    this.#buffer += this.#decoder.decode(chunk, { stream: true });
    return this.#drain();
  }

  end(): SseEvent[] {
    this.#buffer += `${this.#decoder.decode()}\n\n`;
    return this.#drain();
  }

  #drain(): SseEvent[] {
    const events: SseEvent[] = [];
    let newline = this.#buffer.indexOf('\n');
    while (newline !== -1) {
      let line = this.#buffer.slice(0, newline);
      this.#buffer = this.#buffer.slice(newline + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') events.push(...this.#dispatch());
      else this.#field(line);
      newline = this.#buffer.indexOf('\n');
    }
    return events;
  }

  #field(line: string): void {
    const colon = line.indexOf(':');
    if (colon <= 0) return;
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1);
    if (name === 'data') this.#data = [...(this.#data ?? []), value];
    else if (name === 'event') this.#event = value.trim();
    else if (name === 'meta') this.#meta = value.trim();
  }

  #dispatch(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.#event !== undefined || this.#data !== undefined) {
      events.push({ event: this.#event ?? 'add', data: (this.#data ?? []).join('\n') });
    }
    // Its JSON is read by the observer and the converter: a StreamEvent parses it once for both.
    if (this.#meta !== undefined) events.push(new StreamEvent(this.#meta, 'meta'));
    this.#event = undefined;
    this.#data = undefined;
    this.#meta = undefined;
    return events;
  }
}

/** Follows a decoded Zhipu stream: the text of `add` events, the usage of the finish's meta. */
export class ZhipuStreamObserver implements StreamObserver {
  usage: Usage | undefined;
  text = '';
  readonly toolCalls = 0;

  observe(event: SseEvent): void {
    if (event.event === 'add') this.text += event.data;
    if (event.event !== 'meta') return;
    // A meta that is not JSON carries no usage.
    this.usage = zhipuUsage((parsedData(event) as { usage?: unknown } | null | undefined)?.usage) ?? this.usage;
  }
}
