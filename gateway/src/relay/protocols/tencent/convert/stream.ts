import type { ConvertContext, Json, StreamConverter } from '../../../convert/types.ts';
import type { SseEvent } from '../../../sse.ts';
import { HubChunks, hubError } from '../../hub-answer.ts';
import { eventJson } from '../../upstream-json.ts';
import { finishToHub, toolCallsToHub, usageToHub } from './response.ts';

/**
 * An error Hunyuan reports inside its stream (`Response.Error`, or `ErrorMsg` when moderation stops it
 * midway), as the hub's in-stream error.
 */
function streamError(data: Json): SseEvent | undefined {
  const error =
    data.Response?.Error ?? (data.ErrorMsg ? { Code: data.ErrorMsg.Code, Message: data.ErrorMsg.Msg } : undefined);
  if (!error) return undefined;
  const code = error.Code === undefined ? null : String(error.Code);
  return hubError(String(error.Message ?? code ?? 'upstream error'), code);
}

/**
 * Hunyuan stream events → hub chunks. Every Hunyuan event carries the usage so far; the last one is
 * sent once, as the hub's usage-only chunk, when the stream ends.
 */
export class TencentToHubStream implements StreamConverter {
  readonly #chunks: HubChunks;
  #usage: Json | undefined;
  /** Tool calls already opened, by index: later pieces of one carry only its arguments. */
  readonly #openCalls = new Set<number>();

  constructor(ctx: ConvertContext) {
    this.#chunks = new HubChunks('', ctx.model);
  }

  push(event: SseEvent): SseEvent[] {
    const data = eventJson(event);
    if (!data) return [];
    const error = streamError(data);
    if (error) return [error];
    if (data.Id) this.#chunks.id = `chatcmpl-${data.Id}`;
    if (typeof data.Created === 'number') this.#chunks.created = data.Created;
    this.#usage = usageToHub(data.Usage) ?? this.#usage;
    const choices = (Array.isArray(data.Choices) ? data.Choices : []).map((choice: Json, index: number) => {
      const delta: Json = {};
      if (choice?.Delta?.Role) delta.role = choice.Delta.Role;
      if (typeof choice?.Delta?.Content === 'string' && choice.Delta.Content !== '')
        delta.content = choice.Delta.Content;
      if (typeof choice?.Delta?.ReasoningContent === 'string' && choice.Delta.ReasoningContent !== '') {
        delta.reasoning_content = choice.Delta.ReasoningContent;
      }
      const calls = toolCallsToHub(choice?.Delta?.ToolCalls).map((call) => {
        if (!this.#openCalls.has(call.index)) {
          this.#openCalls.add(call.index);
          return call;
        }
        return { index: call.index, function: { arguments: call.function.arguments } };
      });
      if (calls.length > 0) delta.tool_calls = calls;
      return { index, delta, finish_reason: finishToHub(choice?.FinishReason) };
    });
    if (choices.length === 0) return [];
    return [this.#chunks.choices(choices)];
  }

  end(): SseEvent[] {
    return this.#usage ? [this.#chunks.usage(this.#usage)] : [];
  }
}
