import { AppError, type ErrorParams } from '../../errors.ts';
import { UpstreamFailure } from '../exchange/failure.ts';
import type { ChannelSnapshot } from '../types.ts';
import type { SecretScrubber } from './scrubber.ts';

/**
 * A failed attempt as the client, the error log and the health records may see it: the upstream's message
 * and code (or an error's parameters, which may quote an upstream or a URL) without the gateway's or the
 * channel's secrets. An error with nothing to hide is returned as it was.
 */
export function scrubFailure<E extends UpstreamFailure | AppError>(
  secrets: SecretScrubber,
  error: E,
  channel: ChannelSnapshot,
): E {
  if (error instanceof UpstreamFailure) {
    const message = secrets.scrub(error.error.message, channel);
    const code = error.error.code === null ? null : secrets.scrub(error.error.code, channel);
    if (message === error.error.message && code === error.error.code) return error;
    return new UpstreamFailure({ ...error.error, message, code }, error.channel, error.keyIndex, error.cause) as E;
  }
  const params: ErrorParams = {};
  let changed = false;
  for (const [name, value] of Object.entries(error.params)) {
    const scrubbed = typeof value === 'string' ? secrets.scrub(value, channel) : value;
    changed ||= scrubbed !== value;
    params[name] = scrubbed;
  }
  const spec = error.spec;
  const message = { zh: secrets.scrub(spec.message.zh, channel), en: secrets.scrub(spec.message.en, channel) };
  changed ||= message.zh !== spec.message.zh || message.en !== spec.message.en;
  return changed ? (new AppError({ ...spec, message }, params) as E) : error;
}
