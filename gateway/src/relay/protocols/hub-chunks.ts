import type { ConvertContext, Json } from '../convert/types.ts';
import type { SseEvent } from '../sse.ts';

/**
 * Pieces the upstream-only chat adapters share when they read hub requests and write hub answers
 * (OpenAI chat completions and their stream chunks).
 */

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A hub message's text: a string, or the text parts of a content array joined. */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part) => isObject(part) && part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('\n');
}

/** The system messages of a hub request, joined (upstreams that take the system prompt apart). */
export function systemText(messages: unknown): string {
  return (Array.isArray(messages) ? messages : [])
    .filter((m) => isObject(m) && (m.role === 'system' || m.role === 'developer'))
    .map((m) => messageText(m.content))
    .filter((text) => text !== '')
    .join('\n');
}

/** The hub's completion-token budget, under either of OpenAI's names. */
export function maxTokens(body: Json): number | undefined {
  const value = body.max_completion_tokens ?? body.max_tokens;
  return typeof value === 'number' && value > 0 ? value : undefined;
}

/** `stop` as a list. */
export function stopList(stop: unknown): string[] | undefined {
  if (typeof stop === 'string') return [stop];
  return Array.isArray(stop) ? stop.filter((s): s is string => typeof s === 'string') : undefined;
}

/** Hub usage from prompt and completion counts. */
export function hubUsage(prompt: number, completion: number): Json {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** A whole hub answer with one choice. */
export function hubAnswer(
  ctx: ConvertContext,
  id: string,
  message: Json,
  finishReason: string,
  usage: Json | undefined,
): Json {
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: ctx.model,
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }],
    ...(usage ? { usage } : {}),
  };
}

/** Writes hub stream chunks of one answer: same id, creation time and model on each. */
export class HubChunks {
  readonly #ctx: ConvertContext;
  readonly #id: string;
  readonly #created = Math.floor(Date.now() / 1000);
  #started = false;

  constructor(ctx: ConvertContext, id: string) {
    this.#ctx = ctx;
    this.#id = id;
  }

  /** A delta chunk; the first one carries the assistant role. */
  delta(delta: Json, finishReason: string | null = null): SseEvent {
    const withRole = this.#started ? delta : { role: 'assistant', ...delta };
    this.#started = true;
    return this.#event([{ index: 0, delta: withRole, finish_reason: finishReason }]);
  }

  /** The usage chunk OpenAI streams last: no choices. */
  usage(usage: Json): SseEvent {
    return this.#event([], usage);
  }

  #event(choices: Json[], usage?: Json): SseEvent {
    const chunk = {
      id: this.#id,
      object: 'chat.completion.chunk',
      created: this.#created,
      model: this.#ctx.model,
      choices,
      ...(usage ? { usage } : {}),
    };
    return { data: JSON.stringify(chunk) };
  }
}
