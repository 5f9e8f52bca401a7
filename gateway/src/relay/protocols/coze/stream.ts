import type { SseEvent } from '../../sse.ts';
import type { Usage } from '../../types.ts';
import type { StreamObserver } from '../types.ts';
import { eventJson } from '../upstream-json.ts';
import { cozeChatUsage } from './usage.ts';

/** Whether a message event is the bot's answer (not a tool trace, verbose note or follow-up suggestion). */
export const isAnswer = (message: { role?: unknown; type?: unknown } | undefined) =>
  message?.role === 'assistant' && message.type === 'answer';

/** Reads a Coze stream: answer text from message deltas, usage from conversation.chat.completed. */
export class CozeStreamObserver implements StreamObserver {
  usage: Usage | undefined;
  text = '';
  readonly toolCalls = 0;

  observe(event: SseEvent): void {
    if (event.event === 'conversation.message.delta') {
      const message = eventJson(event);
      if (isAnswer(message) && typeof message?.content === 'string') this.text += message.content;
    } else if (event.event === 'conversation.chat.completed') {
      this.usage = cozeChatUsage(eventJson(event)) ?? this.usage;
    }
  }
}
