import { AppError } from '../../errors.ts';
import { RELAY_ERRORS } from '../errors.ts';
import { openAIError } from '../openai-error.ts';
import { dashscopeImagesAdapter } from '../protocols/ali/convert/images.ts';
import { dashscopeRerankAdapter } from '../protocols/ali/convert/rerank.ts';
import { claudeAdapter } from '../protocols/anthropic/convert/index.ts';
import { baiduChatAdapter } from '../protocols/baidu/convert/chat.ts';
import { baiduEmbeddingsAdapter } from '../protocols/baidu/convert/embeddings.ts';
import { converseAdapter } from '../protocols/bedrock/convert/index.ts';
import { cohereChatAdapter, cohereEmbedAdapter, cohereRerankAdapter } from '../protocols/cohere/convert/index.ts';
import { cozeAdapter } from '../protocols/coze/convert/index.ts';
import { difyAdapter } from '../protocols/dify/convert/index.ts';
import { geminiAdapter, geminiEmbedAdapter } from '../protocols/gemini/convert/index.ts';
import { ollamaChatAdapter } from '../protocols/ollama/convert/chat.ts';
import { ollamaEmbedAdapter } from '../protocols/ollama/convert/embed.ts';
import { responsesAdapter } from '../protocols/openai/responses/index.ts';
import { replicateChatAdapter, replicateImagesAdapter } from '../protocols/replicate/convert/index.ts';
import { tencentChatAdapter } from '../protocols/tencent/convert/index.ts';
import { xunfeiChatAdapter } from '../protocols/xunfei/convert/index.ts';
import { zhipuChatAdapter } from '../protocols/zhipu/convert/chat.ts';
import type { SseEvent } from '../sse.ts';
import type { WireFormat } from '../types.ts';
import type { ConvertContext, FormatAdapter, Json, RelayErrorInfo, StreamConverter, UpstreamAdapter } from './types.ts';

export type { ConvertContext, Json, RelayErrorInfo, StreamConverter, UpstreamAdapter } from './types.ts';

/** Client formats (both directions) and upstream-only formats (from the hub and back). */
const ADAPTERS = new Map<WireFormat, FormatAdapter | UpstreamAdapter>(
  [
    claudeAdapter,
    geminiAdapter,
    geminiEmbedAdapter,
    responsesAdapter,
    baiduChatAdapter,
    baiduEmbeddingsAdapter,
    zhipuChatAdapter,
    dashscopeRerankAdapter,
    dashscopeImagesAdapter,
    ollamaChatAdapter,
    ollamaEmbedAdapter,
    converseAdapter,
    tencentChatAdapter,
    xunfeiChatAdapter,
    cohereChatAdapter,
    cohereEmbedAdapter,
    cohereRerankAdapter,
    difyAdapter,
    cozeAdapter,
    replicateChatAdapter,
    replicateImagesAdapter,
  ].map((adapter) => [adapter.format, adapter]),
);

/** The hub a format converts through: its adapter's, or the format itself for the hubs. */
const hubOf = (format: WireFormat): WireFormat => ADAPTERS.get(format)?.hub ?? format;

/** Whether a request in `from` can be served by an upstream speaking `to`. */
export function canConvert(from: WireFormat, to: WireFormat): boolean {
  return from === to || hubOf(from) === hubOf(to);
}

/**
 * The formats a request passes through, client's first and upstream's last, for the log's
 * `request_conversion`; undefined when no conversion happens.
 */
export function conversionChain(client: WireFormat, upstream: WireFormat): WireFormat[] | undefined {
  if (client === upstream) return undefined;
  const hub = hubOf(client);
  return [...new Set([client, hub, upstream])];
}

/** A client request body in the upstream's format. Converters' refusals become 400s. */
export function convertRequest(from: WireFormat, to: WireFormat, body: Json, ctx: ConvertContext): Json {
  if (from === to) return body;
  return refusalsAsErrors(() => {
    const hub = hubOf(from);
    const inHub = from === hub ? body : clientAdapter(from).requestToHub(body, ctx);
    return to === hub ? inHub : adapter(to).requestFromHub(inHub, ctx);
  });
}

/** An upstream's whole answer in the client's format. */
export function convertResponse(from: WireFormat, to: WireFormat, body: Json, ctx: ConvertContext): Json {
  if (from === to) return body;
  const hub = hubOf(from);
  const inHub = from === hub ? body : adapter(from).responseToHub(body, ctx);
  return to === hub ? inHub : clientAdapter(to).responseFromHub(inHub, ctx);
}

/** An upstream's whole answer in the hub format (to read its text), whatever it was. */
export function responseInHub(format: WireFormat, body: Json, ctx: ConvertContext): Json {
  const convert = ADAPTERS.get(format);
  return convert ? convert.responseToHub(body, ctx) : body;
}

/**
 * Converts an upstream stream to the client's format event by event; undefined when both speak
 * the same format. OpenAI's `[DONE]` never crosses: each format ends its stream its own way.
 */
export function convertStream(from: WireFormat, to: WireFormat, ctx: ConvertContext): StreamConverter | undefined {
  if (from === to) return undefined;
  const hub = hubOf(from);
  const toHub = from === hub ? undefined : adapter(from).streamToHub(ctx);
  const fromHub = to === hub ? undefined : clientAdapter(to).streamFromHub(ctx);
  const outOfHub = (events: SseEvent[]) =>
    fromHub ? events.filter((e) => e.data !== '[DONE]').flatMap((e) => fromHub.push(e)) : events;
  return {
    push: (event) => outOfHub(toHub ? toHub.push(event) : [event]),
    end: () => [...outOfHub(toHub ? toHub.end() : []), ...(fromHub ? fromHub.end() : [])],
  };
}

/** An error body in the format the client speaks (OpenAI's shape for OpenAI formats). */
export function errorBodyFor(format: WireFormat, error: RelayErrorInfo): Json {
  return ADAPTERS.get(format)?.errorBody?.(error) ?? openAIError(error.message, error.type, error.code);
}

function adapter(format: WireFormat): FormatAdapter | UpstreamAdapter {
  const found = ADAPTERS.get(format);
  if (!found) throw new Error(`no converter for ${format}`);
  return found;
}

/** The adapter of a format clients speak: one with the client-side directions too. */
function clientAdapter(format: WireFormat): FormatAdapter {
  const found = adapter(format);
  if (!found.requestToHub || !found.responseFromHub || !found.streamFromHub || !found.errorBody) {
    throw new Error(`${format} is spoken only by upstreams`);
  }
  return found as FormatAdapter;
}

function refusalsAsErrors<T>(convert: () => T): T {
  try {
    return convert();
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError(RELAY_ERRORS.invalid_request, {
      detail: error instanceof Error ? error.message : 'the request cannot be converted',
    });
  }
}
