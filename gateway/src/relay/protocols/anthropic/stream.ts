import { parsedData, type SseEvent } from '../../sse.ts';
import type { Usage } from '../../types.ts';
import type { StreamObserver } from '../types.ts';
import { claudeUsage } from './usage.ts';

type Json = Record<string, any>;

/**
 * Follows a Claude Messages stream: the text (text and thinking deltas) for estimating, tool calls,
 * and the usage — message_start's, then message_delta's cumulative totals field by field (its
 * output_tokens is the final count).
 */
export class ClaudeStreamObserver implements StreamObserver {
  #raw: Json | undefined;
  usage: Usage | undefined;
  text = '';
  toolCalls = 0;

  observe(event: SseEvent): void {
    const data = parsedData(event) as Json | undefined;
    if (data === undefined) return;
    if (typeof data !== 'object' || data === null) return;
    switch (data.type ?? event.event) {
      case 'message_start':
        if (data.message?.usage && typeof data.message.usage === 'object') this.#merge(data.message.usage);
        break;
      case 'content_block_start':
        if (data.content_block?.type === 'tool_use') this.toolCalls++;
        break;
      case 'content_block_delta': {
        const delta = data.delta;
        if (delta?.type === 'text_delta' && typeof delta.text === 'string') this.text += delta.text;
        else if (delta?.type === 'thinking_delta' && typeof delta.thinking === 'string') this.text += delta.thinking;
        break;
      }
      case 'message_delta':
        if (data.usage && typeof data.usage === 'object') this.#merge(data.usage);
        break;
    }
  }

  #merge(usage: Json): void {
    const merged: Json = { ...this.#raw };
    for (const [key, value] of Object.entries(usage)) if (value !== null && value !== undefined) merged[key] = value;
    this.#raw = merged;
    this.usage = claudeUsage(merged);
  }
}
