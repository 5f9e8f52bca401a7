import { type SseEvent, StreamEvent } from '../../sse.ts';
import type { Usage } from '../../types.ts';
import type { StreamDecoder, StreamObserver } from '../types.ts';
import { eventJson } from '../upstream-json.ts';
import { ollamaUsage } from './usage.ts';

/** Ollama streams newline-delimited JSON (`application/x-ndjson`): each line becomes one event. */
export class NdjsonDecoder implements StreamDecoder {
  readonly #decoder = new TextDecoder();
  #buffer = '';

  push(chunk: Uint8Array): SseEvent[] {
    this.#buffer += this.#decoder.decode(chunk, { stream: true });
    const lines = this.#buffer.split('\n');
    this.#buffer = lines.pop() ?? '';
    return lines.flatMap(asEvent);
  }

  end(): SseEvent[] {
    const rest = this.#buffer + this.#decoder.decode();
    this.#buffer = '';
    return asEvent(rest);
  }
}

const asEvent = (line: string): SseEvent[] => (line.trim() === '' ? [] : [new StreamEvent(line.trim())]);

/** Follows an Ollama chat stream: message text and tool calls, usage from the `done` line. */
export class OllamaStreamObserver implements StreamObserver {
  usage: Usage | undefined;
  text = '';
  toolCalls = 0;

  observe(event: SseEvent): void {
    const line = eventJson(event);
    if (!line) return;
    const message = line?.message;
    if (typeof message?.content === 'string') this.text += message.content;
    if (typeof message?.thinking === 'string') this.text += message.thinking;
    if (Array.isArray(message?.tool_calls)) this.toolCalls += message.tool_calls.length;
    if (line?.done === true) this.usage = ollamaUsage('ollama-chat', line) ?? this.usage;
  }
}
