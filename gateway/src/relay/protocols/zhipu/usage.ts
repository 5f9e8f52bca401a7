import type { Usage } from '../../types.ts';

/** Zhipu's `usage` (an invoke answer's `data.usage`, a stream's finish `meta.usage`). */
export function zhipuUsage(usage: unknown): Usage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const { prompt_tokens: prompt, completion_tokens: completion } = usage as Record<string, unknown>;
  return { promptTokens: count(prompt), completionTokens: count(completion) };
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);
