import type { ConvertContext, Json, StreamConverter, UpstreamAdapter } from '../../../convert/types.ts';
import type { SseEvent } from '../../../sse.ts';
import { HubChunks, hubAnswer, hubUsage, nowSeconds } from '../../hub-answer.ts';
import { messageText } from '../../hub-request.ts';
import { eventJson } from '../../upstream-json.ts';
import { parseModelRef } from '../request.ts';
import { PREDICTION_EVENT } from '../stream.ts';
import { replicateUsage } from '../usage.ts';

const withVersion = (ctx: ConvertContext) => {
  const { version } = parseModelRef(ctx.upstreamModel);
  return version ? { version } : {};
};

/**
 * OpenAI chat (the hub) → a language model's prediction. Replicate's language models take one
 * `prompt` (and a `system_prompt`), not a message list: a single user turn goes as it is, a longer
 * conversation as a transcript ("User: … / Assistant: …" ending with "Assistant:"). They have no tool
 * calling, so a request's tools are refused.
 */
export const replicateChatAdapter: UpstreamAdapter = {
  format: 'replicate-chat',
  hub: 'openai-chat',
  requestFromHub: (body, ctx) => {
    if (Array.isArray(body.tools) && body.tools.length > 0) {
      throw new Error("Replicate's language models have no tool calling; a request's tools cannot be used");
    }
    const messages: Json[] = Array.isArray(body.messages) ? body.messages : [];
    const system = messages
      .filter((m) => m?.role === 'system' || m?.role === 'developer')
      .map((m) => messageText(m.content))
      .join('\n');
    const turns = messages.filter((m) => m?.role === 'user' || m?.role === 'assistant');
    if (turns.some((m) => Array.isArray(m.content) && m.content.some((part: Json) => part?.type !== 'text'))) {
      throw new Error("Replicate's language models take text only; images and audio cannot be sent");
    }
    if (!turns.some((m) => m.role === 'user')) throw new Error('the request has no user message to send');
    const prompt =
      turns.length === 1
        ? messageText(turns[0]!.content)
        : `${turns.map((m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${messageText(m.content)}`).join('\n')}\nAssistant:`;
    const maxTokens = body.max_completion_tokens ?? body.max_tokens;
    const stop = typeof body.stop === 'string' ? body.stop : Array.isArray(body.stop) ? body.stop.join(',') : undefined;
    return {
      ...withVersion(ctx),
      input: {
        prompt,
        ...(system ? { system_prompt: system } : {}),
        ...(typeof maxTokens === 'number' ? { max_tokens: maxTokens } : {}),
        ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}),
        ...(typeof body.top_p === 'number' ? { top_p: body.top_p } : {}),
        ...(stop ? { stop_sequences: stop } : {}),
      },
      ...(ctx.stream ? { stream: true } : {}),
    };
  },
  responseToHub: (prediction, ctx) => {
    const usage = replicateUsage(prediction);
    return hubAnswer({
      id: `chatcmpl-${prediction.id ?? crypto.randomUUID().replaceAll('-', '')}`,
      model: ctx.model,
      message: { content: outputText(prediction.output) },
      usage: usage ? hubUsage(usage.promptTokens, usage.completionTokens) : undefined,
    });
  },
  streamToHub: (ctx) => new ReplicateToHubStream(ctx),
};

/** A language model's output: the streamed tokens as an array of strings, or one string. */
const outputText = (output: unknown): string =>
  Array.isArray(output)
    ? output.filter((o) => typeof o === 'string').join('')
    : typeof output === 'string'
      ? output
      : '';

/** Output events as text, the appended prediction as the finish and usage; an error event as an error chunk. */
class ReplicateToHubStream implements StreamConverter {
  readonly #chunks: HubChunks;

  constructor(ctx: ConvertContext) {
    this.#chunks = new HubChunks(`chatcmpl-${crypto.randomUUID().replaceAll('-', '')}`, ctx.model);
  }

  push(event: SseEvent): SseEvent[] {
    switch (event.event) {
      case 'output':
        return this.#chunks.text(event.data);
      case PREDICTION_EVENT: {
        const usage = replicateUsage(eventJson(event));
        return this.#chunks.finish(usage ? hubUsage(usage.promptTokens, usage.completionTokens) : undefined);
      }
      case 'error': {
        const detail = eventJson(event)?.detail;
        return this.#chunks.error(typeof detail === 'string' ? detail : event.data, 'prediction_failed');
      }
      default:
        return [];
    }
  }

  end(): SseEvent[] {
    return this.#chunks.finish(undefined);
  }
}

/** OpenAI image sizes as the aspect ratios image models on Replicate take. */
const ASPECT: Record<string, string> = {
  '1024x1024': '1:1',
  '512x512': '1:1',
  '256x256': '1:1',
  '1792x1024': '16:9',
  '1024x1792': '9:16',
  '1536x1024': '3:2',
  '1024x1536': '2:3',
};

/**
 * OpenAI images ↔ an image model's prediction (black-forest-labs/flux-schnell and its kin): prompt,
 * number of images and aspect ratio in; the output URLs back as `data[].url`. Replicate answers
 * URLs only, so `response_format: b64_json` is refused rather than answered in another shape.
 */
export const replicateImagesAdapter: UpstreamAdapter = {
  format: 'replicate-images',
  hub: 'openai-images',
  requestFromHub: (body, ctx) => {
    if (body.response_format === 'b64_json') {
      throw new Error('Replicate answers image URLs; response_format b64_json is not available');
    }
    if (typeof body.prompt !== 'string' || body.prompt === '') throw new Error('prompt is required');
    const size = typeof body.size === 'string' ? body.size : undefined;
    if (size && size !== 'auto' && !ASPECT[size]) throw new Error(`size ${size} has no Replicate aspect ratio`);
    return {
      ...withVersion(ctx),
      input: {
        prompt: body.prompt,
        num_outputs: typeof body.n === 'number' ? body.n : 1,
        ...(size && ASPECT[size] ? { aspect_ratio: ASPECT[size] } : {}),
      },
    };
  },
  responseToHub: (prediction) => {
    const output = Array.isArray(prediction.output) ? prediction.output : [prediction.output];
    return {
      created: nowSeconds(),
      data: output.filter((url: unknown) => typeof url === 'string').map((url: string) => ({ url })),
    };
  },
  streamToHub: () => {
    throw new Error('image predictions are not streamed');
  },
};
