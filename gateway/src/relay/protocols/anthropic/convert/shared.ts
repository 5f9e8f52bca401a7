import type { Json } from '../../../convert/types.ts';

/**
 * Pieces both directions of the Claude conversion share: stop reasons, usage, ids and the small
 * guards every converter needs when reading untrusted JSON.
 */

/** A non-negative finite number, else 0. */
export const count = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Claude's stop_reason → the hub's finish_reason. */
export function finishReasonFromClaude(reason: unknown): string | null {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return typeof reason === 'string' && reason !== '' ? 'stop' : null;
  }
}

/** The hub's finish_reason → Claude's stop_reason. */
export function stopReasonFromHub(reason: unknown): string {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/**
 * Claude usage → hub usage. Claude's input_tokens exclude the cache, the hub's prompt_tokens count
 * every input token, so cache reads and writes are added in and named in prompt_tokens_details.
 */
export function hubUsageFromClaude(usage: Json): Json {
  const input = count(usage.input_tokens);
  const cacheRead = count(usage.cache_read_input_tokens);
  const cacheWrite = count(usage.cache_creation_input_tokens);
  const cacheWrite1h = count(usage.cache_creation?.ephemeral_1h_input_tokens);
  const output = count(usage.output_tokens);
  const prompt = input + cacheRead + cacheWrite;
  const details: Json = { cached_tokens: cacheRead };
  if (cacheWrite > 0) details.cache_creation_tokens = cacheWrite;
  if (cacheWrite1h > 0) details.cache_creation_1h_tokens = cacheWrite1h;
  const hub: Json = {
    prompt_tokens: prompt,
    completion_tokens: output,
    total_tokens: prompt + output,
    prompt_tokens_details: details,
  };
  const thinking = count(usage.output_tokens_details?.thinking_tokens);
  if (thinking > 0) hub.completion_tokens_details = { reasoning_tokens: thinking };
  return hub;
}

/** Hub usage → Claude usage: cache reads and writes come back out of the input count. */
export function claudeUsageFromHub(usage: Json): Json {
  const prompt = count(usage.prompt_tokens);
  const cacheRead = count(usage.prompt_tokens_details?.cached_tokens);
  const cacheWrite = count(usage.prompt_tokens_details?.cache_creation_tokens);
  const cacheWrite1h = Math.min(cacheWrite, count(usage.prompt_tokens_details?.cache_creation_1h_tokens));
  return {
    input_tokens: Math.max(0, prompt - cacheRead - cacheWrite),
    output_tokens: count(usage.completion_tokens),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    cache_creation: {
      ephemeral_5m_input_tokens: cacheWrite - cacheWrite1h,
      ephemeral_1h_input_tokens: cacheWrite1h,
    },
  };
}

/** A Claude message id for an answer that came from elsewhere (Claude ids start with msg_). */
export function claudeMessageId(id: unknown): string {
  if (typeof id === 'string' && id !== '') return id.startsWith('msg_') ? id : `msg_${id}`;
  return `msg_${crypto.randomUUID().replaceAll('-', '')}`;
}

/** A chat completion id for an answer that came from Claude: its own id, which clients take as it is. */
export function hubCompletionId(id: unknown): string {
  return typeof id === 'string' && id !== '' ? id : `chatcmpl-${crypto.randomUUID().replaceAll('-', '')}`;
}

/** Tool arguments as Claude wants them: a JSON object, whatever the hub's string held. */
export function toolInput(args: unknown): Json {
  if (isObject(args)) return args;
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}
