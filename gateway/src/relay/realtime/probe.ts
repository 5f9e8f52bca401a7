import type { RawData } from 'ws';
import type { ChannelFailure } from '../health/auto-disable.ts';
import { applyHeaderOverride } from '../overrides/header-override.ts';
import type { ChannelSnapshot } from '../types.ts';
import { DialError, dialRealtime, realtimeTarget } from './upstream.ts';

/**
 * A channel test for a Realtime model: the handshake the relay would make (URL, key, header
 * override) and the first server event, which must be `session.created`. Nothing is generated, so
 * nothing is used. A realtime model cannot answer a chat completion, so the tester's usual request
 * would fail a healthy channel (and could auto-disable it).
 */
export async function probeRealtime(
  channel: ChannelSnapshot,
  key: string,
  upstreamModel: string,
  timeoutMs: number,
): Promise<ChannelFailure | undefined> {
  const target = realtimeTarget(channel, key, upstreamModel, false);
  const headerError = applyHeaderOverride(target.headers, channel.headerOverride, { apiKey: key });
  if (headerError) return { status: 400, code: headerError.code, message: headerError.message, skipRetry: true };
  const deadline = AbortSignal.timeout(timeoutMs);
  let socket: Awaited<ReturnType<typeof dialRealtime>>;
  try {
    socket = await dialRealtime(target, channel, timeoutMs);
  } catch (error) {
    const failure = error instanceof DialError ? error : new DialError(502, 'upstream_error', String(error));
    return { status: failure.status, code: failure.code, message: failure.message, skipRetry: false };
  }
  try {
    const first = await new Promise<RawData | undefined>((resolve) => {
      const timedOut = () => resolve(undefined);
      deadline.addEventListener('abort', timedOut, { once: true });
      socket.once('message', (data) => {
        deadline.removeEventListener('abort', timedOut);
        resolve(data);
      });
      socket.once('close', () => resolve(undefined));
      socket.resume();
    });
    if (!first) {
      const message = `the upstream sent no session.created within ${timeoutMs / 1000}s`;
      return { status: 504, code: 'upstream_timeout', message, skipRetry: false };
    }
    const event = parse(first);
    if (event?.type === 'session.created') return undefined;
    const message = event?.error?.message ?? `the upstream opened the session with ${String(event?.type)}`;
    return { status: 502, code: event?.error?.code ?? 'upstream_error', message, skipRetry: false };
  } finally {
    socket.close(1000);
  }
}

function parse(data: RawData): { type?: unknown; error?: { message?: string; code?: string } } | undefined {
  try {
    return JSON.parse(String(data));
  } catch {
    return undefined;
  }
}
