import type { SseEvent } from '../../sse.ts';
import type { Usage } from '../../types.ts';
import type { StreamObserver } from '../types.ts';
import { eventJson } from '../upstream-json.ts';
import { tencentUsage } from './usage.ts';

/** Follows a Hunyuan stream: text, tool calls, and the usage every event repeats (the last is final). */
export class TencentStreamObserver implements StreamObserver {
  usage: Usage | undefined;
  text = '';
  toolCalls = 0;
  readonly #calls = new Set<string>();

  observe(event: SseEvent): void {
    const data = eventJson(event);
    if (!data) return;
    for (const choice of Array.isArray(data?.Choices) ? data.Choices : []) {
      if (typeof choice?.Delta?.Content === 'string') this.text += choice.Delta.Content;
      for (const call of Array.isArray(choice?.Delta?.ToolCalls) ? choice.Delta.ToolCalls : []) {
        const id = String(call?.Id ?? call?.Index ?? '');
        if (!this.#calls.has(id)) this.#calls.add(id);
      }
    }
    this.toolCalls = this.#calls.size;
    this.usage = tencentUsage(data?.Usage) ?? this.usage;
  }
}
