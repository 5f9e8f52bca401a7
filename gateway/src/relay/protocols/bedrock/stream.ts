import { parsedData, type SseEvent, StreamEvent } from '../../sse.ts';
import type { Usage } from '../../types.ts';
import { ClaudeStreamObserver } from '../anthropic/index.ts';
import type { StreamDecoder, StreamObserver } from '../types.ts';
import { EventStreamDecoder, type EventStreamMessage } from './event-stream.ts';
import { converseUsage } from './usage.ts';

type Json = Record<string, any>;

/** Bedrock ended a stream with an exception message (throttling, a model error, a validation failure…). */
export class BedrockStreamError extends Error {
  override readonly name = 'BedrockStreamError';
}

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

/**
 * A Bedrock event stream as events of the native format. InvokeModelWithResponseStream's `chunk`
 * events carry `{"bytes": base64}` of one Claude stream event, which becomes that Claude SSE event
 * (so Claude clients and converters read it as Anthropic's own stream); ConverseStream's events
 * (messageStart, contentBlockDelta, metadata …) keep their type as the event name and their JSON as
 * data. An exception message ends the stream as an error.
 */
export class BedrockStreamDecoder implements StreamDecoder {
  readonly #frames = new EventStreamDecoder();
  /** An exception seen: the events before it still go out, then the stream fails. */
  #failure: BedrockStreamError | undefined;

  push(chunk: Uint8Array): SseEvent[] {
    if (this.#failure) throw this.#failure;
    const events: SseEvent[] = [];
    for (const message of this.#frames.push(chunk)) {
      const failure = exceptionOf(message);
      if (failure) {
        this.#failure = failure;
        break;
      }
      events.push(...this.#event(message));
    }
    return events;
  }

  end(): SseEvent[] {
    if (this.#failure) throw this.#failure;
    this.#frames.end();
    return [];
  }

  #event(message: EventStreamMessage): SseEvent[] {
    const type = String(message.headers[':event-type'] ?? '');
    if (type !== 'chunk') return type === '' ? [] : [new StreamEvent(text(message.payload), type)];
    const payload = JSON.parse(text(message.payload)) as Json;
    if (typeof payload.bytes !== 'string') return [];
    const data = Buffer.from(payload.bytes, 'base64').toString('utf8');
    // Parsed here for its type: the observer and the converter read this parse, not their own.
    const parsed = JSON.parse(data) as Json;
    const event = parsed.type;
    return [new StreamEvent(data, typeof event === 'string' ? event : undefined, undefined, parsed)];
  }
}

/** The error an exception (or error) message carries; undefined for an event. */
function exceptionOf(message: EventStreamMessage): BedrockStreamError | undefined {
  const kind = message.headers[':message-type'];
  if (kind !== 'exception' && kind !== 'error') return undefined;
  const type = String(message.headers[':exception-type'] ?? message.headers[':error-code'] ?? 'exception');
  let detail = String(message.headers[':error-message'] ?? '');
  try {
    detail = String((JSON.parse(text(message.payload)) as Json).message ?? detail);
  } catch {
    // The header's message (or none).
  }
  return new BedrockStreamError(`${type}: ${detail || 'the upstream stream failed'}`);
}

/**
 * Claude's stream observer, with Bedrock's own count (`amazon-bedrock-invocationMetrics` on the
 * last event) as the fallback when Claude's usage is missing.
 */
export class BedrockClaudeObserver implements StreamObserver {
  readonly #claude = new ClaudeStreamObserver();
  #metrics: Usage | undefined;

  observe(event: SseEvent): void {
    this.#claude.observe(event);
    if (!event.data.includes('amazon-bedrock-invocationMetrics')) return;
    // Not JSON: Claude's observer ignored it too.
    const metrics = (parsedData(event) as Json | undefined)?.['amazon-bedrock-invocationMetrics'] as Json | undefined;
    if (metrics) {
      this.#metrics = { promptTokens: metrics.inputTokenCount ?? 0, completionTokens: metrics.outputTokenCount ?? 0 };
    }
  }

  get usage(): Usage | undefined {
    return this.#claude.usage ?? this.#metrics;
  }
  get text(): string {
    return this.#claude.text;
  }
  get toolCalls(): number {
    return this.#claude.toolCalls;
  }
}

/** Follows a ConverseStream: text and reasoning deltas, tool uses started, the usage of `metadata`. */
export class ConverseStreamObserver implements StreamObserver {
  #text = '';
  #toolCalls = 0;
  #usage: Usage | undefined;

  observe(event: SseEvent): void {
    const data = parsedData(event) as Json | undefined;
    if (data === undefined) return;
    switch (event.event) {
      case 'contentBlockStart':
        if (data.start?.toolUse) this.#toolCalls++;
        break;
      case 'contentBlockDelta': {
        const piece = data.delta?.text ?? data.delta?.reasoningContent?.text;
        if (typeof piece === 'string') this.#text += piece;
        break;
      }
      case 'metadata':
        this.#usage = converseUsage(data.usage) ?? this.#usage;
        break;
    }
  }

  get usage(): Usage | undefined {
    return this.#usage;
  }
  get text(): string {
    return this.#text;
  }
  get toolCalls(): number {
    return this.#toolCalls;
  }
}
