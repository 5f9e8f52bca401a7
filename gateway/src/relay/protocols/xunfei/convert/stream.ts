import type { ConvertContext, Json, StreamConverter } from '../../../convert/types.ts';
import { parsedData, type SseEvent } from '../../../sse.ts';
import { HubChunks } from '../../hub-answer.ts';
import { callToHub, usageToHub } from './response.ts';

/** Spark answer frames → hub chunks: text deltas, function calls, the finish and the usage of the last frame. */
export class SparkToHubStream implements StreamConverter {
  readonly #chunks: HubChunks;
  #calls = 0;

  constructor(ctx: ConvertContext) {
    this.#chunks = new HubChunks('', ctx.model);
  }

  push(event: SseEvent): SseEvent[] {
    const frame = parsedData(event) as Json | undefined;
    if (frame === undefined) return [];
    const sid = String(frame.header?.sid ?? '');
    this.#chunks.id ||= `chatcmpl-${sid}`;
    const out: SseEvent[] = [];
    for (const item of Array.isArray(frame.payload?.choices?.text) ? frame.payload.choices.text : []) {
      const delta: Json = {};
      // The first delta is sent even when empty: it carries the assistant role.
      const first = !this.#chunks.started;
      if (typeof item?.content === 'string' && item.content !== '') delta.content = item.content;
      if (item?.function_call) {
        const index = this.#calls++;
        delta.tool_calls = [{ index, ...callToHub(item.function_call, sid, index) }];
      }
      if (first || Object.keys(delta).length > 0) out.push(this.#chunks.delta(delta));
    }
    if (frame.header?.status === 2) {
      out.push(this.#chunks.chunk({}, this.#calls > 0 ? 'tool_calls' : 'stop'));
      const usage = usageToHub(frame);
      if (usage) out.push(this.#chunks.usage(usage));
    }
    return out;
  }

  end(): SseEvent[] {
    return [];
  }
}
