import type { ConvertContext, Json } from '../../../convert/types.ts';
import { hubAnswer } from '../../hub-answer.ts';
import { messageText } from '../../hub-request.ts';
import {
  claudeMessageId,
  claudeUsageFromHub,
  finishReasonFromClaude,
  hubCompletionId,
  hubUsageFromClaude,
  isObject,
  stopReasonFromHub,
  toolInput,
} from './shared.ts';

/** A whole Claude message → a hub chat completion. */
export function claudeResponseToHub(body: Json, ctx: ConvertContext): Json {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const redacted: string[] = [];
  let signature: string | undefined;
  const calls: Json[] = [];
  for (const block of Array.isArray(body.content) ? body.content : []) {
    if (!isObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'thinking') {
      if (typeof block.thinking === 'string') reasoning.push(block.thinking);
      if (typeof block.signature === 'string' && block.signature !== '') signature = block.signature;
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') redacted.push(block.data);
    else if (block.type === 'tool_use') {
      calls.push({
        id: String(block.id ?? ''),
        type: 'function',
        function: { name: String(block.name ?? ''), arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const message: Json = { content: texts.length > 0 ? texts.join('') : null };
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('');
  if (signature !== undefined) message.reasoning_signature = signature;
  if (redacted.length > 0) message.redacted_reasoning = redacted;
  if (calls.length > 0) message.tool_calls = calls;
  return hubAnswer({
    id: hubCompletionId(body.id),
    model: ctx.model,
    message,
    finishReason: finishReasonFromClaude(body.stop_reason) ?? 'stop',
    usage: isObject(body.usage) ? hubUsageFromClaude(body.usage) : undefined,
  });
}

/** A whole hub chat completion → a Claude message (its first choice: Claude answers one). */
export function claudeResponseFromHub(body: Json, ctx: ConvertContext): Json {
  const choice = Array.isArray(body.choices) ? body.choices.find(isObject) : undefined;
  const message: Json = isObject(choice?.message) ? choice.message : {};
  const content: Json[] = [];
  const reasoning = typeof message.reasoning_content === 'string' ? message.reasoning_content : message.reasoning;
  if (typeof reasoning === 'string' && reasoning !== '') {
    content.push({
      type: 'thinking',
      thinking: reasoning,
      signature: typeof message.reasoning_signature === 'string' ? message.reasoning_signature : '',
    });
  }
  for (const data of Array.isArray(message.redacted_reasoning) ? message.redacted_reasoning : []) {
    if (typeof data === 'string' && data !== '') content.push({ type: 'redacted_thinking', data });
  }
  const text = messageText(message.content, '') || (typeof message.refusal === 'string' ? message.refusal : '');
  if (text !== '') content.push({ type: 'text', text });
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isObject(call) || !isObject(call.function)) continue;
    content.push({
      type: 'tool_use',
      id: String(call.id ?? ''),
      name: String(call.function.name ?? ''),
      input: toolInput(call.function.arguments),
    });
  }
  const refused = typeof message.refusal === 'string' && message.refusal !== '';
  return {
    id: claudeMessageId(body.id),
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: refused ? 'refusal' : stopReasonFromHub(choice?.finish_reason),
    stop_sequence: null,
    usage: claudeUsageFromHub(isObject(body.usage) ? body.usage : {}),
  };
}
