import type { ConvertContext, Json, StreamConverter } from '../../../convert/types.ts';
import { parsedData, type SseEvent } from '../../../sse.ts';
import { HubChunks } from '../../hub-answer.ts';
import { finishFromConverse, hubCompletionId, hubUsageFromConverse } from './response.ts';

/**
 * A ConverseStream → hub chunks, event by event: messageStart gives the role chunk, text and
 * reasoning deltas become content / reasoning_content, a toolUse block becomes a tool call whose
 * input deltas are its arguments, messageStop the finish chunk, and metadata's usage a final chunk
 * with no choices, as OpenAI streams usage.
 */
export class ConverseToHubStream implements StreamConverter {
  readonly #chunks: HubChunks;
  /** Converse block index → hub tool call index, and whether arguments came. */
  readonly #tools = new Map<number, { tool: number; args: boolean }>();

  constructor(ctx: ConvertContext) {
    this.#chunks = new HubChunks(hubCompletionId(), ctx.model);
  }

  push(event: SseEvent): SseEvent[] {
    const data = parsedData(event) as Json | undefined;
    if (data === undefined) return [];
    switch (event.event) {
      case 'messageStart':
        return this.#chunks.start();
      case 'contentBlockStart': {
        const use = data.start?.toolUse;
        if (!use) return this.#chunks.start();
        const tool = this.#tools.size;
        this.#tools.set(Number(data.contentBlockIndex), { tool, args: false });
        const call = {
          index: tool,
          id: String(use.toolUseId ?? ''),
          type: 'function',
          function: { name: String(use.name ?? ''), arguments: '' },
        };
        return [...this.#chunks.start(), this.#chunks.chunk({ tool_calls: [call] })];
      }
      case 'contentBlockDelta':
        return [...this.#chunks.start(), ...this.#delta(Number(data.contentBlockIndex), data.delta ?? {})];
      case 'contentBlockStop': {
        const block = this.#tools.get(Number(data.contentBlockIndex));
        // A tool called without arguments streams none; the hub's arguments are still a JSON object.
        if (!block || block.args) return [];
        block.args = true;
        return [this.#chunks.chunk({ tool_calls: [{ index: block.tool, function: { arguments: '{}' } }] })];
      }
      case 'messageStop':
        return [...this.#chunks.start(), this.#chunks.chunk({}, finishFromConverse(data.stopReason))];
      case 'metadata':
        return data.usage ? [this.#chunks.usage(hubUsageFromConverse(data.usage))] : [];
      default:
        return [];
    }
  }

  end(): SseEvent[] {
    return [];
  }

  #delta(index: number, delta: Json): SseEvent[] {
    if (typeof delta.text === 'string' && delta.text !== '') return [this.#chunks.chunk({ content: delta.text })];
    const thought = delta.reasoningContent?.text;
    if (typeof thought === 'string' && thought !== '') return [this.#chunks.chunk({ reasoning_content: thought })];
    const input = delta.toolUse?.input;
    const block = this.#tools.get(index);
    if (!block || typeof input !== 'string' || input === '') return [];
    block.args = true;
    return [this.#chunks.chunk({ tool_calls: [{ index: block.tool, function: { arguments: input } }] })];
  }
}
