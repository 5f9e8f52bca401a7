import type { Json } from '../../convert/types.ts';
import type { Usage, WireFormat } from '../../types.ts';
import { hubUsage } from '../hub-answer.ts';

/**
 * Cohere's usage report `{billed_units: {input_tokens, output_tokens, search_units}, tokens:
 * {input_tokens, output_tokens}, cached_tokens}` (chat: `usage`; embed and rerank: `meta`). The
 * billed units are what Cohere charges for, so they are what the gateway bills from; the raw token
 * counts (which include Cohere's own system prompt) only stand in when no billed units came.
 */
export function usageFromCohere(report: unknown): Usage | undefined {
  if (!report || typeof report !== 'object') return undefined;
  const { billed_units: billed, tokens, cached_tokens: cached } = report as Json;
  const source = hasTokens(billed) ? billed : hasTokens(tokens) ? tokens : undefined;
  if (!source) return undefined;
  const usage: Usage = { promptTokens: count(source.input_tokens), completionTokens: count(source.output_tokens) };
  if (count(cached) > 0) usage.cachedTokens = count(cached);
  return usage;
}

/**
 * Usage of a whole Cohere answer. A rerank answer reports `search_units` (one per query of up to
 * 100 documents), not tokens: it gives none here, so the relay bills the tokens it counts locally, as
 * for every rerank upstream, or the model's per-call price when one is set.
 */
export function cohereUsage(format: WireFormat, body: unknown): Usage | undefined {
  const answer = body as Json | undefined;
  return usageFromCohere(format === 'cohere-chat' ? answer?.usage : answer?.meta);
}

/** The hub's (OpenAI's) usage object for a Cohere report. */
export function hubUsageFromCohere(report: unknown): Json | undefined {
  const usage = usageFromCohere(report);
  if (!usage) return undefined;
  const hub: Json = hubUsage(usage.promptTokens, usage.completionTokens);
  if (usage.cachedTokens) hub.prompt_tokens_details = { cached_tokens: usage.cachedTokens };
  return hub;
}

function hasTokens(value: unknown): value is Json {
  if (!value || typeof value !== 'object') return false;
  const { input_tokens: input, output_tokens: output } = value as Json;
  return typeof input === 'number' || typeof output === 'number';
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);
