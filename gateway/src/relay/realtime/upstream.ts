import { WebSocket } from 'ws';
import { channelType } from '../../domain/channels/registry.ts';
import { providerFor } from '../protocols/index.ts';
import { AZURE_DEFAULT_API_VERSION, azureDeployment, azureV1 } from '../protocols/openai/request.ts';
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

/**
 * Why a channel's socket could not be opened: the upstream refused the handshake (its status and
 * error) or could not be reached (502); or, not from the upstream, a setting of the channel.
 */
export class DialError extends Error {
  readonly status: number;
  readonly code: string;
  readonly fromUpstream: boolean;
  constructor(status: number, code: string, message: string, fromUpstream = true) {
    super(message);
    this.status = status;
    this.code = code;
    this.fromUpstream = fromUpstream;
  }
}

/**
 * Opens a channel's Realtime WebSocket, paused (`session.created` may arrive with the handshake's
 * answer, before anyone listens). The handshake answer is the upstream's response headers, so it
 * gets the transport's wait for them; a refused handshake becomes a DialError with the upstream's
 * own error.
 */
export function dialRealtime(target: RealtimeTarget, channel: ChannelSnapshot, timeoutMs: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(target.url, {
      headers: target.headers,
      perMessageDeflate: false,
      handshakeTimeout: timeoutMs,
    });
    socket.on('error', (error) =>
      reject(new DialError(502, 'upstream_unreachable', `upstream unreachable: ${error.message}`)),
    );
    socket.once('open', () => {
      socket.pause();
      resolve(socket);
    });
    socket.once('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const status = response.statusCode ?? 502;
        const parsed = providerFor(channel.type).parseError(status, Buffer.concat(chunks).toString('utf8'));
        reject(new DialError(status, parsed.code ?? `upstream_${status}`, parsed.message));
        socket.terminate();
      });
    });
  });
}
