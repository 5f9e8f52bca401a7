import type { Usage } from '../../types.ts';

type Json = Record<string, any>;

/** Hunyuan's `Usage` in the canonical form (its prompt count includes cached tokens, as OpenAI's does). */
export function tencentUsage(usage: unknown): Usage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const u = usage as Json;
  const result: Usage = {
    promptTokens: Number(u.PromptTokens) || 0,
    completionTokens: Number(u.CompletionTokens) || 0,
  };
  const cached = Number(u.PromptTokensDetails?.CachedTokens) || 0;
  if (cached > 0) result.cachedTokens = cached;
  return result;
}

/** Usage of a whole answer (`{Response: {Usage}}`). */
export function tencentUsageFromBody(_format: unknown, body: unknown): Usage | undefined {
  const answer = (body as Json | undefined)?.Response ?? body;
  return tencentUsage((answer as Json | undefined)?.Usage);
}
