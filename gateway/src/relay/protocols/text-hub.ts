import type { Json } from '../convert/types.ts';
import type { SseEvent } from '../sse.ts';
import type { WireFormat } from '../types.ts';

/**
 * The hub (OpenAI chat) side of upstreams that take one text and answer text — app platforms (Dify,
 * Coze) and prediction APIs (Replicate): the last user message out, answers and stream chunks back,
 * and the OpenAI error types of their HTTP statuses.
 */

/** The chat-like client formats, all served through the hub. */
export const CHAT_FORMATS: ReadonlySet<WireFormat> = new Set<WireFormat>([
  'openai-chat',
  'openai-responses',
  'claude-messages',
  'gemini-generate',
]);

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The text of a hub message's content (a string, or the text parts of an array). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part) => part?.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('\n');
}

/** The last user message of a hub request: what an app answers (it keeps the earlier turns itself). */
export function lastUserMessage(body: Json): Json {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = [...messages].reverse().find((m) => m?.role === 'user');
  if (!last) throw new Error('the request has no user message to send');
  return last;
}

/** The image URLs of a hub message's content parts. */
export function imageUrls(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return content
    .filter((part) => part?.type === 'image_url')
    .map((part) => (typeof part.image_url === 'string' ? part.image_url : part.image_url?.url))
    .filter((url): url is string => typeof url === 'string');
}

/** Refuses client tools: the app's own configuration owns its tools, it never calls a client's. */
export function refuseTools(body: Json, upstream: string): void {
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    throw new Error(`${upstream} runs the tools configured in the app itself; a request's own tools cannot be used`);
  }
}

export interface HubUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export const hubUsage = (prompt: number, completion: number): HubUsage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

/** A whole hub answer of one text. `extra` carries upstream facts a client may need (a conversation id). */
export function hubAnswer(input: {
  id: string;
  model: string;
  text: string;
  finishReason?: string;
  usage?: HubUsage | undefined;
  extra?: Json;
}): Json {
  return {
    id: input.id,
    object: 'chat.completion',
    created: nowSeconds(),
    model: input.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: input.text },
        finish_reason: input.finishReason ?? 'stop',
      },
    ],
    ...(input.usage ? { usage: input.usage } : {}),
    ...input.extra,
  };
}

/** Builds the hub chunks of one streamed answer: a role chunk first, text deltas, a finish and a usage chunk. */
export class HubChunks {
  readonly #id: string;
  readonly #model: string;
  readonly #created = nowSeconds();
  #extra: Json = {};
  #started = false;
  #finished = false;

  constructor(id: string, model: string) {
    this.#id = id;
    this.#model = model;
  }

  /** Fields every later chunk carries (a conversation id, once the upstream names it). */
  carry(extra: Json): void {
    this.#extra = { ...this.#extra, ...extra };
  }

  get finished(): boolean {
    return this.#finished;
  }

  text(content: string): SseEvent[] {
    if (content === '') return [];
    return [...this.#start(), this.#chunk([{ index: 0, delta: { content }, finish_reason: null }])];
  }

  reasoning(content: string): SseEvent[] {
    if (content === '') return [];
    return [...this.#start(), this.#chunk([{ index: 0, delta: { reasoning_content: content }, finish_reason: null }])];
  }

  /** The finish chunk, then the usage chunk when the upstream reported usage; once only. */
  finish(usage: HubUsage | undefined, reason = 'stop'): SseEvent[] {
    if (this.#finished) return [];
    this.#finished = true;
    const events = [...this.#start(), this.#chunk([{ index: 0, delta: {}, finish_reason: reason }])];
    if (usage) events.push(this.#chunk([], { usage }));
    return events;
  }

  /** An OpenAI-style error chunk, as the hub streams an upstream's mid-stream failure. */
  error(message: string, code: string | null): SseEvent[] {
    this.#finished = true;
    return [{ data: JSON.stringify({ error: { message, type: 'upstream_error', code } }) }];
  }

  #start(): SseEvent[] {
    if (this.#started) return [];
    this.#started = true;
    return [this.#chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }])];
  }

  #chunk(choices: Json[], more: Json = {}): SseEvent {
    return {
      data: JSON.stringify({
        id: this.#id,
        object: 'chat.completion.chunk',
        created: this.#created,
        model: this.#model,
        choices,
        ...this.#extra,
        ...more,
      }),
    };
  }
}

/** Parses an event's JSON data; undefined when it is not a JSON object. */
export function eventJson(event: SseEvent): Json | undefined {
  try {
    const value: unknown = JSON.parse(event.data);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

export const num = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;

/** OpenAI error types for the HTTP statuses an app platform answers. */
export function errorType(status: number): string {
  if (status === 400 || status === 404 || status === 413 || status === 415) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  return 'upstream_error';
}
