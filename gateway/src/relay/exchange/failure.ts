import type { UpstreamError } from '../protocols/index.ts';
import type { ChannelSnapshot } from '../types.ts';

/** An upstream answered with an error (status after the channel's status_code_mapping), or could not be reached. */
export class UpstreamFailure extends Error {
  readonly error: UpstreamError;
  readonly channel: ChannelSnapshot;
  /** The channel key the failing call used. */
  readonly keyIndex: number;
  constructor(error: UpstreamError, channel: ChannelSnapshot, keyIndex: number, cause?: unknown) {
    super(error.message, { cause });
    this.error = error;
    this.channel = channel;
    this.keyIndex = keyIndex;
  }
}

/**
 * The upstream broke off a stream after its 200 went out (the sink has been cut off): no retry can
 * answer instead. `cause` is what broke it.
 */
export class StreamBroken extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/**
 * The client went away before anything was written to it: the upstream call was aborted, and no
 * channel is to blame (no retry, no health mark). Counted as `client_closed` with status 499.
 */
export class ClientGone extends Error {
  constructor(cause: unknown) {
    super('the client closed the connection', { cause });
    this.name = 'ClientGone';
  }
}
