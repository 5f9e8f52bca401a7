import { AppError } from '../../../../errors.ts';
import type { ConvertContext, Json } from '../../../convert/types.ts';
import { RELAY_ERRORS } from '../../../errors.ts';
import {
  asArray,
  asJsonText,
  asNumber,
  asString,
  compact,
  endingOf,
  finishReasonOf,
  isObject,
  messageRefusalOf,
  messageTextOf,
  newId,
  nowSeconds,
  reasoningTextOf,
  usageFromHub,
  usageToHub,
} from './common.ts';

/**
 * Whole answers: a Response object ⇄ a chat completion (hub).
 *
 * Response → chat: reasoning items → `reasoning_content` (summaries, else raw reasoning text, joined by blank
 * lines) and `reasoning_signature` (`encrypted_content`); message items → `content` (output_text) and `refusal`;
 * function_call items → `tool_calls` (call_id → id); status incomplete → finish_reason `length` (or
 * `content_filter`), else `tool_calls` when the model called a function, else `stop`. Items of built-in tools
 * (web_search_call, …) have no chat form. A failed response (status `failed`) is an upstream error (502).
 *
 * chat → Response: a new `resp_…` id, the client's model, output items in the order reasoning, message,
 * function calls; finish_reason `length` → status `incomplete` with reason `max_output_tokens`. The request's
 * echo fields (tools, temperature, …) are not known here and are left out.
 */

export function responsesResponseToChat(body: Json, ctx: ConvertContext): Json {
  if (body.status === 'failed' || isObject(body.error)) {
    throw new AppError(RELAY_ERRORS.upstream_error, {
      detail: asString(body.error?.message) ?? 'the upstream response failed',
    });
  }
  let content = '';
  let refusal = '';
  const reasoning: string[] = [];
  let signature: string | undefined;
  const toolCalls: Json[] = [];
  for (const item of asArray(body.output)) {
    if (!isObject(item)) continue;
    if (item.type === 'reasoning') {
      const text = reasoningTextOf(item);
      if (text) reasoning.push(text);
      signature = asString(item.encrypted_content) ?? signature;
    } else if (item.type === 'message') {
      content += messageTextOf(item);
      refusal += messageRefusalOf(item);
    } else if (item.type === 'function_call') {
      toolCalls.push({
        id: asString(item.call_id) ?? asString(item.id) ?? newId('call'),
        type: 'function',
        function: { name: asString(item.name) ?? '', arguments: asJsonText(item.arguments) },
      });
    }
  }
  const message: Json = { role: 'assistant', content: content || (toolCalls.length > 0 ? null : '') };
  if (refusal) message.refusal = refusal;
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('\n\n');
  if (signature) message.reasoning_signature = signature;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return compact({
    id: asString(body.id) ?? newId('chatcmpl', '-'),
    object: 'chat.completion',
    created: asNumber(body.created_at) ?? nowSeconds(),
    model: ctx.model,
    choices: [{ index: 0, message, finish_reason: finishReasonOf(body, toolCalls.length > 0), logprobs: null }],
    usage: usageToHub(body.usage),
  });
}

export function chatResponseToResponses(body: Json, ctx: ConvertContext): Json {
  const choice = asArray(body.choices).find(isObject) ?? {};
  const message: Json = isObject(choice.message) ? choice.message : {};
  const { status, incomplete_details } = endingOf(choice.finish_reason);
  const output: Json[] = [];
  const reasoning = asString(message.reasoning_content);
  const signature = asString(message.reasoning_signature);
  if (reasoning || signature) {
    output.push(
      compact({
        id: newId('rs'),
        type: 'reasoning',
        summary: reasoning ? [{ type: 'summary_text', text: reasoning }] : [],
        encrypted_content: signature,
      }),
    );
  }
  const text =
    typeof message.content === 'string'
      ? message.content
      : asArray(message.content)
          .map((part) => (isObject(part) && part.type === 'text' ? (asString(part.text) ?? '') : ''))
          .join('');
  const refusal = asString(message.refusal);
  if (text || refusal) {
    const parts: Json[] = [];
    if (text) parts.push({ type: 'output_text', text, annotations: [], logprobs: [] });
    if (refusal) parts.push({ type: 'refusal', refusal });
    output.push({
      id: newId('msg'),
      type: 'message',
      role: 'assistant',
      status: status === 'incomplete' ? 'incomplete' : 'completed',
      content: parts,
    });
  }
  for (const call of asArray(message.tool_calls)) {
    if (!isObject(call) || !isObject(call.function)) continue;
    output.push({
      id: newId('fc'),
      type: 'function_call',
      status: 'completed',
      call_id: asString(call.id) ?? newId('call'),
      name: asString(call.function.name) ?? '',
      arguments: asJsonText(call.function.arguments),
    });
  }
  return compact({
    id: newId('resp'),
    object: 'response',
    created_at: asNumber(body.created) ?? nowSeconds(),
    status,
    error: null,
    incomplete_details,
    model: ctx.model,
    output,
    usage: usageFromHub(body.usage),
  });
}
