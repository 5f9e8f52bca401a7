import type { OutboundGuard } from '../../../http/outbound/guard.ts';
import type { UpstreamRequest } from '../../protocols/index.ts';
import type { VideoTasks } from '../../protocols/video-tasks.ts';
import type { Transport, UpstreamResponse } from '../../transport.ts';
import type { ChannelSnapshot } from '../../types.ts';

/** Who a video request is sent for: the channel's protocol and the key the task was submitted with. */
export interface VideoUpstream {
  transport: Transport;
  tasks: VideoTasks;
  channel: ChannelSnapshot;
  key: string;
}

/** Sends a video request the protocol's way: its own `send` where a credential is fetched first, else as built. */
export function sendVideoRequest(
  { transport, tasks, channel, key }: VideoUpstream,
  request: UpstreamRequest,
  signal: AbortSignal,
): Promise<UpstreamResponse> {
  if (!tasks.send) return transport.send(request, signal);
  return tasks.send(request, { transport, signal, stream: false, channel, key });
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 3;

/**
 * A finished video's bytes: the content request, then the redirects it answers (Gemini's file
 * download sends the caller on to a signed address) followed without the request's headers, so
 * the key never leaves the vendor's own host. A redirect's address is the vendor's answer, not the
 * channel's: it is fetched under the outbound guard (fetch_setting.*), every hop checked.
 */
export async function fetchVideoContent(
  upstream: VideoUpstream,
  outbound: OutboundGuard,
  request: UpstreamRequest,
  signal: AbortSignal,
): Promise<UpstreamResponse> {
  const response = await sendVideoRequest(upstream, request, signal);
  const location = response.headers.location;
  if (!REDIRECTS.has(response.status) || typeof location !== 'string' || location === '') return response;
  await response.body.text();
  const url = new URL(location, request.url).toString();
  return outbound.send({ url, method: 'GET', signal, maxRedirects: MAX_REDIRECTS - 1 });
}
