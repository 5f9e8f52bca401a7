import { estimateCompletionTokens } from '../../domain/billing/index.ts';
import type { Usage } from '../types.ts';

/**
 * The usage a cut stream is billed: what it delivered. Its upstream never sent the final count, so the
 * completion is the delivered text's tokens (or the upstream's running count, if higher: Gemini reports
 * one per chunk); the prompt is the upstream's when it said (Claude's message_start), else the estimate.
 */
export function deliveredUsage(
  metered: { usage: Usage | undefined; text(): string; toolCalls: number },
  model: string,
  promptEstimate: number,
): Usage {
  const reported = metered.usage;
  const completionTokens = Math.max(
    estimateCompletionTokens(model, metered.text(), metered.toolCalls),
    reported?.completionTokens ?? 0,
  );
  if (reported && reported.promptTokens > 0) return { ...reported, completionTokens, estimated: true };
  return { promptTokens: promptEstimate, completionTokens, estimated: true };
}
