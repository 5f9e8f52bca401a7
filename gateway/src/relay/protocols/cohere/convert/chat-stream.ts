import type { ConvertContext, Json, StreamConverter } from '../../../convert/types.ts';
import type { SseEvent } from '../../../sse.ts';
import { HubChunks } from '../../hub-answer.ts';
import { eventJson } from '../../upstream-json.ts';
import { hubUsageFromCohere } from '../usage.ts';
import { finishToHub } from './chat-response.ts';
import { asString, isObject } from './fields.ts';

/**
 * Cohere v2 chat stream events → hub chunks. message-start opens the answer, content-delta carries
 * text (or thinking), tool-plan-delta the plan before tool calls, tool-call-start a call's id and
 * name, tool-call-delta its argument text, and message-end the finish reason and usage.
 */
export class CohereToHubStream implements StreamConverter {
  readonly #chunks: HubChunks;
  /** Hub index of the tool call being streamed, counting from 0 within the answer. */
  #call = -1;
  #finished = false;

  constructor(ctx: ConvertContext) {
    this.#chunks = new HubChunks('chatcmpl-cohere', ctx.model);
  }

  push(event: SseEvent): SseEvent[] {
    // Its `type` says what an event is (the SSE `event:` line repeats it).
    const data = eventJson(event);
    if (!data) return [];
    const message = isObject(data.delta) && isObject(data.delta.message) ? data.delta.message : {};
    switch (data.type) {
      case 'message-start':
        this.#chunks.id = asString(data.id) ?? this.#chunks.id;
        return [this.#chunks.role()];
      case 'content-start':
      case 'content-delta':
        return this.#content(isObject(message.content) ? message.content : {});
      case 'tool-plan-delta': {
        const plan = asString(message.tool_plan);
        return plan ? this.#chunk({ reasoning_content: plan }) : [];
      }
      case 'tool-call-start': {
        const call = isObject(message.tool_calls) ? message.tool_calls : {};
        this.#call++;
        return this.#chunk({
          tool_calls: [
            {
              index: this.#call,
              id: asString(call.id) ?? `call_${this.#call}`,
              type: 'function',
              function: {
                name: asString(call.function?.name) ?? '',
                arguments: asString(call.function?.arguments) ?? '',
              },
            },
          ],
        });
      }
      case 'tool-call-delta': {
        const args = isObject(message.tool_calls) ? asString(message.tool_calls.function?.arguments) : undefined;
        return args && this.#call >= 0
          ? this.#chunk({ tool_calls: [{ index: this.#call, function: { arguments: args } }] })
          : [];
      }
      case 'message-end':
        return this.#end(isObject(data.delta) ? data.delta : {});
      default:
        // content-end, tool-call-end, citations and debug events carry nothing the hub has.
        return [];
    }
  }

  end(): SseEvent[] {
    // A stream cut before message-end still closes its choice, so clients see an ending.
    return this.#finished ? [] : this.#end({});
  }

  #content(content: Json): SseEvent[] {
    const text = asString(content.text);
    const thinking = asString(content.thinking);
    if (text) return this.#chunk({ content: text });
    if (thinking) return this.#chunk({ reasoning_content: thinking });
    return [];
  }

  #end(delta: Json): SseEvent[] {
    this.#finished = true;
    const out = this.#chunk({}, finishToHub(delta.finish_reason));
    const usage = hubUsageFromCohere(delta.usage);
    if (usage) out.push(this.#chunks.usage(usage));
    return out;
  }

  #chunk(delta: Json, finish: string | null = null): SseEvent[] {
    return [this.#chunks.chunk(delta, finish)];
  }
}
