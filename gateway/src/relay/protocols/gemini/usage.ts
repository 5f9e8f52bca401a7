import type { Usage, WireFormat } from '../../types.ts';

type Json = Record<string, any>;

const num = (value: unknown) => {
  const parsed = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof parsed === 'number' && Number.isFinite(parsed) && parsed > 0 ? parsed : 0;
};

/**
 * Usage from Gemini's usageMetadata. promptTokenCount already includes the cached tokens
 * (cachedContentTokenCount); tool-use prompt tokens (e.g. search results) are input too. Thoughts
 * are billed as output: completionTokens is candidates + thoughts, with the thoughts as reasoningTokens.
 */
export function usageFromMetadata(metadata: unknown): Usage | undefined {
  if (typeof metadata !== 'object' || metadata === null) return undefined;
  const m = metadata as Json;
  const thoughts = num(m.thoughtsTokenCount);
  const usage: Usage = {
    promptTokens: num(m.promptTokenCount) + num(m.toolUsePromptTokenCount),
    completionTokens: num(m.candidatesTokenCount) + thoughts,
  };
  const cached = num(m.cachedContentTokenCount);
  if (cached > 0) usage.cachedTokens = cached;
  if (thoughts > 0) usage.reasoningTokens = thoughts;
  return usage;
}

/**
 * Usage of a whole Gemini answer: its usageMetadata (of the last element that has one, for the JSON
 * array a stream without alt=sse returns). Embedding answers carry none: undefined, to be estimated.
 */
export function geminiUsage(_format: WireFormat, body: unknown): Usage | undefined {
  const answers = Array.isArray(body) ? body : [body];
  for (let i = answers.length - 1; i >= 0; i--) {
    const usage = usageFromMetadata((answers[i] as Json | undefined)?.usageMetadata);
    if (usage) return usage;
  }
  return undefined;
}
