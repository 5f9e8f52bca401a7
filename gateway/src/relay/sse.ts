import { isUtf8 } from 'node:buffer';

/** One server-sent event: the `event:` name (if any) and its `data:` lines joined with newlines. */
export interface SseEvent {
  event?: string;
  data: string;
}

const UNPARSED = Symbol('unparsed');
const NOT_JSON = Symbol('not JSON');

/**
 * An event that remembers what it was read from and what its data parses to, so that the metering
 * observer, the converter and the client filters of one stream share a single JSON.parse, and a
 * pass-through stream forwards the upstream's own text. Private fields, not properties: a spread
 * (`{ ...event, data }`) makes a plain event whose memo cannot go stale, and equality checks see
 * only `event` and `data`.
 */
export class StreamEvent implements SseEvent {
  event?: string;
  data: string;
  readonly #raw: string | undefined;
  #json: unknown;

  constructor(data: string, event?: string, raw?: string, json: unknown = UNPARSED) {
    if (event !== undefined) this.event = event;
    this.data = data;
    this.#raw = raw;
    this.#json = json;
  }

  /** The event exactly as the upstream framed it; undefined for events made here. */
  get raw(): string | undefined {
    return this.#raw;
  }

  /** The parsed data, parsed on first use; undefined when it is not JSON. */
  get json(): unknown {
    if (this.#json === UNPARSED) {
      try {
        this.#json = JSON.parse(this.data);
      } catch {
        this.#json = NOT_JSON;
      }
    }
    return this.#json === NOT_JSON ? undefined : this.#json;
  }
}

/** The parsed data of an event (once per event when it is a StreamEvent); undefined when it is not JSON. */
export function parsedData(event: SseEvent): unknown {
  if (event instanceof StreamEvent) return event.json;
  try {
    return JSON.parse(event.data);
  } catch {
    return undefined;
  }
}

/** An event made from a value: serialised once, and read back without parsing by the next step. */
export function jsonEvent(value: unknown, event?: string): StreamEvent {
  return new StreamEvent(JSON.stringify(value), event, undefined, value);
}

/** The text a client gets for an event: the upstream's own framing when it passes through unchanged. */
export function sseFrame(event: SseEvent): string {
  return (event instanceof StreamEvent ? event.raw : undefined) ?? sseData(event.data, event.event);
}

/** The text of several events, written at once. */
export function sseFrames(events: readonly SseEvent[]): string {
  if (events.length === 1) return sseFrame(events[0] as SseEvent);
  let text = '';
  for (const event of events) text += sseFrame(event);
  return text;
}

/**
 * Incremental SSE parser: feed it chunks as they arrive, get back the events each chunk completed.
 * Chunks may split anywhere (inside a line, inside a UTF-8 character); comments (`: ping`) are skipped.
 * Each event keeps its raw text (when it has only `data:` and `event:` lines) for pass-through.
 */
export class SseParser {
  /** BOM handling is ours (see #text): chunks of whole lines bypass the decoder. */
  readonly #decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  /** Whether the decoder holds no partial character (its last chunk ended in a newline). */
  #decoderIdle = true;
  /** Whether any text has been read: a byte order mark is dropped only at the very start. */
  #begun = false;
  #buffer = '';
  /** Where scanning resumes in the buffer, and where the event being read began. */
  #scan = 0;
  #blockStart = 0;
  /** Whether the event being read has lines other than data and event (then it is re-framed). */
  #otherLines = false;
  #event: string | undefined;
  /** The event's data lines so far, joined with newlines; undefined before its first. */
  #data: string | undefined;
  /** Whether text was dropped or an event re-framed since the push began (comments, stray blank lines). */
  #reframed = false;
  #exact = false;

  /** See StreamDecoder.exact: the last chunk was whole events, each with its raw text, and valid UTF-8. */
  get exact(): boolean {
    return this.#exact;
  }

  push(chunk: Uint8Array): StreamEvent[] {
    const fresh = this.#buffer === '';
    // Whole lines of valid UTF-8 with nothing pending before them read directly, without the
    // decoder's per-call work; a leading EF byte may be a byte order mark, left to #text.
    const whole = this.#decoderIdle && chunk[chunk.length - 1] === LF && chunk[0] !== 0xef && isUtf8(chunk);
    this.#buffer += whole ? utf8(chunk) : this.#text(chunk);
    this.#reframed = false;
    const events = this.#drain();
    this.#exact = whole && fresh && this.#buffer === '' && !this.#reframed && events.length > 0;
    return events;
  }

  /** A chunk through the decoder, which keeps a character cut at its end for the next chunk. */
  #text(chunk: Uint8Array): string {
    let text = this.#decoder.decode(chunk, { stream: true });
    // A newline never ends a partial character: the decoder holds none after one.
    this.#decoderIdle = chunk[chunk.length - 1] === LF;
    if (!this.#begun && text !== '') {
      this.#begun = true;
      if (text.charCodeAt(0) === BOM) text = text.slice(1);
    }
    return text;
  }

  /** The last event, if the stream ended without its closing blank line. */
  end(): StreamEvent[] {
    this.#exact = false;
    this.#buffer += `${this.#decoder.decode()}\n\n`;
    this.#decoderIdle = true;
    // The blank line added here is ours, not the upstream's: the event is re-framed.
    this.#otherLines = true;
    return this.#drain();
  }

  /**
   * Reads the complete lines in the buffer by position: a data line (nearly every line of a stream)
   * costs one slice, its value, and a blank line none.
   */
  #drain(): StreamEvent[] {
    const events: StreamEvent[] = [];
    const buffer = this.#buffer;
    let start = this.#scan;
    for (;;) {
      const newline = buffer.indexOf('\n', start);
      if (newline === -1) break;
      const lineStart = start;
      const lineEnd = newline > lineStart && buffer.charCodeAt(newline - 1) === CR ? newline - 1 : newline;
      start = newline + 1;
      if (lineEnd === lineStart) {
        if (this.#data !== undefined && !this.#otherLines) {
          events.push(new StreamEvent(this.#data, this.#event, buffer.slice(this.#blockStart, start)));
        } else {
          if (this.#data !== undefined) events.push(new StreamEvent(this.#data, this.#event));
          this.#reframed = true;
        }
        this.#event = undefined;
        this.#data = undefined;
        this.#otherLines = false;
        this.#blockStart = start;
      } else if (buffer.startsWith('data:', lineStart)) {
        const from =
          buffer.charCodeAt(lineStart + 5) === SPACE && lineStart + 5 < lineEnd ? lineStart + 6 : lineStart + 5;
        this.#addData(buffer.slice(from, lineEnd));
      } else {
        this.#field(buffer.slice(lineStart, lineEnd));
      }
    }
    // Keep the unfinished event's text (its raw form), and what follows it.
    this.#buffer = buffer.slice(this.#blockStart);
    this.#scan = start - this.#blockStart;
    this.#blockStart = 0;
    return events;
  }

  #addData(value: string): void {
    this.#data = this.#data === undefined ? value : `${this.#data}\n${value}`;
  }

  /** Any line but a data line or a blank one: a comment, `event:`, or another field. */
  #field(line: string): void {
    if (line.startsWith(':')) {
      this.#otherLines = true;
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
    if (field === 'data') this.#addData(value);
    else if (field === 'event') this.#event = value;
    else this.#otherLines = true;
  }
}

const LF = 10;
const CR = 13;
const SPACE = 32;
const BOM = 0xfeff;

/** Valid UTF-8 bytes as text. */
function utf8(bytes: Uint8Array): string {
  return (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString(
    'utf8',
  );
}

/** Serialises an event the way OpenAI streams do. */
export function sseData(data: string, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${data}\n\n`;
}
