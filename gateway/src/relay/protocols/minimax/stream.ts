import { jsonEvent, parsedData, type SseEvent, SseParser } from '../../sse.ts';
import type { StreamDecoder } from '../types.ts';

/**
 * MiniMax's chat stream, read as OpenAI chunks. Its last chunk repeats the whole answer as a
 * `message` beside the finish reason and usage, where OpenAI clients expect a `delta`: the repeat is
 * replaced by an empty delta so no client reads the answer twice or trips on a missing delta. A
 * failure reported midway (`base_resp` with a non-zero code) becomes the in-stream error clients read.
 */
export class MinimaxStreamDecoder implements StreamDecoder {
  readonly #sse = new SseParser();

  push(chunk: Uint8Array): SseEvent[] {
    return this.#sse.push(chunk).map(normalize);
  }

  end(): SseEvent[] {
    return this.#sse.end().map(normalize);
  }
}

function normalize(event: SseEvent): SseEvent {
  if (!event.data.includes('"message"') && !event.data.includes('"base_resp"')) return event;
  const chunk = parsedData(event) as any;
  if (chunk === undefined) return event;
  const failure = chunk?.base_resp;
  if (typeof failure?.status_code === 'number' && failure.status_code !== 0) {
    const error = {
      message: `MiniMax ${failure.status_code}: ${String(failure.status_msg ?? '')}`,
      type: 'upstream_error',
      code: String(failure.status_code),
    };
    return jsonEvent({ error });
  }
  if (!Array.isArray(chunk?.choices)) return event;
  const choices = chunk.choices.map((choice: any) => {
    if (!choice?.message || choice.delta) return choice;
    const { message: _whole, ...rest } = choice;
    return { ...rest, delta: {} };
  });
  return jsonEvent({ ...chunk, choices }, event.event);
}
