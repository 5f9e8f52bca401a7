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
 * The values of an Azure channel's API version (`other`) that choose Azure's GA v1 API, which has no
 * dated versions: `v1`, and `latest` / `preview`, the version names the v1 API itself knows.
 */
const AZURE_V1_VERSIONS = new Set(['v1', 'latest', 'preview']);

/** Whether an Azure channel's API version setting chooses Azure's GA v1 API. */
export function azureV1(other: string): boolean {
  return AZURE_V1_VERSIONS.has(other.trim().toLowerCase());
}

/**
 * Where and how to open a channel's Realtime WebSocket. OpenAI: `/v1/realtime?model=` with a bearer
 * key (the beta protocol only when the client asked for it, so its events keep the names it
 * expects). Azure, with `api-key`, in the form its API version chooses: a dated version (the
 * default when empty) dials the preview endpoint `/openai/realtime?api-version=&deployment=`; `v1`
 * dials the GA endpoint `/openai/v1/realtime?model=<deployment>`, which takes no api-version.
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
    headers['api-key'] = key;
    const deployment = azureDeployment(upstreamModel);
    if (azureV1(channel.other)) {
      return { url: `${base}/openai/v1/realtime?${new URLSearchParams({ model: deployment })}`, headers };
    }
    const query = new URLSearchParams({
      'api-version': channel.other.trim() || AZURE_DEFAULT_API_VERSION,
      deployment,
    });
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
