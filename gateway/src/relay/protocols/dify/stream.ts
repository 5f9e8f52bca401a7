import type { SseEvent } from '../../sse.ts';
import type { Usage } from '../../types.ts';
import type { StreamObserver } from '../types.ts';
import { eventJson } from '../upstream-json.ts';
import { workflowText } from './outputs.ts';
import { difyMessageUsage, difyWorkflowUsage } from './usage.ts';

/**
 * Reads a Dify stream: answer text from message / agent_message (chat and agent apps) and text_chunk
 * (workflows), usage from message_end, or from workflow_finished when no message_end comes.
 */
export class DifyStreamObserver implements StreamObserver {
  usage: Usage | undefined;
  text = '';
  readonly toolCalls = 0;
  #messageUsage = false;

  observe(event: SseEvent): void {
    const data = eventJson(event);
    switch (data?.event) {
      case 'message':
      case 'agent_message':
        if (typeof data.answer === 'string') this.text += data.answer;
        return;
      case 'text_chunk':
        if (typeof data.data?.text === 'string') this.text += data.data.text;
        return;
      case 'message_end': {
        const usage = difyMessageUsage(data.metadata);
        if (usage) {
          this.usage = usage;
          this.#messageUsage = true;
        }
        return;
      }
      case 'workflow_finished':
        if (this.text === '') this.text = workflowText(data.data?.outputs);
        if (!this.#messageUsage) this.usage = difyWorkflowUsage(data.data) ?? this.usage;
        return;
    }
  }
}
