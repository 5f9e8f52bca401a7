import type { SseEvent } from '../../sse.ts';
import type { Usage } from '../../types.ts';
import type { StreamObserver } from '../types.ts';
import { eventJson } from '../upstream-json.ts';
import { sparkUsage } from './usage.ts';

/** Follows Spark answer frames: their text, function calls, and the usage the last frame reports. */
export class XunfeiStreamObserver implements StreamObserver {
  usage: Usage | undefined;
  text = '';
  toolCalls = 0;

  observe(event: SseEvent): void {
    const frame = eventJson(event);
    if (!frame) return;
    for (const item of Array.isArray(frame?.payload?.choices?.text) ? frame.payload.choices.text : []) {
      if (typeof item?.content === 'string') this.text += item.content;
      if (item?.function_call) this.toolCalls++;
    }
    this.usage = sparkUsage(frame) ?? this.usage;
  }
}
