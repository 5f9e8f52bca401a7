import type { ConvertContext, Json, StreamConverter } from '../../../convert/types.ts';
import type { SseEvent } from '../../../sse.ts';
import { finishFromConverse, hubCompletionId, hubUsageFromConverse } from './response.ts';

/**
 * A ConverseStream → hub chunks, event by event: messageStart gives the role chunk, text and
 * reasoning deltas become content / reasoning_content, a toolUse block becomes a tool call whose
 * input deltas are its arguments, messageStop the finish chunk, and metadata's usage a final chunk
 * with no choices, as OpenAI streams usage.
 */
export class ConverseToHubStream implements StreamConverter {
  readonly #ctx: ConvertContext;
  readonly #id = hubCompletionId();
  readonly #created = Math.floor(Date.now() / 1000);
  /** Converse block index → hub tool call index, and whether arguments came. */
  readonly #tools = new Map<number, { tool: number; args: boolean }>();
  #started = false;

  constructor(ctx: ConvertContext) {
    this.#ctx = ctx;
  }

  push(event: SseEvent): SseEvent[] {
    let data: Json;
    try {
      data = JSON.parse(event.data) as Json;
    } catch {
      return [];
    }
    switch (event.event) {
      case 'messageStart':
        return this.#ensureStarted();
      case 'contentBlockStart': {
        const use = data.start?.toolUse;
        if (!use) return this.#ensureStarted();
        const tool = this.#tools.size;
        this.#tools.set(Number(data.contentBlockIndex), { tool, args: false });
        const call = {
          index: tool,
          id: String(use.toolUseId ?? ''),
          type: 'function',
          function: { name: String(use.name ?? ''), arguments: '' },
        };
        return [...this.#ensureStarted(), this.#chunk({ tool_calls: [call] })];
      }
      case 'contentBlockDelta':
        return [...this.#ensureStarted(), ...this.#delta(Number(data.contentBlockIndex), data.delta ?? {})];
      case 'contentBlockStop': {
        const block = this.#tools.get(Number(data.contentBlockIndex));
        // A tool called without arguments streams none; the hub's arguments are still a JSON object.
        if (!block || block.args) return [];
        block.args = true;
        return [this.#chunk({ tool_calls: [{ index: block.tool, function: { arguments: '{}' } }] })];
      }
      case 'messageStop':
        return [...this.#ensureStarted(), this.#chunk({}, finishFromConverse(data.stopReason))];
      case 'metadata':
        return data.usage ? [this.#raw({ ...this.#base(), choices: [], usage: hubUsageFromConverse(data.usage) })] : [];
      default:
        return [];
    }
  }

  end(): SseEvent[] {
    return [];
  }

  #delta(index: number, delta: Json): SseEvent[] {
    if (typeof delta.text === 'string' && delta.text !== '') return [this.#chunk({ content: delta.text })];
    const thought = delta.reasoningContent?.text;
    if (typeof thought === 'string' && thought !== '') return [this.#chunk({ reasoning_content: thought })];
    const input = delta.toolUse?.input;
    const block = this.#tools.get(index);
    if (!block || typeof input !== 'string' || input === '') return [];
    block.args = true;
    return [this.#chunk({ tool_calls: [{ index: block.tool, function: { arguments: input } }] })];
  }

  #ensureStarted(): SseEvent[] {
    if (this.#started) return [];
    this.#started = true;
    return [this.#chunk({ role: 'assistant', content: '' })];
  }

  #base(): Json {
    return { id: this.#id, object: 'chat.completion.chunk', created: this.#created, model: this.#ctx.model };
  }

  #chunk(delta: Json, finish: string | null = null): SseEvent {
    return this.#raw({ ...this.#base(), choices: [{ index: 0, delta, finish_reason: finish }] });
  }

  #raw(body: Json): SseEvent {
    return { data: JSON.stringify(body) };
  }
}
