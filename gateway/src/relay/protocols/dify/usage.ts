import type { Json } from '../../convert/types.ts';
import type { Usage } from '../../types.ts';
import { num } from '../upstream-json.ts';

/** Usage of a chat app's `metadata.usage` (blocking answer or message_end). */
export function difyMessageUsage(metadata: unknown): Usage | undefined {
  const usage = (metadata as Json | undefined)?.usage;
  if (!usage || typeof usage !== 'object') return undefined;
  return { promptTokens: num(usage.prompt_tokens), completionTokens: num(usage.completion_tokens) };
}

/**
 * Usage of a workflow run: Dify reports only `total_tokens` over all its LLM nodes, with no split,
 * so all of it is billed as prompt tokens (the completion ratio is not applied).
 */
export function difyWorkflowUsage(data: unknown): Usage | undefined {
  const total = (data as Json | undefined)?.total_tokens;
  return typeof total === 'number' ? { promptTokens: num(total), completionTokens: 0 } : undefined;
}

/** Usage of a whole answer: a chat app's message or a workflow run. */
export function difyUsage(body: unknown): Usage | undefined {
  const answer = body as Json | undefined;
  if (!answer || typeof answer !== 'object') return undefined;
  return answer.data ? difyWorkflowUsage(answer.data) : difyMessageUsage(answer.metadata);
}
