import type { Usage } from '../../types.ts';

type Json = Record<string, any>;

const num = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/**
 * Claude usage in the canonical form. Claude's input_tokens leave the cache out; promptTokens counts
 * every input token, so cache reads and writes are added back in and named beside it.
 */
export function claudeUsage(usage: unknown): Usage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const u = usage as Json;
  const cacheRead = num(u.cache_read_input_tokens);
  const cacheWrite = num(u.cache_creation_input_tokens);
  const result: Usage = {
    promptTokens: num(u.input_tokens) + cacheRead + cacheWrite,
    completionTokens: num(u.output_tokens),
  };
  if (cacheRead > 0) result.cachedTokens = cacheRead;
  if (cacheWrite > 0) result.cacheCreationTokens = cacheWrite;
  const oneHour = Math.min(cacheWrite, num(u.cache_creation?.ephemeral_1h_input_tokens));
  if (oneHour > 0) result.cacheCreation1hTokens = oneHour;
  const thinking = num(u.output_tokens_details?.thinking_tokens);
  if (thinking > 0) result.reasoningTokens = thinking;
  const searches = num(u.server_tool_use?.web_search_requests);
  if (searches > 0) result.webSearchCalls = searches;
  return result;
}

/** Usage of a whole Claude message (`{…, usage}`). */
export function claudeUsageFromBody(_format: unknown, body: unknown): Usage | undefined {
  return claudeUsage((body as Json | undefined)?.usage);
}
