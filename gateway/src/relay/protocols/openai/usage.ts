import { transcriptionTokens } from '../../../domain/billing/index.ts';
import type { Usage, WireFormat } from '../../types.ts';

type Json = Record<string, any>;

/**
 * Usage as OpenAI reports it: chat/completions/embeddings style, the Responses and image style
 * (input/output tokens), or a transcription's audio duration.
 */
export function openAIUsage(format: WireFormat, body: unknown): Usage | undefined {
  const answer = body as Json | undefined;
  const usage = answer?.usage as Json | undefined;
  if (!usage || typeof usage !== 'object') {
    // verbose_json transcriptions report only the duration.
    const seconds = num(answer?.duration);
    return isTranscription(format) && seconds > 0
      ? { promptTokens: transcriptionTokens(seconds), completionTokens: 0 }
      : undefined;
  }
  if (usage.type === 'duration') return { promptTokens: transcriptionTokens(num(usage.seconds)), completionTokens: 0 };
  if (format === 'openai-responses' || 'input_tokens' in usage) {
    // Transcriptions spell it input_token_details, Responses and images input_tokens_details.
    const details = usage.input_tokens_details ?? usage.input_token_details;
    return clean({
      promptTokens: num(usage.input_tokens),
      completionTokens: num(usage.output_tokens),
      cachedTokens: num(details?.cached_tokens),
      imageInputTokens: num(details?.image_tokens),
      audioInputTokens: num(details?.audio_tokens),
      reasoningTokens: num(usage.output_tokens_details?.reasoning_tokens),
      webSearchCalls: countOutputs(answer?.output, 'web_search_call'),
      fileSearchCalls: countOutputs(answer?.output, 'file_search_call'),
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

const isTranscription = (format: WireFormat) =>
  format === 'openai-audio-transcriptions' || format === 'openai-audio-translations';

/** Paid tool calls of a Responses answer: its output items of the tool's type. */
function countOutputs(output: unknown, type: string): number {
  return Array.isArray(output) ? output.filter((item) => item?.type === type).length : 0;
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
