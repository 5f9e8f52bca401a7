import type { ConvertContext, Json } from '../../../convert/types.ts';
import { hubAnswer } from '../../hub-answer.ts';
import { hubUsageFromCohere } from '../usage.ts';
import { asArray, asString, isObject } from './fields.ts';

/** Cohere's finish reasons → the hub's. */
export function finishToHub(reason: unknown): string {
  switch (reason) {
    case 'MAX_TOKENS':
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    default:
      return 'stop';
  }
}

/** A whole Cohere v2 chat answer → a hub (OpenAI chat) answer. */
export function cohereChatToHub(body: Json, ctx: ConvertContext): Json {
  const reply = isObject(body.message) ? body.message : {};
  const parts = asArray(reply.content).filter(isObject);
  const text = parts
    .filter((part) => part.type === 'text')
    .map((part) => asString(part.text) ?? '')
    .join('');
  const thinking = parts
    .filter((part) => part.type === 'thinking')
    .map((part) => asString(part.thinking) ?? '')
    .join('');
  const calls = asArray(reply.tool_calls)
    .filter(isObject)
    .map((call) => ({
      id: asString(call.id) ?? '',
      type: 'function',
      function: { name: asString(call.function?.name) ?? '', arguments: asString(call.function?.arguments) ?? '{}' },
    }));
  const message: Json = { content: text === '' && calls.length > 0 ? null : text };
  // Thinking, and the plan Cohere writes before calling tools, are the hub's reasoning text.
  const reasoning = thinking || asString(reply.tool_plan);
  if (reasoning) message.reasoning_content = reasoning;
  if (calls.length > 0) message.tool_calls = calls;
  return hubAnswer({
    id: asString(body.id) ?? 'chatcmpl-cohere',
    model: ctx.model,
    message,
    finishReason: finishToHub(body.finish_reason),
    usage: hubUsageFromCohere(body.usage),
  });
}
