import { channelType } from '../../domain/channels/registry.ts';
import { AZURE_DEFAULT_API_VERSION, azureDeployment } from '../protocols/openai/request.ts';
import type { ChannelSnapshot } from '../types.ts';

/** Whether a channel type serves the Realtime API: the registry says so (OpenAI and Azure OpenAI). */
export function servesRealtime(type: number): boolean {
  return channelType(type)?.endpoints.includes('realtime') ?? false;
}

export interface RealtimeTarget {
  url: string;
  headers: Record<string, string>;
}

/**
 * Where and how to open a channel's Realtime WebSocket. OpenAI: `/v1/realtime?model=` with a bearer
 * key (the beta protocol only when the client asked for it, so its events keep the names it
 * expects). Azure: `/openai/realtime?api-version=&deployment=` with `api-key`.
 */
export function realtimeTarget(
  channel: ChannelSnapshot,
  key: string,
  upstreamModel: string,
  beta: boolean,
): RealtimeTarget {
  const type = channelType(channel.type);
  const base = (channel.baseUrl || type?.baseUrl || '').replace(/\/+$/, '').replace(/^http/i, 'ws');
  const headers: Record<string, string> = {};
  if (beta) headers['openai-beta'] = 'realtime=v1';
  if (type?.openaiUrl === 'azure') {
    const query = new URLSearchParams({
      'api-version': channel.other || AZURE_DEFAULT_API_VERSION,
      deployment: azureDeployment(upstreamModel),
    });
    headers['api-key'] = key;
    return { url: `${base}/openai/realtime?${query}`, headers };
  }
  headers.authorization = `Bearer ${key}`;
  if (channel.openaiOrganization) headers['openai-organization'] = channel.openaiOrganization;
  return { url: `${base}/v1/realtime?${new URLSearchParams({ model: upstreamModel })}`, headers };
}

/** Whether the client speaks the beta protocol: `OpenAI-Beta: realtime=v1`, or its subprotocol form. */
export function wantsBeta(headers: Record<string, string | string[] | undefined>): boolean {
  const beta = String(headers['openai-beta'] ?? '');
  const protocols = String(headers['sec-websocket-protocol'] ?? '');
  return /realtime=v1/.test(beta) || protocols.split(',').some((p) => p.trim() === 'openai-beta.realtime-v1');
}
