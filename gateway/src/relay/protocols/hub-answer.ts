import type { Json } from '../convert/types.ts';
import { jsonEvent, type SseEvent } from '../sse.ts';

/**
 * Writing hub (OpenAI chat) answers for an upstream with a format of its own: whole answers, the
 * stream chunks of one answer, usage, and the OpenAI error shapes of the upstream's failures.
 */

export const nowSeconds = () => Math.floor(Date.now() / 1000);

export type HubUsage = {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
};

export const hubUsage = (prompt: number, completion: number): HubUsage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

/**
 * A whole hub answer with one choice; `message` is the assistant's (content, tool calls …).
 * `extra` carries upstream facts a client may need beside OpenAI's fields (a conversation id).
 */
export function hubAnswer(input: {
  id: string;
  model: string;
  message: Json;
  finishReason?: string;
  usage?: Json | undefined;
  extra?: Json;
}): Json {
  return {
    id: input.id,
    object: 'chat.completion',
    created: nowSeconds(),
    model: input.model,
    choices: [
      { index: 0, message: { role: 'assistant', ...input.message }, finish_reason: input.finishReason ?? 'stop' },
    ],
    ...(input.usage ? { usage: input.usage } : {}),
    ...input.extra,
  };
}

/** An OpenAI-style error chunk: how the hub streams an upstream's mid-stream failure. */
export function hubError(message: string, code: string | null, type = 'upstream_error'): SseEvent {
  return jsonEvent({ error: { message, type, code } });
}

/** OpenAI error types for the HTTP statuses an upstream answers. */
export function errorType(status: number): string {
  if (status === 400 || status === 404 || status === 413 || status === 415) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  return 'upstream_error';
}

/**
 * The hub chunks of one streamed answer: same id, creation time and model on each. The assistant
 * role comes first, either as a role chunk of its own (`start`, `role`) or inside the first delta
 * (`delta`); content deltas follow (`text`, `reasoning`, `chunk` for any delta), then the finish and
 * a usage chunk with no choices, as OpenAI streams usage.
 */
export class HubChunks {
  /** Upstreams that name the answer, or say when they began it, only in a later event set these. */
  id: string;
  created = nowSeconds();
  readonly #model: string;
  #extra: Json = {};
  #started = false;
  #finished = false;

  constructor(id: string, model: string) {
    this.id = id;
    this.#model = model;
  }

  /** Fields every later chunk carries (a conversation id, once the upstream names it). */
  carry(extra: Json): void {
    this.#extra = { ...this.#extra, ...extra };
  }

  get started(): boolean {
    return this.#started;
  }

  get finished(): boolean {
    return this.#finished;
  }

  /** The role chunk, as the upstream opens its answer. */
  role(): SseEvent {
    this.#started = true;
    return this.chunk({ role: 'assistant', content: '' });
  }

  /** The role chunk unless the answer has begun: a stream that skipped its opening still gets it first. */
  start(): SseEvent[] {
    return this.#started ? [] : [this.role()];
  }

  /** One delta as it is. */
  chunk(delta: Json, finishReason: string | null = null): SseEvent {
    return this.choices([{ index: 0, delta, finish_reason: finishReason }]);
  }

  /** A chunk of whole choices, as an upstream that streams several of them says them. */
  choices(choices: Json[]): SseEvent {
    return this.#event(choices);
  }

  /** One delta; the first of the answer carries the assistant role. */
  delta(delta: Json, finishReason: string | null = null): SseEvent {
    const withRole = this.#started ? delta : { role: 'assistant', ...delta };
    this.#started = true;
    return this.chunk(withRole, finishReason);
  }

  text(content: string): SseEvent[] {
    if (content === '') return [];
    return [...this.start(), this.chunk({ content })];
  }

  reasoning(content: string): SseEvent[] {
    if (content === '') return [];
    return [...this.start(), this.chunk({ reasoning_content: content })];
  }

  /** The usage chunk OpenAI streams last: no choices. */
  usage(usage: Json): SseEvent {
    return this.#event([], { usage });
  }

  /** The finish chunk, then the usage chunk when the upstream reported usage; once only. */
  finish(usage: Json | undefined, reason = 'stop'): SseEvent[] {
    if (this.#finished) return [];
    this.#finished = true;
    const events = [...this.start(), this.chunk({}, reason)];
    if (usage) events.push(this.usage(usage));
    return events;
  }

  /** The upstream's mid-stream failure; the answer says nothing after it. */
  error(message: string, code: string | null): SseEvent[] {
    this.#finished = true;
    return [hubError(message, code)];
  }

  #event(choices: Json[], more: Json = {}): SseEvent {
    return jsonEvent({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.#model,
      choices,
      ...this.#extra,
      ...more,
    });
  }
}
