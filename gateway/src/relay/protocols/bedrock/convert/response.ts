import type { ConvertContext, Json } from '../../../convert/types.ts';
import { hubAnswer } from '../../hub-answer.ts';
import { isObject } from '../../upstream-json.ts';

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/** Converse's stopReason → the hub's finish_reason. */
export function finishFromConverse(reason: unknown): string {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** Converse usage → hub usage: prompt_tokens count the cache reads and writes that inputTokens leave out. */
export function hubUsageFromConverse(usage: Json): Json {
  const cacheRead = count(usage.cacheReadInputTokens);
  const cacheWrite = count(usage.cacheWriteInputTokens);
  const prompt = count(usage.inputTokens) + cacheRead + cacheWrite;
  const completion = count(usage.outputTokens);
  const details: Json = { cached_tokens: cacheRead };
  if (cacheWrite > 0) details.cache_creation_tokens = cacheWrite;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: details,
  };
}

export const hubCompletionId = () => `chatcmpl-${crypto.randomUUID().replaceAll('-', '')}`;

/** A Converse answer (`output.message.content`, `stopReason`, `usage`) → a hub chat completion. */
export function converseResponseToHub(body: Json, ctx: ConvertContext): Json {
  const content = Array.isArray(body.output?.message?.content) ? body.output.message.content : [];
  const texts: string[] = [];
  const reasoning: string[] = [];
  const calls: Json[] = [];
  for (const block of content) {
    if (!isObject(block)) continue;
    if (typeof block.text === 'string') texts.push(block.text);
    const thought = block.reasoningContent?.reasoningText?.text;
    if (typeof thought === 'string') reasoning.push(thought);
    if (isObject(block.toolUse)) {
      calls.push({
        id: String(block.toolUse.toolUseId ?? ''),
        type: 'function',
        function: { name: String(block.toolUse.name ?? ''), arguments: JSON.stringify(block.toolUse.input ?? {}) },
      });
    }
  }
  const message: Json = { content: texts.length > 0 ? texts.join('') : null };
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('');
  if (calls.length > 0) message.tool_calls = calls;
  return hubAnswer({
    id: hubCompletionId(),
    model: ctx.model,
    message,
    finishReason: finishFromConverse(body.stopReason),
    usage: isObject(body.usage) ? hubUsageFromConverse(body.usage) : undefined,
  });
}
