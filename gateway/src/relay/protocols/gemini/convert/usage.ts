import type { Json } from '../../../convert/types.ts';
import { count, isObject } from './fields.ts';

/**
 * Usage between Gemini's usageMetadata and the hub's OpenAI usage. Gemini's promptTokenCount already
 * includes the cached tokens (cachedContentTokenCount), as the hub's prompt_tokens does; Gemini bills
 * thoughts as output but counts them apart (thoughtsTokenCount), so the hub's completion_tokens is
 * candidates + thoughts with the thoughts as reasoning_tokens. Tokens of tool-use prompts (search
 * results fed back to the model) are input too and join prompt_tokens.
 */
export function usageToHub(metadata: unknown): Json | undefined {
  if (!isObject(metadata)) return undefined;
  const prompt = count(metadata.promptTokenCount) + count(metadata.toolUsePromptTokenCount);
  const thoughts = count(metadata.thoughtsTokenCount);
  const completion = count(metadata.candidatesTokenCount) + thoughts;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: count(metadata.cachedContentTokenCount) },
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
}

/** The hub's usage as Gemini's usageMetadata. */
export function usageFromHub(usage: unknown): Json | undefined {
  if (!isObject(usage)) return undefined;
  const prompt = count(usage.prompt_tokens ?? usage.input_tokens);
  const completion = count(usage.completion_tokens ?? usage.output_tokens);
  const reasoning = Math.min(
    completion,
    count((usage.completion_tokens_details ?? usage.output_tokens_details)?.reasoning_tokens),
  );
  const cached = count((usage.prompt_tokens_details ?? usage.input_tokens_details)?.cached_tokens);
  const metadata: Json = {
    promptTokenCount: prompt,
    candidatesTokenCount: completion - reasoning,
    totalTokenCount: prompt + completion,
  };
  if (cached > 0) metadata.cachedContentTokenCount = cached;
  if (reasoning > 0) metadata.thoughtsTokenCount = reasoning;
  return metadata;
}

/** Gemini finish reasons that mean "withheld by a filter". */
const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/** Gemini's finishReason as the hub's finish_reason (a turn that called tools ends in tool_calls). */
export function finishToHub(reason: unknown, calledTools: boolean): string {
  if (calledTools) return 'tool_calls';
  if (reason === 'MAX_TOKENS') return 'length';
  if (typeof reason === 'string' && FILTERED.has(reason)) return 'content_filter';
  return 'stop';
}

/** The hub's finish_reason as Gemini's finishReason (Gemini ends a tool-calling turn with STOP). */
export function finishFromHub(reason: unknown): string {
  if (reason === 'length') return 'MAX_TOKENS';
  if (reason === 'content_filter') return 'SAFETY';
  return 'STOP';
}
