import { buildErrorOther, type UsageRecorder } from '../domain/usage/index.ts';
import type { RelayCaller } from './auth/key-auth.ts';
import type { RouteTrace } from './routing/route-trace.ts';
import type { ChannelSnapshot } from './types.ts';

export interface RelayFailure {
  /** The channel the last attempt went to. */
  channel: ChannelSnapshot;
  /** Every channel tried, in order. */
  tried: readonly number[];
  /** What the client is told: HTTP status, error code and message. */
  status: number;
  code: string;
  message: string;
  /** An upstream answered with the error (as opposed to the gateway refusing before reaching one). */
  fromUpstream: boolean;
  /** Why the last channel was chosen. */
  route?: RouteTrace | undefined;
}

/**
 * The error log (type 5) of a request whose every attempt failed, as new-api writes it with
 * ERROR_LOG_ENABLED: who, which model and channel, the message the client got, and in `other` the error's
 * type, code, status and the channels tried. The recorder drops it when error logs are off.
 */
export function recordRelayFailure(
  recorder: UsageRecorder,
  caller: RelayCaller,
  request: { requestId: string; path: string },
  input: { model: string; stream: boolean; startedMs: number },
  failure: RelayFailure,
): void {
  const { user, token } = caller.identity;
  recorder.recordError({
    userId: user.id,
    username: user.username,
    tokenId: token.id,
    tokenName: token.name,
    channelId: failure.channel.id,
    channelName: failure.channel.name,
    modelName: input.model,
    group: caller.group,
    useTimeSeconds: Math.round((Date.now() - input.startedMs) / 1000),
    isStream: input.stream,
    ip: '',
    requestId: request.requestId,
    content: failure.message,
    other: buildErrorOther({
      requestPath: request.path,
      errorType: failure.fromUpstream ? 'upstream_error' : 'tollgate_error',
      errorCode: failure.code,
      statusCode: failure.status,
      channelId: failure.channel.id,
      channelName: failure.channel.name,
      channelType: failure.channel.type,
      usedChannels: failure.tried,
      ...(failure.route ? { route: { ...failure.route } } : {}),
    }),
  });
}
