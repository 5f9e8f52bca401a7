import { randomBytes } from 'node:crypto';
import { AppError } from '../../../../errors.ts';
import type { Json } from '../../../convert/types.ts';
import { RELAY_ERRORS } from '../../../errors.ts';

/**
 * What a Responses request asks for that a chat-completions upstream cannot do (stored state,
 * background runs, stored prompts). A client error: rendered as a 400 `invalid_request`.
 */
export class ResponsesConversionError extends AppError {
  override name = 'ResponsesConversionError';

  constructor(detail: string) {
    super(RELAY_ERRORS.invalid_request, { detail });
  }
}

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export const asNumber = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

export const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** An id in OpenAI's style: a type prefix (`resp`, `msg`, `fc`, `rs`, `call`; `chatcmpl` with `-`) and random hex. */
export function newId(prefix: string, separator = '_'): string {
  return `${prefix}${separator}${randomBytes(16).toString('hex')}`;
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Function arguments or outputs as the string both formats carry (some clients send objects). */
export function asJsonText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value);
}

/** Keeps only the keys whose value is defined. */
export function compact<T extends Json>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as T;
}

/** Responses usage → hub usage (cache reads and writes kept as the hub names them). */
export function usageToHub(usage: unknown): Json | undefined {
  if (!isObject(usage)) return undefined;
  const prompt = asNumber(usage.input_tokens) ?? 0;
  const completion = asNumber(usage.output_tokens) ?? 0;
  const cached = asNumber(usage.input_tokens_details?.cached_tokens);
  const written = asNumber(usage.input_tokens_details?.cache_write_tokens);
  const reasoning = asNumber(usage.output_tokens_details?.reasoning_tokens);
  const hub: Json = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: asNumber(usage.total_tokens) ?? prompt + completion,
  };
  if (cached !== undefined || written) {
    hub.prompt_tokens_details = compact({
      cached_tokens: cached ?? 0,
      cache_creation_tokens: written ? written : undefined,
    });
  }
  if (reasoning !== undefined) hub.completion_tokens_details = { reasoning_tokens: reasoning };
  return hub;
}

/** Hub usage → Responses usage (`input_tokens` counts every input token, cache included, as the hub's do). */
export function usageFromHub(usage: unknown): Json | undefined {
  if (!isObject(usage)) return undefined;
  const input = asNumber(usage.prompt_tokens) ?? 0;
  const output = asNumber(usage.completion_tokens) ?? 0;
  const written = asNumber(usage.prompt_tokens_details?.cache_creation_tokens);
  return {
    input_tokens: input,
    input_tokens_details: compact({
      cached_tokens: asNumber(usage.prompt_tokens_details?.cached_tokens) ?? 0,
      cache_write_tokens: written ? written : undefined,
    }),
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: asNumber(usage.completion_tokens_details?.reasoning_tokens) ?? 0 },
    total_tokens: asNumber(usage.total_tokens) ?? input + output,
  };
}

/** A Response's ending → the hub's finish_reason. */
export function finishReasonOf(response: Json, sawToolCall: boolean): string {
  if (response.status === 'incomplete') {
    const reason = response.incomplete_details?.reason;
    if (reason === 'content_filter') return 'content_filter';
    return 'length';
  }
  return sawToolCall ? 'tool_calls' : 'stop';
}

/** The hub's finish_reason → a Response's status and incomplete_details. */
export function endingOf(finishReason: unknown): {
  status: 'completed' | 'incomplete';
  incomplete_details: Json | null;
} {
  if (finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') {
    return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  }
  return { status: 'completed', incomplete_details: null };
}

/** The reasoning text of a Responses reasoning item: its summaries, else its raw reasoning text. */
export function reasoningTextOf(item: Json): string {
  const summaries = asArray(item.summary)
    .map((part) => (isObject(part) ? asString(part.text) : undefined))
    .filter((text): text is string => text !== undefined);
  if (summaries.length > 0) return summaries.join('\n\n');
  return asArray(item.content)
    .map((part) => (isObject(part) ? (asString(part.text) ?? '') : ''))
    .join('');
}

/** The output_text of a Responses message item. */
export function messageTextOf(item: Json): string {
  return asArray(item.content)
    .map((part) => (isObject(part) && part.type === 'output_text' ? (asString(part.text) ?? '') : ''))
    .join('');
}

/** The refusal text of a Responses message item. */
export function messageRefusalOf(item: Json): string {
  return asArray(item.content)
    .map((part) => (isObject(part) && part.type === 'refusal' ? (asString(part.refusal) ?? '') : ''))
    .join('');
}
