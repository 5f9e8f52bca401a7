import type { ConvertContext, Json, StreamConverter } from '../../../convert/types.ts';
import { parsedData, type SseEvent } from '../../../sse.ts';
import { claudeStreamErrorType } from './errors.ts';
import { claudeMessageId, claudeUsageFromHub, isObject, stopReasonFromHub } from './shared.ts';

/** The Claude content block being written. */
interface OpenBlock {
  kind: 'text' | 'thinking' | 'tool';
  index: number;
}

/**
 * Hub chunks → a Claude Messages stream, event by event. Claude's blocks come one after another,
 * so a block closes when a different one starts: text, thinking and each tool call get their own.
 * The finish chunk closes the last block; message_delta (with stop_reason and the usage) and
 * message_stop follow as soon as the usage is known — usually the next chunk, OpenAI's usage chunk —
 * or at the end of the stream if the hub never says it.
 */
export class HubToClaudeStream implements StreamConverter {
  readonly #ctx: ConvertContext;
  #started = false;
  /** message_stop sent, or the stream failed: nothing more to say. */
  #done = false;
  #next = 0;
  #open: OpenBlock | undefined;
  /** Hub tool call index → its Claude block. */
  readonly #tools = new Map<number, { index: number; id: string }>();
  #stopReason: string | undefined;
  #usage: Json | undefined;

  constructor(ctx: ConvertContext) {
    this.#ctx = ctx;
  }

  push(event: SseEvent): SseEvent[] {
    if (this.#done || event.data === '[DONE]') return [];
    const chunk = parsedData(event);
    if (!isObject(chunk)) return [];
    if (isObject(chunk.error)) {
      this.#done = true;
      const error = chunk.error;
      return [
        this.#event('error', {
          error: {
            type: claudeStreamErrorType(error.type, error.code),
            message: typeof error.message === 'string' ? error.message : 'upstream stream error',
          },
        }),
      ];
    }
    const out = this.#start(chunk);
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
      if (!isObject(choice) || (typeof choice.index === 'number' && choice.index !== 0)) continue;
      if (isObject(choice.delta)) this.#delta(choice.delta, out);
      if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') {
        this.#stopReason = stopReasonFromHub(choice.finish_reason);
        this.#close(out);
      }
    }
    if (isObject(chunk.usage)) this.#usage = chunk.usage;
    if (this.#stopReason !== undefined && this.#usage !== undefined) this.#finish(out);
    return out;
  }

  end(): SseEvent[] {
    if (this.#done) return [];
    const out = this.#start({});
    this.#finish(out);
    return out;
  }

  #start(chunk: Json): SseEvent[] {
    if (this.#started) return [];
    this.#started = true;
    const usage = isObject(chunk.usage) ? claudeUsageFromHub(chunk.usage) : { input_tokens: 0, output_tokens: 0 };
    return [
      this.#event('message_start', {
        message: {
          id: claudeMessageId(chunk.id),
          type: 'message',
          role: 'assistant',
          model: this.#ctx.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage,
        },
      }),
    ];
  }

  #delta(delta: Json, out: SseEvent[]): void {
    const reasoning = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : delta.reasoning;
    if (typeof reasoning === 'string' && reasoning !== '') {
      const index = this.#ensure('thinking', { type: 'thinking', thinking: '', signature: '' }, out);
      out.push(this.#blockDelta(index, { type: 'thinking_delta', thinking: reasoning }));
    }
    if (typeof delta.reasoning_signature === 'string' && delta.reasoning_signature !== '') {
      const index = this.#ensure('thinking', { type: 'thinking', thinking: '', signature: '' }, out);
      out.push(this.#blockDelta(index, { type: 'signature_delta', signature: delta.reasoning_signature }));
    }
    if (Array.isArray(delta.redacted_reasoning)) {
      for (const data of delta.redacted_reasoning) {
        if (typeof data !== 'string' || data === '') continue;
        this.#close(out);
        const index = this.#next++;
        out.push(
          this.#event('content_block_start', { index, content_block: { type: 'redacted_thinking', data } }),
          this.#event('content_block_stop', { index }),
        );
      }
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      const index = this.#ensure('text', { type: 'text', text: '' }, out);
      out.push(this.#blockDelta(index, { type: 'text_delta', text: delta.content }));
    }
    if (Array.isArray(delta.tool_calls)) {
      delta.tool_calls.forEach((call: unknown, position: number) => {
        if (isObject(call)) this.#toolCall(call, position, out);
      });
    }
  }

  #toolCall(call: Json, position: number, out: SseEvent[]): void {
    const key = typeof call.index === 'number' ? call.index : position;
    let block = this.#tools.get(key);
    const id = typeof call.id === 'string' && call.id !== '' ? call.id : undefined;
    if (!block || (id !== undefined && id !== block.id)) {
      this.#close(out);
      const index = this.#next++;
      block = { index, id: id ?? `toolu_${crypto.randomUUID().replaceAll('-', '')}` };
      this.#tools.set(key, block);
      this.#open = { kind: 'tool', index };
      out.push(
        this.#event('content_block_start', {
          index,
          content_block: { type: 'tool_use', id: block.id, name: String(call.function?.name ?? ''), input: {} },
        }),
      );
    }
    const args = call.function?.arguments;
    // Claude's blocks do not reopen: a fragment for a call whose block has closed cannot be placed.
    if (typeof args === 'string' && args !== '' && this.#open?.index === block.index) {
      out.push(this.#blockDelta(block.index, { type: 'input_json_delta', partial_json: args }));
    }
  }

  /** The open block of this kind, or a new one (closing whatever else was open). */
  #ensure(kind: 'text' | 'thinking', contentBlock: Json, out: SseEvent[]): number {
    if (this.#open?.kind === kind) return this.#open.index;
    this.#close(out);
    const index = this.#next++;
    this.#open = { kind, index };
    out.push(this.#event('content_block_start', { index, content_block: contentBlock }));
    return index;
  }

  #close(out: SseEvent[]): void {
    if (!this.#open) return;
    out.push(this.#event('content_block_stop', { index: this.#open.index }));
    this.#open = undefined;
  }

  #finish(out: SseEvent[]): void {
    this.#close(out);
    const usage = this.#usage ? claudeUsageFromHub(this.#usage) : undefined;
    out.push(
      this.#event('message_delta', {
        delta: { stop_reason: this.#stopReason ?? 'end_turn', stop_sequence: null },
        usage: usage
          ? {
              input_tokens: usage.input_tokens,
              cache_creation_input_tokens: usage.cache_creation_input_tokens,
              cache_read_input_tokens: usage.cache_read_input_tokens,
              output_tokens: usage.output_tokens,
            }
          : { output_tokens: 0 },
      }),
      this.#event('message_stop', {}),
    );
    this.#done = true;
  }

  #blockDelta(index: number, delta: Json): SseEvent {
    return this.#event('content_block_delta', { index, delta });
  }

  #event(type: string, body: Json): SseEvent {
    return { event: type, data: JSON.stringify({ type, ...body }) };
  }
}
