import { channelType } from '../../../domain/channels/registry.ts';
import type { Json } from '../../convert/types.ts';
import { keyParts } from '../key-parts.ts';
import type { AuthorizeInput, BuildInput, ProviderContext, UpstreamRequest } from '../types.ts';
import { tc3Authorization } from './sign.ts';

export const HUNYUAN_SERVICE = 'hunyuan';
export const HUNYUAN_VERSION = '2023-09-01';

/** The key's parts: AppId (not used by the v3 API, kept for new-api's key format), SecretId, SecretKey. */
export function tencentKey(type: number, key: string): { appId: string; secretId: string; secretKey: string } {
  const [appId = '', secretId = '', secretKey = ''] = keyParts(type, key);
  return { appId, secretId, secretKey };
}

export function prepareTencentBody(_format: unknown, body: Json, context: ProviderContext) {
  return {
    body: { ...body, Model: context.upstreamModel, Stream: context.stream },
    upstreamModel: context.upstreamModel,
  };
}

/** `POST {base}/` with the action and API version in headers; signed once the headers are final. */
export function buildTencentRequest(input: BuildInput): UpstreamRequest {
  tencentKey(input.channel.type, input.key);
  const base = (input.channel.baseUrl || channelType(input.channel.type)?.baseUrl || '').replace(/\/+$/, '');
  return {
    url: `${base}/`,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-tc-action': 'ChatCompletions',
      'x-tc-version': HUNYUAN_VERSION,
    },
    body: input.body,
  };
}

/** Adds the timestamp and the TC3 signature over the final content type, host and body. */
export async function signTencentRequest(request: UpstreamRequest, input: AuthorizeInput): Promise<UpstreamRequest> {
  const { secretId, secretKey } = tencentKey(input.channel.type, input.key);
  const url = new URL(request.url);
  const timestamp = Math.floor(Date.now() / 1000);
  const authorization = tc3Authorization({
    secretId,
    secretKey,
    service: HUNYUAN_SERVICE,
    host: url.host,
    contentType: request.headers['content-type'] ?? 'application/json',
    payload: typeof request.body === 'string' ? request.body : '',
    timestamp,
    path: url.pathname,
    query: url.search.slice(1),
  });
  return {
    ...request,
    headers: { ...request.headers, 'x-tc-timestamp': String(timestamp), authorization },
  };
}
