import type { Usage } from '../../types.ts';

/** Usage as ERNIE v1 reports it on chat and embeddings answers (and on each stream event). */
export function baiduUsage(body: unknown): Usage | undefined {
  const usage = (body as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } } | undefined)?.usage;
  if (!usage || typeof usage !== 'object') return undefined;
  return { promptTokens: count(usage.prompt_tokens), completionTokens: count(usage.completion_tokens) };
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);
