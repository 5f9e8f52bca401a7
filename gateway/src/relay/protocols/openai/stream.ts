import { parsedData, type SseEvent } from '../../sse.ts';
import type { Usage, WireFormat } from '../../types.ts';
import { StreamText } from '../stream-text.ts';
import type { StreamObserver } from '../types.ts';
import { openAIUsage } from './usage.ts';

/**
 * What an event must mention to change the usage or the tool-call count; any other event can only
 * add text, which is read later and only if needed (StreamText). A content string cannot fake a
 * marker: its quotes are escaped. (One regular expression scans the data once, unlike a search per marker.)
 */
const CHAT_MARKERS = /"usage"|"tool_calls"/;
const RESPONSES_MARKERS = /"response\.(?:completed|incomplete|function_call_arguments\.done)"/;

/** Reads usage and generated text out of OpenAI stream events (chat, completions, Responses). */
export class OpenAIStreamObserver implements StreamObserver {
  readonly #format: WireFormat;
  readonly #responses: boolean;
  readonly #text: StreamText;
  usage: Usage | undefined;
  toolCalls = 0;

  constructor(format: WireFormat) {
    this.#format = format;
    this.#responses = format === 'openai-responses';
    this.#text = new StreamText(this.#responses ? responsesText : chatText);
  }

  get text(): string {
    return this.#text.value;
  }

  observe(event: SseEvent): void {
    const data = event.data;
    if (data === '[DONE]') return;
    this.#text.add(data);
    if (!(this.#responses ? RESPONSES_MARKERS : CHAT_MARKERS).test(data)) return;
    const chunk = parsedData(event) as any;
    if (typeof chunk !== 'object' || chunk === null) return;
    if (this.#responses) {
      if (chunk.type === 'response.function_call_arguments.done') this.toolCalls++;
      if (chunk.type === 'response.completed' || chunk.type === 'response.incomplete') {
        this.usage = openAIUsage(this.#format, chunk.response) ?? this.usage;
      }
      return;
    }
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
      if (Array.isArray(choice?.delta?.tool_calls)) {
        for (const call of choice.delta.tool_calls) if (call?.id) this.toolCalls++;
      }
    }
    if (chunk.usage) this.usage = openAIUsage(this.#format, chunk) ?? this.usage;
  }
}

/** The text of a chat or completions chunk: its choices' content (or text) and reasoning. */
function chatText(json: unknown): string {
  const choices = (json as { choices?: unknown } | null | undefined)?.choices;
  let text = '';
  for (const choice of Array.isArray(choices) ? choices : []) {
    const content = choice?.delta?.content ?? choice?.text;
    if (typeof content === 'string') text += content;
    const reasoning = choice?.delta?.reasoning_content;
    if (typeof reasoning === 'string') text += reasoning;
  }
  return text;
}

/** The text of a Responses event: an output text delta's. */
function responsesText(json: unknown): string {
  const event = json as { type?: unknown; delta?: unknown } | null | undefined;
  return event?.type === 'response.output_text.delta' && typeof event.delta === 'string' ? event.delta : '';
}
