import type { Usage, WireFormat } from '../../types.ts';

type Json = Record<string, any>;

/** Usage as OpenAI reports it: chat/completions/embeddings style, or the Responses API style. */
export function openAIUsage(format: WireFormat, body: unknown): Usage | undefined {
  const usage = (body as Json | undefined)?.usage as Json | undefined;
  if (!usage || typeof usage !== 'object') return undefined;
  if (format === 'openai-responses' || 'input_tokens' in usage) {
    return clean({
      promptTokens: num(usage.input_tokens),
      completionTokens: num(usage.output_tokens),
      cachedTokens: num(usage.input_tokens_details?.cached_tokens),
      reasoningTokens: num(usage.output_tokens_details?.reasoning_tokens),
    });
  }
  return clean({
    promptTokens: num(usage.prompt_tokens),
    completionTokens: num(usage.completion_tokens),
    cachedTokens: num(usage.prompt_tokens_details?.cached_tokens),
    audioInputTokens: num(usage.prompt_tokens_details?.audio_tokens),
    reasoningTokens: num(usage.completion_tokens_details?.reasoning_tokens),
    audioOutputTokens: num(usage.completion_tokens_details?.audio_tokens),
  });
}

const num = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0);

function clean(usage: Usage): Usage {
  const result: Usage = { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens };
  for (const [key, value] of Object.entries(usage) as Array<[keyof Usage, number]>) {
    if (key !== 'promptTokens' && key !== 'completionTokens' && value > 0)
      (result as unknown as Record<string, number>)[key] = value;
  }
  return result;
}
