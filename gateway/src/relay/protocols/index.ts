import { channelType, type Protocol, typeLabel } from '../../domain/channels/registry.ts';
import { channelRuleError } from '../routing/errors.ts';
import { SseParser } from '../sse.ts';
import type { UpstreamResponse } from '../transport.ts';
import { type WholeAnswer, wholeOf } from '../whole-answer.ts';
import { aliProvider } from './ali/index.ts';
import { anthropicProvider } from './anthropic/index.ts';
import { baiduProvider } from './baidu/index.ts';
import { bedrockProvider } from './bedrock/index.ts';
import { cohereProvider } from './cohere/index.ts';
import { cozeProvider } from './coze/index.ts';
import { difyProvider } from './dify/index.ts';
import { geminiProvider } from './gemini/index.ts';
import { jimengProvider } from './jimeng/index.ts';
import { klingProvider } from './kling/index.ts';
import { midjourneyProvider } from './midjourney/index.ts';
import { minimaxProvider } from './minimax/index.ts';
import { ollamaProvider } from './ollama/index.ts';
import { openAIProvider } from './openai/index.ts';
import { replicateProvider } from './replicate/index.ts';
import { seedanceProvider } from './seedance/index.ts';
import { sunoProvider } from './suno/index.ts';
import { tencentProvider } from './tencent/index.ts';
import type { AuthorizeInput, Provider, SendInput, StreamDecoder, UpstreamRequest } from './types.ts';
import { vertexProvider } from './vertex/index.ts';
import { videoProvider } from './video/index.ts';
import { viduProvider } from './vidu/index.ts';
import { xunfeiProvider } from './xunfei/index.ts';
import { zhipuProvider } from './zhipu/index.ts';

/** The provider folder of each protocol the channel-type registry names. */
export const PROVIDERS: Readonly<Record<Protocol, Provider>> = {
  openai: openAIProvider,
  anthropic: anthropicProvider,
  gemini: geminiProvider,
  baidu: baiduProvider,
  zhipu: zhipuProvider,
  ali: aliProvider,
  ollama: ollamaProvider,
  bedrock: bedrockProvider,
  tencent: tencentProvider,
  xunfei: xunfeiProvider,
  minimax: minimaxProvider,
  cohere: cohereProvider,
  vertex: vertexProvider,
  dify: difyProvider,
  coze: cozeProvider,
  replicate: replicateProvider,
  midjourney: midjourneyProvider,
  suno: sunoProvider,
  video: videoProvider,
  vidu: viduProvider,
  kling: klingProvider,
  seedance: seedanceProvider,
  jimeng: jimengProvider,
};

/**
 * The provider for a channel type, from the registry's protocol. A type Tollgate does not offer
 * (a stored row from an older version) has none: the routing index leaves such channels out, so
 * only a pinned request or a test reaches here, and it fails saying why instead of sending the
 * upstream a protocol it does not speak.
 */
export function providerFor(type: number): Provider {
  const row = channelType(type);
  if (!row?.offered || !row.protocol) {
    throw channelRuleError('channel:type_unsupported', {
      type: typeLabel(type),
      reason_zh: row?.reason.zh ?? '未知类型',
      reason_en: row?.reason.en ?? 'unknown type',
    });
  }
  return PROVIDERS[row.protocol];
}

/**
 * Authorizes and sends a request the provider's way (signature or access token first where the
 * protocol needs one; its own exchange where one HTTP call is not all of it, else one pooled call).
 */
export async function sendUpstream(
  provider: Provider,
  request: UpstreamRequest,
  input: SendInput & AuthorizeInput,
): Promise<UpstreamResponse> {
  const ready = provider.authorize ? await provider.authorize(request, input) : request;
  return provider.send ? provider.send(ready, input) : input.transport.send(ready, input.signal);
}

/**
 * `sendUpstream` for an answer read whole (a non-streaming call): one pooled call that makes no body
 * stream, or the provider's own exchange, its answer then read whole.
 */
export async function sendUpstreamWhole(
  provider: Provider,
  request: UpstreamRequest,
  input: Omit<SendInput, 'signal'> & AuthorizeInput & { signal?: AbortSignal },
): Promise<WholeAnswer> {
  const ready = provider.authorize ? await provider.authorize(request, input) : request;
  if (!provider.send) return input.transport.sendWhole(ready, input.signal);
  // A provider's exchange takes a signal: its own, so that listeners it leaves behind go with it.
  return wholeOf(await provider.send(ready, { ...input, signal: input.signal ?? new AbortController().signal }));
}

/** How to read a streamed answer of this content type; undefined when it is not a stream (read it whole). */
export function streamDecoderFor(provider: Provider, contentType: string): StreamDecoder | undefined {
  if (provider.streamDecoder) return provider.streamDecoder(contentType);
  return contentType.includes('text/event-stream') ? new SseParser() : undefined;
}

export type {
  AuthorizeInput,
  BuildInput,
  Provider,
  StreamDecoder,
  StreamObserver,
  UpstreamError,
  UpstreamRequest,
} from './types.ts';
