import { parsedData, type SseEvent } from '../../sse.ts';
import type { Usage } from '../../types.ts';
import { StreamText } from '../stream-text.ts';
import type { StreamObserver } from '../types.ts';
import { geminiUsage } from './usage.ts';

/**
 * Events mentioning usageMetadata held before the latest is read: each chunk repeats the running
 * count and the last completes it, so reading from the latest back usually parses one in this many.
 */
const USAGE_HOLD = 64;

/**
 * Follows a Gemini stream (one GenerateContentResponse per event): the text of every part, thoughts
 * included, for estimating; function calls; and usageMetadata, which each chunk repeats and the last
 * one completes. Only events with a function call are parsed as they come; the text is read only if
 * asked for (StreamText), and the usage from the latest event that reports it.
 */
export class GeminiStreamObserver implements StreamObserver {
  readonly #text = new StreamText(partsText);
  /** Events mentioning usageMetadata not read yet, oldest first. */
  #usageEvents: SseEvent[] = [];
  #usage: Usage | undefined;
  toolCalls = 0;

  get text(): string {
    return this.#text.value;
  }

  get usage(): Usage | undefined {
    this.#readUsage();
    return this.#usage;
  }

  observe(event: SseEvent): void {
    const data = event.data;
    this.#text.add(data);
    if (data.includes('"functionCall"')) {
      for (const part of partsOf(parsedData(event))) if (part?.functionCall) this.toolCalls++;
    }
    if (data.includes('"usageMetadata"')) {
      this.#usageEvents.push(event);
      if (this.#usageEvents.length >= USAGE_HOLD) this.#readUsage();
    }
  }

  /** The last usage reported: the latest held event's that has one, else the one read before. */
  #readUsage(): void {
    const held = this.#usageEvents;
    for (let i = held.length - 1; i >= 0; i--) {
      const usage = geminiUsage('gemini-generate', parsedData(held[i] as SseEvent));
      if (usage) {
        this.#usage = usage;
        break;
      }
    }
    this.#usageEvents = [];
  }
}

/** The parts of every candidate of an event's chunk (or chunks: a JSON array stream). */
function* partsOf(parsed: unknown): Generator<any> {
  for (const chunk of Array.isArray(parsed) ? parsed : [parsed]) {
    if (typeof chunk !== 'object' || chunk === null) continue;
    const { candidates } = chunk as { candidates?: unknown };
    for (const candidate of Array.isArray(candidates) ? candidates : []) {
      const parts = candidate?.content?.parts;
      if (Array.isArray(parts)) yield* parts;
    }
  }
}

function partsText(parsed: unknown): string {
  let text = '';
  for (const part of partsOf(parsed)) if (typeof part?.text === 'string') text += part.text;
  return text;
}
