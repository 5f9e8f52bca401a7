import { parsedData, type SseEvent } from '../../sse.ts';
import type { Usage } from '../../types.ts';
import { StreamText } from '../stream-text.ts';
import type { StreamObserver } from '../types.ts';
import { claudeUsage } from './usage.ts';

type Json = Record<string, any>;

/**
 * What an event must mention to change the usage (message_start, message_delta) or the tool-call
 * count (a tool_use block starting); any other event can only add text, which is read later and only
 * if needed (StreamText). A text delta cannot fake a marker: its quotes are escaped.
 */
const MARKERS = /"usage"|"tool_use"/;

/**
 * Follows a Claude Messages stream: the text (text and thinking deltas) for estimating, tool calls,
 * and the usage — message_start's, then message_delta's cumulative totals field by field (its
 * output_tokens is the final count).
 */
export class ClaudeStreamObserver implements StreamObserver {
  #raw: Json | undefined;
  readonly #text = new StreamText(deltaText);
  usage: Usage | undefined;
  toolCalls = 0;

  get text(): string {
    return this.#text.value;
  }

  observe(event: SseEvent): void {
    this.#text.add(event.data, event.event);
    if (!MARKERS.test(event.data)) return;
    const data = parsedData(event) as Json | undefined;
    if (typeof data !== 'object' || data === null) return;
    switch (data.type ?? event.event) {
      case 'message_start':
        if (data.message?.usage && typeof data.message.usage === 'object') this.#merge(data.message.usage);
        break;
      case 'content_block_start':
        if (data.content_block?.type === 'tool_use') this.toolCalls++;
        break;
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

/** The text of a content_block_delta event: its text or thinking. */
function deltaText(json: unknown, event: string | undefined): string {
  if (typeof json !== 'object' || json === null) return '';
  const data = json as Json;
  if ((data.type ?? event) !== 'content_block_delta') return '';
  const delta = data.delta;
  if (delta?.type === 'text_delta' && typeof delta.text === 'string') return delta.text;
  if (delta?.type === 'thinking_delta' && typeof delta.thinking === 'string') return delta.thinking;
  return '';
}
