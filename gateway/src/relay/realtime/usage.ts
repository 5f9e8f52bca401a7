import type { Usage } from '../types.ts';

/** `response.usage` of a Realtime `response.done` event (beta and GA alike). */
interface RealtimeUsage {
  input_tokens?: number;
  output_tokens?: number;
  input_token_details?: {
    text_tokens?: number;
    audio_tokens?: number;
    image_tokens?: number;
    cached_tokens?: number;
    cached_tokens_details?: { text_tokens?: number; audio_tokens?: number; image_tokens?: number };
  };
  output_token_details?: { text_tokens?: number; audio_tokens?: number };
}

const count = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;

/**
 * The usage of one Realtime response, in the relay's canonical form. Billing splits the prompt into
 * disjoint parts (plain text, cached, audio, image), while Realtime counts cached tokens inside the
 * audio and image counts too: only their uncached parts are priced as audio and image here, the
 * cached ones at the cache ratio.
 */
export function realtimeUsage(raw: unknown): Usage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const usage = raw as RealtimeUsage;
  const input = usage.input_token_details ?? {};
  const output = usage.output_token_details ?? {};
  const cached = input.cached_tokens_details ?? {};
  return {
    promptTokens: count(usage.input_tokens),
    completionTokens: count(usage.output_tokens),
    cachedTokens: count(input.cached_tokens),
    audioInputTokens: Math.max(0, count(input.audio_tokens) - count(cached.audio_tokens)),
    imageInputTokens: Math.max(0, count(input.image_tokens) - count(cached.image_tokens)),
    audioOutputTokens: count(output.audio_tokens),
  };
}

/** A running total of the session's usage, for its consume log. */
export function addUsage(total: Usage, usage: Usage): Usage {
  const sum = (a: number | undefined, b: number | undefined) => (a ?? 0) + (b ?? 0);
  return {
    promptTokens: total.promptTokens + usage.promptTokens,
    completionTokens: total.completionTokens + usage.completionTokens,
    cachedTokens: sum(total.cachedTokens, usage.cachedTokens),
    audioInputTokens: sum(total.audioInputTokens, usage.audioInputTokens),
    imageInputTokens: sum(total.imageInputTokens, usage.imageInputTokens),
    audioOutputTokens: sum(total.audioOutputTokens, usage.audioOutputTokens),
  };
}
