import type { ConvertContext, Json, StreamConverter } from '../../../convert/types.ts';
import { jsonEvent, parsedData, type SseEvent } from '../../../sse.ts';
import {
  asArray,
  asJsonText,
  asNumber,
  asString,
  finishReasonOf,
  isObject,
  messageRefusalOf,
  messageTextOf,
  newId,
  nowSeconds,
  reasoningTextOf,
  usageToHub,
} from './common.ts';

/**
 * A Responses stream → hub chunks (OpenAI chat.completion.chunk), event by event:
 * - `response.created` → the first chunk (role assistant);
 * - `response.output_text.delta` → content, `response.refusal.delta` → refusal,
 *   `response.reasoning_summary_text.delta` / `response.reasoning_text.delta` → reasoning_content (summary parts
 *   separated by a blank line, as whole answers join them);
 * - `response.output_item.added` of a function_call → a tool call's start (index, id = call_id, name),
 *   `response.function_call_arguments.delta` → its arguments fragments;
 * - `response.output_item.done` → whatever of the item was not streamed as deltas (some upstreams send only
 *   whole items), and a reasoning item's encrypted_content as `reasoning_signature`;
 * - `response.completed` / `response.incomplete` → items never announced, then the finish chunk and a usage
 *   chunk (`choices: []`); `response.failed` and `error` → an OpenAI-style error chunk (`{error: {…}}`).
 * Built-in tool events (web search, …) have no chat form and are skipped. A stream cut before its terminal
 * event gets no invented finish: end() adds nothing.
 */

interface ItemState {
  /** Characters of text (content, reasoning or arguments) already sent for this item. */
  sent: number;
  /** Characters of refusal already sent (message items). */
  refusalSent: number;
  /** The hub tool-call index (function_call items), once its start was sent. */
  toolIndex?: number;
  /** The last reasoning summary part streamed (reasoning items). */
  summaryIndex: number;
  signed: boolean;
  done: boolean;
}

export function responsesStreamToChat(ctx: ConvertContext): StreamConverter {
  let id = newId('chatcmpl', '-');
  let created = nowSeconds();
  let begun = false;
  let finished = false;
  let tools = 0;
  const byId = new Map<string, ItemState>();
  const byIndex = new Map<number, ItemState>();

  const chunk = (delta: Json, finishReason: string | null = null): SseEvent =>
    jsonEvent({
      id,
      object: 'chat.completion.chunk',
      created,
      model: ctx.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });

  const state = (itemId: unknown, outputIndex: unknown): ItemState => {
    const key = asString(itemId);
    const index = asNumber(outputIndex);
    let found =
      (key !== undefined ? byId.get(key) : undefined) ?? (index !== undefined ? byIndex.get(index) : undefined);
    if (!found) {
      found = { sent: 0, refusalSent: 0, summaryIndex: 0, signed: false, done: false };
      if (key !== undefined) byId.set(key, found);
      if (index !== undefined) byIndex.set(index, found);
    }
    return found;
  };

  const startTool = (out: SseEvent[], item: Json, s: ItemState): void => {
    if (s.toolIndex !== undefined) return;
    s.toolIndex = tools++;
    out.push(
      chunk({
        tool_calls: [
          {
            index: s.toolIndex,
            id: asString(item.call_id) ?? asString(item.id) ?? newId('call'),
            type: 'function',
            function: { name: asString(item.name) ?? '', arguments: '' },
          },
        ],
      }),
    );
  };

  const toolArguments = (out: SseEvent[], s: ItemState, fragment: string): void => {
    if (!fragment) return;
    out.push(chunk({ tool_calls: [{ index: s.toolIndex, function: { arguments: fragment } }] }));
    s.sent += fragment.length;
  };

  /** Sends what of a finished item was not streamed: the unsent tail of its text, its signature, a call's start. */
  const flush = (out: SseEvent[], item: Json, s: ItemState): void => {
    s.done = true;
    if (item.type === 'message') {
      const text = messageTextOf(item);
      if (text.length > s.sent) out.push(chunk({ content: text.slice(s.sent) }));
      s.sent = Math.max(s.sent, text.length);
      const refusal = messageRefusalOf(item);
      if (refusal.length > s.refusalSent) out.push(chunk({ refusal: refusal.slice(s.refusalSent) }));
      s.refusalSent = Math.max(s.refusalSent, refusal.length);
    } else if (item.type === 'reasoning') {
      const text = reasoningTextOf(item);
      if (text.length > s.sent) out.push(chunk({ reasoning_content: text.slice(s.sent) }));
      s.sent = Math.max(s.sent, text.length);
      const signature = asString(item.encrypted_content);
      if (signature && !s.signed) {
        s.signed = true;
        out.push(chunk({ reasoning_signature: signature }));
      }
    } else if (item.type === 'function_call') {
      startTool(out, item, s);
      const args = asJsonText(item.arguments);
      if (args.length > s.sent) toolArguments(out, s, args.slice(s.sent));
    }
  };

  const fail = (out: SseEvent[], error: Json): void => {
    finished = true;
    out.push(
      jsonEvent({
        error: {
          message: asString(error.message) ?? 'the upstream response failed',
          type: asString(error.type) ?? 'upstream_error',
          code: asString(error.code) ?? null,
          param: asString(error.param) ?? null,
        },
      }),
    );
  };

  const finish = (out: SseEvent[], response: Json): void => {
    finished = true;
    asArray(response.output).forEach((item, index) => {
      if (!isObject(item)) return;
      const s = state(item.id, index);
      if (!s.done) flush(out, item, s);
    });
    out.push(chunk({}, finishReasonOf(response, tools > 0)));
    const usage = usageToHub(response.usage);
    if (usage) {
      out.push(jsonEvent({ id, object: 'chat.completion.chunk', created, model: ctx.model, choices: [], usage }));
    }
  };

  return {
    push(event) {
      if (finished || event.data === '[DONE]') return [];
      const data = parsedData(event);
      if (!isObject(data)) return [];
      const type = asString(data.type) ?? event.event;
      const out: SseEvent[] = [];
      if (type === 'error') {
        // OpenAI's error event is flat ({type: 'error', code, message, param}); some upstreams nest it.
        fail(out, isObject(data.error) ? data.error : { message: data.message, code: data.code, param: data.param });
        return out;
      }
      if (type === 'response.failed') {
        fail(out, isObject(data.response?.error) ? data.response.error : {});
        return out;
      }
      if (!begun) {
        begun = true;
        if (isObject(data.response)) {
          id = asString(data.response.id) ?? id;
          created = asNumber(data.response.created_at) ?? created;
        }
        out.push(chunk({ role: 'assistant', content: '' }));
      }
      switch (type) {
        case 'response.output_item.added': {
          const item = isObject(data.item) ? data.item : {};
          const s = state(item.id, data.output_index);
          if (item.type === 'function_call') {
            startTool(out, item, s);
            toolArguments(out, s, asJsonText(item.arguments));
          }
          break;
        }
        case 'response.output_text.delta': {
          const delta = asString(data.delta);
          if (!delta) break;
          state(data.item_id, data.output_index).sent += delta.length;
          out.push(chunk({ content: delta }));
          break;
        }
        case 'response.refusal.delta': {
          const delta = asString(data.delta);
          if (!delta) break;
          state(data.item_id, data.output_index).refusalSent += delta.length;
          out.push(chunk({ refusal: delta }));
          break;
        }
        case 'response.reasoning_summary_text.delta':
        case 'response.reasoning_text.delta': {
          let delta = asString(data.delta);
          if (!delta) break;
          const s = state(data.item_id, data.output_index);
          const part = asNumber(data.summary_index) ?? s.summaryIndex;
          if (type === 'response.reasoning_summary_text.delta' && part > s.summaryIndex && s.sent > 0) {
            delta = `\n\n${delta}`;
          }
          s.summaryIndex = part;
          s.sent += delta.length;
          out.push(chunk({ reasoning_content: delta }));
          break;
        }
        case 'response.function_call_arguments.delta': {
          const delta = asString(data.delta);
          if (!delta) break;
          const s = state(data.item_id, data.output_index);
          startTool(out, { id: data.item_id }, s);
          toolArguments(out, s, delta);
          break;
        }
        case 'response.output_item.done': {
          const item = isObject(data.item) ? data.item : {};
          flush(out, item, state(item.id, data.output_index));
          break;
        }
        case 'response.completed':
        case 'response.incomplete':
          finish(out, isObject(data.response) ? data.response : {});
          break;
        default:
          break;
      }
      return out;
    },
    end() {
      return [];
    },
  };
}
