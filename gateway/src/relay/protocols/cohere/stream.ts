import type { SseEvent } from '../../sse.ts';
import type { Usage } from '../../types.ts';
import type { StreamObserver } from '../types.ts';
import { eventJson } from '../upstream-json.ts';
import { usageFromCohere } from './usage.ts';

/** Reads Cohere v2 chat stream events: text and tool calls as they go by, usage from message-end. */
export class CohereStreamObserver implements StreamObserver {
  usage: Usage | undefined;
  text = '';
  toolCalls = 0;

  observe(event: SseEvent): void {
    const data = eventJson(event);
    const message = data?.delta?.message;
    switch (data?.type) {
      case 'content-delta': {
        const content = message?.content;
        const piece = content?.text ?? content?.thinking;
        if (typeof piece === 'string') this.text += piece;
        return;
      }
      case 'tool-plan-delta':
        if (typeof message?.tool_plan === 'string') this.text += message.tool_plan;
        return;
      case 'tool-call-start':
        this.toolCalls++;
        return;
      case 'message-end':
        this.usage = usageFromCohere(data.delta?.usage) ?? this.usage;
        return;
    }
  }
}
