/**
 * How much unread event data one stream holds (in UTF-16 code units) before reading it at once: a
 * long stream without usage then holds its text rather than all of its JSON.
 */
export const HOLD_LIMIT = 256 * 1024;

/**
 * A stream's generated text, which is needed only to estimate completion tokens when the upstream
 * reports no usage. Most upstreams report it, so each event's data is held as it came and parsed
 * for its text only when the text is asked for (or once HOLD_LIMIT is reached): a metered
 * pass-through stream then parses only the few events that carry usage or tool calls.
 */
export class StreamText {
  readonly #textOf: (json: unknown, event: string | undefined) => string;
  #read = '';
  #data: string[] = [];
  #events: (string | undefined)[] = [];
  #held = 0;

  /** `textOf`: the text of one event, from its parsed data (undefined when not JSON) and its name. */
  constructor(textOf: (json: unknown, event: string | undefined) => string) {
    this.#textOf = textOf;
  }

  /** Holds an event's data (and name) for reading later, in stream order. */
  add(data: string, event?: string): void {
    this.#data.push(data);
    this.#events.push(event);
    this.#held += data.length;
    if (this.#held > HOLD_LIMIT) this.#readHeld();
  }

  get value(): string {
    this.#readHeld();
    return this.#read;
  }

  #readHeld(): void {
    const data = this.#data;
    for (let i = 0; i < data.length; i++)
      this.#read += this.#textOf(parseOrUndefined(data[i] as string), this.#events[i]);
    this.#data = [];
    this.#events = [];
    this.#held = 0;
  }
}

function parseOrUndefined(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}
