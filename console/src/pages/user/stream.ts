/**
 * Reading an OpenAI-style server-sent event stream (spec doc 3 §7 "POST /pg/chat/completions"): `data:`
 * lines carrying JSON with choices[0].delta.content, ending with the literal [DONE].
 */
export interface StreamEvents {
  /** A piece of the answer (content, or reasoning shown before it). */
  onDelta(text: string): void;
  /** An error event inside the stream; its text is appended to the message. */
  onError(text: string): void;
}

/** Feeds text chunks in, calls back per event; `done` is true once [DONE] arrived. */
export class SseParser {
  readonly #events: StreamEvents;
  #buffer = '';
  done = false;

  constructor(events: StreamEvents) {
    this.#events = events;
  }

  push(chunk: string): void {
    this.#buffer += chunk;
    const lines = this.#buffer.split(/\r?\n/);
    this.#buffer = lines.pop() ?? '';
    for (const line of lines) this.#line(line);
  }

  /** The end of the body: a last line without a newline still counts. */
  end(): void {
    if (this.#buffer) this.#line(this.#buffer);
    this.#buffer = '';
  }

  #line(line: string): void {
    if (!line.startsWith('data:')) return;
    const data = line.slice(5).trim();
    if (data === '') return;
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    let json: any;
    try {
      json = JSON.parse(data);
    } catch {
      this.#events.onError(data);
      return;
    }
    if (json?.error) {
      this.#events.onError(
        typeof json.error === 'string' ? json.error : (json.error.message ?? JSON.stringify(json.error)),
      );
      return;
    }
    const delta = json?.choices?.[0]?.delta;
    const text = (delta?.content ?? '') as string;
    if (text) this.#events.onDelta(text);
  }
}

/** The message of an error answer ({error: {message}} or the envelope's message), else the raw text. */
export function errorText(body: string, status: number): string {
  try {
    const json = JSON.parse(body) as { error?: { message?: string } | string; message?: string };
    if (typeof json.error === 'string') return json.error;
    if (json.error?.message) return json.error.message;
    if (json.message) return json.message;
  } catch {
    // not JSON
  }
  return body || `HTTP ${status}`;
}
