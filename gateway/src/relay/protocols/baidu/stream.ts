import type { SseEvent } from '../../sse.ts';
import type { Usage } from '../../types.ts';
import type { StreamObserver } from '../types.ts';
import { eventJson } from '../upstream-json.ts';
import { baiduUsage } from './usage.ts';

/** Follows a Baidu stream: text from `result`, usage from the last event that reports it. */
export class BaiduStreamObserver implements StreamObserver {
  usage: Usage | undefined;
  text = '';
  toolCalls = 0;

  observe(event: SseEvent): void {
    const data = eventJson(event);
    if (!data) return;
    if (typeof data?.result === 'string') this.text += data.result;
    if (data?.function_call) this.toolCalls++;
    this.usage = baiduUsage(data) ?? this.usage;
  }
}
