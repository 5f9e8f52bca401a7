import { channelType } from '../../../domain/channels/registry.ts';
import type { Json } from '../../convert/types.ts';
import type { WireFormat } from '../../types.ts';
import type { BuildInput, ProviderContext, UpstreamRequest } from '../types.ts';

/** Cohere's v2 operations, by the format spoken to them. */
const PATH: Partial<Record<WireFormat, string>> = {
  'cohere-chat': '/v2/chat',
  'cohere-embed': '/v2/embed',
  'cohere-rerank': '/v2/rerank',
};

/** The upstream model goes in the body (the conversion wrote the rest). */
export function prepareCohereBody(_format: WireFormat, body: Json, context: ProviderContext) {
  return { body: { ...body, model: context.upstreamModel }, upstreamModel: context.upstreamModel };
}

/** `POST {base}/v2/{chat,embed,rerank}` with the key as a Bearer token. */
export function buildCohereRequest(input: BuildInput): UpstreamRequest {
  const path = PATH[input.format];
  if (!path) throw new Error(`the Cohere protocol has no operation for ${input.format}`);
  const base = (input.channel.baseUrl || channelType(input.channel.type)?.baseUrl || '').replace(/\/+$/, '');
  return {
    url: `${base}${path}`,
    method: 'POST',
    headers: {
      authorization: `Bearer ${input.key}`,
      'content-type': 'application/json',
      accept: input.stream && input.format === 'cohere-chat' ? 'text/event-stream' : 'application/json',
    },
    body: input.body,
  };
}
