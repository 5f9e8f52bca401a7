import { parsedData, type SseEvent } from '../../sse.ts';
import type { Usage, WireFormat } from '../../types.ts';
import type { StreamObserver } from '../types.ts';
import { openAIUsage } from './usage.ts';

/** Reads usage and generated text out of OpenAI stream events (chat, completions, Responses). */
export class OpenAIStreamObserver implements StreamObserver {
  readonly #format: WireFormat;
  usage: Usage | undefined;
  text = '';
  toolCalls = 0;

  constructor(format: WireFormat) {
    this.#format = format;
  }

  observe(event: SseEvent): void {
    if (event.data === '[DONE]') return;
    const chunk = parsedData(event) as any;
    if (chunk === undefined) return;
    if (this.#format === 'openai-responses') {
      if (chunk.type === 'response.output_text.delta' && typeof chunk.delta === 'string') this.text += chunk.delta;
      if (chunk.type === 'response.function_call_arguments.done') this.toolCalls++;
      if (chunk.type === 'response.completed' || chunk.type === 'response.incomplete') {
        this.usage = openAIUsage(this.#format, chunk.response) ?? this.usage;
      }
      return;
    }
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
      const content = choice?.delta?.content ?? choice?.text;
      if (typeof content === 'string') this.text += content;
      const reasoning = choice?.delta?.reasoning_content;
      if (typeof reasoning === 'string') this.text += reasoning;
      if (Array.isArray(choice?.delta?.tool_calls)) {
        for (const call of choice.delta.tool_calls) if (call?.id) this.toolCalls++;
      }
    }
    if (chunk.usage) this.usage = openAIUsage(this.#format, chunk) ?? this.usage;
  }
}
