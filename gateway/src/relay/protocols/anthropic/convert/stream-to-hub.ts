import type { ConvertContext, Json, StreamConverter } from '../../../convert/types.ts';
import type { SseEvent } from '../../../sse.ts';
import { HubChunks, hubError } from '../../hub-answer.ts';
import { eventJson } from '../../upstream-json.ts';
import { finishReasonFromClaude, hubCompletionId, hubUsageFromClaude, isObject } from './shared.ts';

/** What a Claude content block became in the hub stream. */
type Block = { kind: 'text' | 'thinking' | 'other' } | { kind: 'tool'; tool: number; args: boolean };

/**
 * A Claude Messages stream → hub chunks, event by event: message_start gives the role chunk (and
 * the input usage, kept for the end), block deltas become content / reasoning / tool-call deltas,
 * message_delta gives the finish chunk and then a usage chunk with no choices, as OpenAI streams
 * usage. An `error` event becomes an OpenAI-style `{"error": …}` chunk.
 */
export class ClaudeToHubStream implements StreamConverter {
  readonly #chunks: HubChunks;
  /** Claude usage so far: message_start's, overwritten field by field by message_delta's totals. */
  #usage: Json = {};
  readonly #blocks = new Map<number, Block>();
  #tools = 0;

  constructor(ctx: ConvertContext) {
    this.#chunks = new HubChunks(hubCompletionId(undefined), ctx.model);
  }

  push(event: SseEvent): SseEvent[] {
    const data = eventJson(event);
    if (!data) return [];
    switch (data.type ?? event.event) {
      case 'message_start':
        return this.#messageStart(isObject(data.message) ? data.message : {});
      case 'content_block_start':
        return this.#blockStart(Number(data.index), isObject(data.content_block) ? data.content_block : {});
      case 'content_block_delta':
        return this.#blockDelta(Number(data.index), isObject(data.delta) ? data.delta : {});
      case 'content_block_stop':
        return this.#blockStop(Number(data.index));
      case 'message_delta':
        return this.#messageDelta(data);
      case 'error': {
        const error = isObject(data.error) ? data.error : {};
        const type = typeof error.type === 'string' ? error.type : 'api_error';
        return [hubError(typeof error.message === 'string' ? error.message : 'upstream stream error', type, type)];
      }
      default:
        // ping, message_stop and anything newer.
        return [];
    }
  }

  end(): SseEvent[] {
    return [];
  }

  #messageStart(message: Json): SseEvent[] {
    if (typeof message.id === 'string' && message.id !== '') this.#chunks.id = hubCompletionId(message.id);
    if (isObject(message.usage)) this.#usage = { ...message.usage };
    return [this.#chunks.role()];
  }

  #blockStart(index: number, block: Json): SseEvent[] {
    const out = this.#chunks.start();
    switch (block.type) {
      case 'text':
        this.#blocks.set(index, { kind: 'text' });
        if (typeof block.text === 'string' && block.text !== '') out.push(this.#chunks.chunk({ content: block.text }));
        break;
      case 'thinking':
        this.#blocks.set(index, { kind: 'thinking' });
        if (typeof block.thinking === 'string' && block.thinking !== '')
          out.push(this.#chunks.chunk({ reasoning_content: block.thinking }));
        if (typeof block.signature === 'string' && block.signature !== '')
          out.push(this.#chunks.chunk({ reasoning_signature: block.signature }));
        break;
      case 'redacted_thinking':
        this.#blocks.set(index, { kind: 'other' });
        if (typeof block.data === 'string') out.push(this.#chunks.chunk({ redacted_reasoning: [block.data] }));
        break;
      case 'tool_use': {
        const tool = this.#tools++;
        const input = isObject(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
        this.#blocks.set(index, { kind: 'tool', tool, args: input !== '' });
        out.push(
          this.#chunks.chunk({
            tool_calls: [
              {
                index: tool,
                id: String(block.id ?? ''),
                type: 'function',
                function: { name: String(block.name ?? ''), arguments: input },
              },
            ],
          }),
        );
        break;
      }
      default:
        // Server tools (web search …) and their results: nothing the hub can say.
        this.#blocks.set(index, { kind: 'other' });
    }
    return out;
  }

  #blockDelta(index: number, delta: Json): SseEvent[] {
    const block = this.#blocks.get(index);
    switch (delta.type) {
      case 'text_delta':
        return typeof delta.text === 'string' && delta.text !== '' ? [this.#chunks.chunk({ content: delta.text })] : [];
      case 'thinking_delta':
        return typeof delta.thinking === 'string' && delta.thinking !== ''
          ? [this.#chunks.chunk({ reasoning_content: delta.thinking })]
          : [];
      case 'signature_delta':
        return typeof delta.signature === 'string' && delta.signature !== ''
          ? [this.#chunks.chunk({ reasoning_signature: delta.signature })]
          : [];
      case 'input_json_delta': {
        if (block?.kind !== 'tool' || typeof delta.partial_json !== 'string' || delta.partial_json === '') return [];
        block.args = true;
        return [
          this.#chunks.chunk({ tool_calls: [{ index: block.tool, function: { arguments: delta.partial_json } }] }),
        ];
      }
      default:
        return [];
    }
  }

  #blockStop(index: number): SseEvent[] {
    const block = this.#blocks.get(index);
    this.#blocks.delete(index);
    // A tool called without arguments streams none; the hub's arguments are still a JSON object.
    if (block?.kind === 'tool' && !block.args)
      return [this.#chunks.chunk({ tool_calls: [{ index: block.tool, function: { arguments: '{}' } }] })];
    return [];
  }

  #messageDelta(data: Json): SseEvent[] {
    const out = this.#chunks.start();
    if (isObject(data.usage)) {
      for (const [key, value] of Object.entries(data.usage)) if (value !== null) this.#usage[key] = value;
    }
    const finish = finishReasonFromClaude(data.delta?.stop_reason);
    if (finish) out.push(this.#chunks.chunk({}, finish));
    // No usage at all (a nonconforming upstream): say nothing, so that the relay estimates it.
    if (Object.keys(this.#usage).length > 0) out.push(this.#chunks.usage(hubUsageFromClaude(this.#usage)));
    return out;
  }
}
