import type { ConvertContext, Json, StreamConverter } from '../../../convert/types.ts';
import type { SseEvent } from '../../../sse.ts';
import { callToHub, usageToHub } from './response.ts';

/** Spark answer frames → hub chunks: text deltas, function calls, the finish and the usage of the last frame. */
export class SparkToHubStream implements StreamConverter {
  readonly #ctx: ConvertContext;
  readonly #created = Math.floor(Date.now() / 1000);
  #id = '';
  #calls = 0;
  #started = false;

  constructor(ctx: ConvertContext) {
    this.#ctx = ctx;
  }

  push(event: SseEvent): SseEvent[] {
    let frame: Json;
    try {
      frame = JSON.parse(event.data);
    } catch {
      return [];
    }
    const sid = String(frame.header?.sid ?? '');
    this.#id ||= `chatcmpl-${sid}`;
    const out: Json[] = [];
    for (const item of Array.isArray(frame.payload?.choices?.text) ? frame.payload.choices.text : []) {
      const delta: Json = this.#started ? {} : { role: 'assistant' };
      this.#started = true;
      if (typeof item?.content === 'string' && item.content !== '') delta.content = item.content;
      if (item?.function_call) {
        const index = this.#calls++;
        delta.tool_calls = [{ index, ...callToHub(item.function_call, sid, index) }];
      }
      if (Object.keys(delta).length > 0) out.push({ choices: [{ index: 0, delta, finish_reason: null }] });
    }
    if (frame.header?.status === 2) {
      out.push({ choices: [{ index: 0, delta: {}, finish_reason: this.#calls > 0 ? 'tool_calls' : 'stop' }] });
      const usage = usageToHub(frame);
      if (usage) out.push({ choices: [], usage });
    }
    return out.map((fields) => this.#event(fields));
  }

  end(): SseEvent[] {
    return [];
  }

  #event(fields: Json): SseEvent {
    const chunk = {
      id: this.#id,
      object: 'chat.completion.chunk',
      created: this.#created,
      model: this.#ctx.model,
      ...fields,
    };
    return { data: JSON.stringify(chunk) };
  }
}
