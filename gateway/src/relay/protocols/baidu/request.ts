import { channelType } from '../../../domain/channels/registry.ts';
import type { BuildInput, UpstreamRequest } from '../types.ts';
import { chatPath, embeddingsPath } from './endpoints.ts';

/** The channel's base URL, or Baidu's: the API and its OAuth token endpoint share the host. */
function baiduHost(baseUrl: string, type: number): string {
  return (baseUrl || channelType(type)?.baseUrl || '').replace(/\/+$/, '');
}

/** The model's ERNIE v1 path; the access token is added when the request is sent. */
export function buildBaiduRequest(input: BuildInput): UpstreamRequest {
  const host = baiduHost(input.channel.baseUrl, input.channel.type);
  const path =
    input.format === 'baidu-embeddings' ? embeddingsPath(input.upstreamModel) : chatPath(input.upstreamModel);
  return { url: `${host}${path}`, method: 'POST', headers: { 'content-type': 'application/json' }, body: input.body };
}
