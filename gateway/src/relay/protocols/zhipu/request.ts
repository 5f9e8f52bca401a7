import { channelType } from '../../../domain/channels/registry.ts';
import type { BuildInput, UpstreamRequest } from '../types.ts';

/** `{base}/api/paas/v3/model-api/{model}/invoke`, or `/sse-invoke` for a stream; signed when sent. */
export function buildZhipuRequest(input: BuildInput): UpstreamRequest {
  const base = (input.channel.baseUrl || channelType(input.channel.type)?.baseUrl || '').replace(/\/+$/, '');
  const action = input.stream ? 'sse-invoke' : 'invoke';
  return {
    url: `${base}/api/paas/v3/model-api/${encodeURIComponent(input.upstreamModel)}/${action}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: input.stream ? 'text/event-stream' : 'application/json' },
    body: input.body,
  };
}
