import type { ConvertContext, Json, StreamConverter } from '../../../convert/types.ts';
import { parsedData, type SseEvent } from '../../../sse.ts';
import {
  asArray,
  asJsonText,
  asNumber,
  asString,
  endingOf,
  isObject,
  newId,
  nowSeconds,
  usageFromHub,
} from './common.ts';

/**
 * Hub chunks (OpenAI chat.completion.chunk) → a Responses stream, event by event. Every event carries its
 * `event:` name, `type` and `sequence_number`:
 * - `response.created` and `response.in_progress` before anything else;
 * - reasoning_content → a reasoning item (`output_item.added`, `reasoning_summary_part.added`,
 *   `reasoning_summary_text.delta`…), reasoning_signature → its encrypted_content;
 * - content / refusal → a message item (`output_item.added`, `content_part.added`, `output_text.delta` or
 *   `refusal.delta`…);
 * - tool_calls → one function_call item per call (`output_item.added` with call_id and name,
 *   `function_call_arguments.delta`…); a new id at an index already used starts a new call, as some
 *   OpenAI-compatible upstreams send every call at index 0;
 * - an item is closed (its `.done` events, `output_item.done`) when another kind of output starts or the answer
 *   finishes; `response.completed` (or `response.incomplete` for finish_reason length / content_filter) carries
 *   the whole response: output assembled from what was streamed, and usage. It is sent once both the finish and
 *   the usage are known (usage usually comes in a chunk of its own after the finish), else by end().
 * - an error chunk (`{error: {…}}`) → an `error` event, then `response.failed`.
 */

interface ReasoningState {
  kind: 'reasoning';
  index: number;
  item: Json;
  text: string;
  partOpen: boolean;
}

interface MessagePart {
  type: 'output_text' | 'refusal';
  text: string;
}

interface MessageState {
  kind: 'message';
  index: number;
  item: Json;
  parts: MessagePart[];
  /** Whether the last part is still open. */
  partOpen: boolean;
}

interface FunctionState {
  index: number;
  item: Json;
}

export function chatStreamToResponses(ctx: ConvertContext): StreamConverter {
  const responseId = newId('resp');
  let createdAt = nowSeconds();
  let sequence = 0;
  let started = false;
  let closed = false;
  const output: Json[] = [];
  let current: ReasoningState | MessageState | undefined;
  const functions = new Map<number, FunctionState>();
  let finishReason: string | undefined;
  let usage: Json | undefined;

  const emit = (out: SseEvent[], type: string, fields: Json): void => {
    out.push({ event: type, data: JSON.stringify({ type, sequence_number: sequence++, ...fields }) });
  };

  const response = (status: string, fields: Json = {}): Json => ({
    id: responseId,
    object: 'response',
    created_at: createdAt,
    status,
    error: null,
    incomplete_details: null,
    model: ctx.model,
    output: output.filter((item) => item !== undefined),
    usage: null,
    ...fields,
  });

  const start = (out: SseEvent[]): void => {
    if (started) return;
    started = true;
    emit(out, 'response.created', { response: response('in_progress') });
    emit(out, 'response.in_progress', { response: response('in_progress') });
  };

  const addItem = (out: SseEvent[], item: Json): number => {
    const index = output.length;
    output.push(item);
    emit(out, 'response.output_item.added', { output_index: index, item });
    return index;
  };

  const closePart = (out: SseEvent[], message: MessageState): void => {
    if (!message.partOpen) return;
    message.partOpen = false;
    const contentIndex = message.parts.length - 1;
    const part = message.parts[contentIndex]!;
    const where = { item_id: message.item.id, output_index: message.index, content_index: contentIndex };
    if (part.type === 'output_text') {
      emit(out, 'response.output_text.done', { ...where, text: part.text, logprobs: [] });
      emit(out, 'response.content_part.done', { ...where, part: outputPart(part) });
    } else {
      emit(out, 'response.refusal.done', { ...where, refusal: part.text });
      emit(out, 'response.content_part.done', { ...where, part: outputPart(part) });
    }
  };

  const closeCurrent = (out: SseEvent[]): void => {
    const open = current;
    if (!open) return;
    current = undefined;
    if (open.kind === 'reasoning') {
      const where = { item_id: open.item.id, output_index: open.index, summary_index: 0 };
      if (open.partOpen) {
        emit(out, 'response.reasoning_summary_text.done', { ...where, text: open.text });
        emit(out, 'response.reasoning_summary_part.done', {
          ...where,
          part: { type: 'summary_text', text: open.text },
        });
        open.item.summary = [{ type: 'summary_text', text: open.text }];
      }
    } else {
      closePart(out, open);
      open.item.status = endingOf(finishReason).status === 'incomplete' ? 'incomplete' : 'completed';
      open.item.content = open.parts.map(outputPart);
    }
    emit(out, 'response.output_item.done', { output_index: open.index, item: open.item });
  };

  const closeFunctions = (out: SseEvent[]): void => {
    for (const call of functions.values()) {
      call.item.status = 'completed';
      emit(out, 'response.function_call_arguments.done', {
        item_id: call.item.id,
        output_index: call.index,
        arguments: call.item.arguments,
      });
      emit(out, 'response.output_item.done', { output_index: call.index, item: call.item });
    }
    functions.clear();
  };

  const reasoningItem = (out: SseEvent[]): ReasoningState => {
    if (current?.kind === 'reasoning') return current;
    closeCurrent(out);
    closeFunctions(out);
    const item: Json = { id: newId('rs'), type: 'reasoning', summary: [] };
    current = { kind: 'reasoning', index: addItem(out, item), item, text: '', partOpen: false };
    return current;
  };

  const reasoningDelta = (out: SseEvent[], delta: string): void => {
    const reasoning = reasoningItem(out);
    const where = { item_id: reasoning.item.id, output_index: reasoning.index, summary_index: 0 };
    if (!reasoning.partOpen) {
      reasoning.partOpen = true;
      emit(out, 'response.reasoning_summary_part.added', { ...where, part: { type: 'summary_text', text: '' } });
    }
    reasoning.text += delta;
    emit(out, 'response.reasoning_summary_text.delta', { ...where, delta });
  };

  const messageDelta = (out: SseEvent[], type: MessagePart['type'], delta: string): void => {
    if (current?.kind !== 'message') {
      closeCurrent(out);
      closeFunctions(out);
      const item: Json = { id: newId('msg'), type: 'message', role: 'assistant', status: 'in_progress', content: [] };
      current = { kind: 'message', index: addItem(out, item), item, parts: [], partOpen: false };
    }
    const message = current;
    if (!message.partOpen || message.parts.at(-1)?.type !== type) {
      closePart(out, message);
      message.parts.push({ type, text: '' });
      message.partOpen = true;
      emit(out, 'response.content_part.added', {
        item_id: message.item.id,
        output_index: message.index,
        content_index: message.parts.length - 1,
        part: outputPart({ type, text: '' }),
      });
    }
    const part = message.parts.at(-1)!;
    part.text += delta;
    const where = { item_id: message.item.id, output_index: message.index, content_index: message.parts.length - 1 };
    if (type === 'output_text') emit(out, 'response.output_text.delta', { ...where, delta, logprobs: [] });
    else emit(out, 'response.refusal.delta', { ...where, delta });
  };

  const toolCallDelta = (out: SseEvent[], call: Json): void => {
    const hubIndex = asNumber(call.index) ?? 0;
    const callId = asString(call.id);
    const fn = isObject(call.function) ? call.function : {};
    let open = functions.get(hubIndex);
    if (open && callId && callId !== open.item.call_id) {
      // The same index for another call: close the previous one (and any others open) first.
      closeFunctions(out);
      open = undefined;
    }
    if (!open) {
      closeCurrent(out);
      const item: Json = {
        id: newId('fc'),
        type: 'function_call',
        status: 'in_progress',
        call_id: callId ?? newId('call'),
        name: asString(fn.name) ?? '',
        arguments: '',
      };
      open = { index: addItem(out, item), item };
      functions.set(hubIndex, open);
    } else if (typeof fn.name === 'string' && !open.item.name) {
      open.item.name = fn.name;
    }
    const fragment = fn.arguments === undefined ? '' : asJsonText(fn.arguments);
    if (fragment) {
      open.item.arguments += fragment;
      emit(out, 'response.function_call_arguments.delta', {
        item_id: open.item.id,
        output_index: open.index,
        delta: fragment,
      });
    }
  };

  const complete = (out: SseEvent[]): void => {
    start(out);
    closeCurrent(out);
    closeFunctions(out);
    closed = true;
    const { status, incomplete_details } = endingOf(finishReason);
    const body = response(status, { incomplete_details });
    const converted = usageFromHub(usage);
    if (converted) body.usage = converted;
    else delete body.usage;
    emit(out, status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: body });
  };

  const fail = (out: SseEvent[], error: Json): void => {
    start(out);
    closed = true;
    const message = asString(error.message) ?? 'the upstream failed';
    const code = asString(error.code) ?? asString(error.type) ?? 'server_error';
    emit(out, 'error', { code, message, param: null });
    emit(out, 'response.failed', { response: response('failed', { error: { code, message } }) });
  };

  return {
    push(event) {
      if (closed || event.data === '[DONE]') return [];
      const chunk = parsedData(event);
      if (!isObject(chunk)) return [];
      const out: SseEvent[] = [];
      if (!started) createdAt = asNumber(chunk.created) ?? createdAt;
      start(out);
      if (isObject(chunk.error)) {
        fail(out, chunk.error);
        return out;
      }
      const choice = asArray(chunk.choices).find((c) => isObject(c) && (c.index ?? 0) === 0) as Json | undefined;
      const delta: Json = isObject(choice?.delta) ? choice.delta : {};
      const reasoning = asString(delta.reasoning_content);
      if (reasoning) reasoningDelta(out, reasoning);
      const signature = asString(delta.reasoning_signature);
      if (signature) reasoningItem(out).item.encrypted_content = signature;
      const content = asString(delta.content);
      if (content) messageDelta(out, 'output_text', content);
      const refusal = asString(delta.refusal);
      if (refusal) messageDelta(out, 'refusal', refusal);
      for (const call of asArray(delta.tool_calls)) if (isObject(call)) toolCallDelta(out, call);
      if (typeof choice?.finish_reason === 'string') {
        finishReason = choice.finish_reason;
        closeCurrent(out);
        closeFunctions(out);
      }
      if (isObject(chunk.usage)) usage = chunk.usage;
      if (finishReason !== undefined && usage !== undefined) complete(out);
      return out;
    },
    end() {
      if (closed) return [];
      const out: SseEvent[] = [];
      complete(out);
      return out;
    },
  };
}

function outputPart(part: MessagePart): Json {
  return part.type === 'output_text'
    ? { type: 'output_text', text: part.text, annotations: [], logprobs: [] }
    : { type: 'refusal', refusal: part.text };
}
