import type { Usage, WireFormat } from '../../types.ts';
import { claudeUsageFromBody } from '../anthropic/index.ts';

const count = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;

/**
 * Converse usage `{inputTokens, outputTokens, cacheReadInputTokens, cacheWriteInputTokens}`:
 * inputTokens leave the cache out, so reads and writes are added to the prompt as the canonical
 * usage counts it.
 */
export function converseUsage(usage: unknown): Usage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const u = usage as Record<string, unknown>;
  const cacheRead = count(u.cacheReadInputTokens);
  const cacheWrite = count(u.cacheWriteInputTokens);
  const result: Usage = {
    promptTokens: count(u.inputTokens) + cacheRead + cacheWrite,
    completionTokens: count(u.outputTokens),
  };
  if (cacheRead > 0) result.cachedTokens = cacheRead;
  if (cacheWrite > 0) result.cacheCreationTokens = cacheWrite;
  return result;
}

/** A whole answer's usage: Claude's own for InvokeModel, Converse's `usage` otherwise. */
export function bedrockUsageFromBody(format: WireFormat, body: unknown): Usage | undefined {
  if (format === 'claude-messages') return claudeUsageFromBody(format, body);
  return converseUsage((body as { usage?: unknown } | null)?.usage);
}
