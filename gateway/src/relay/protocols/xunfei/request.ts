import { channelType } from '../../../domain/channels/registry.ts';
import type { Json } from '../../convert/types.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { keyParts } from '../key-parts.ts';
import type { AuthorizeInput, BuildInput, ProviderContext, UpstreamRequest } from '../types.ts';
import { sparkSignedUrl } from './sign.ts';
import { sparkVersion } from './versions.ts';

/** The key's parts: APPID, APISecret, APIKey (new-api's order). */
export function xunfeiKey(type: number, key: string): { appId: string; apiSecret: string; apiKey: string } {
  const [appId = '', apiSecret = '', apiKey = ''] = keyParts(type, key);
  return { appId, apiSecret, apiKey };
}

/** The request frame names the version's `domain`, which only the channel knows. */
export function prepareXunfeiBody(_format: unknown, body: Json, context: ProviderContext) {
  const { domain } = sparkVersion(context.channel.other, context.upstreamModel);
  const chat = { ...body.parameter?.chat, domain };
  return { body: { ...body, parameter: { ...body.parameter, chat } }, upstreamModel: context.upstreamModel };
}

/** The frame names the channel's app id, from the key: after the param_override, which cannot change it. */
export function finishXunfeiBody(body: Json, channel: ChannelSnapshot, key: string): Json {
  const { appId } = xunfeiKey(channel.type, key);
  return { ...body, header: { ...body.header, app_id: appId } };
}

/** The version's WebSocket URL (signed at send time); the frame goes out as it was finished. */
export function buildXunfeiRequest(input: BuildInput): UpstreamRequest {
  const { path } = sparkVersion(input.channel.other, input.upstreamModel);
  const base = (input.channel.baseUrl || channelType(input.channel.type)?.baseUrl || '')
    .replace(/\/+$/, '')
    .replace(/^http/i, 'ws');
  return { url: `${base}${path}`, method: 'GET', headers: {}, body: input.body };
}

/** Signs the URL with the current date: Xunfei refuses a signature older than five minutes. */
export async function signXunfeiRequest(request: UpstreamRequest, input: AuthorizeInput): Promise<UpstreamRequest> {
  const { apiKey, apiSecret } = xunfeiKey(input.channel.type, input.key);
  return { ...request, url: sparkSignedUrl(request.url, apiKey, apiSecret) };
}
