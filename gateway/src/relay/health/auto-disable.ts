import type { OptionsService } from '../../domain/options/index.ts';
import { parseStatusCodeRanges, statusCodeInRanges } from '../../domain/options/status-code-ranges.ts';

/** An upstream failure as the auto-disable rule sees it: status after the channel's mapping. */
export interface ChannelFailure {
  status: number;
  code: string | null;
  message: string;
  /** Raised before the upstream was reached, or a rule said another channel cannot help. */
  skipRetry: boolean;
}

/**
 * Whether a failure says the channel itself is broken (reference §4.4): only when the
 * AutomaticDisableChannelEnabled option is on; then a `channel:*` error, a status in
 * AutomaticDisableStatusCodes, or a message containing one of AutomaticDisableKeywords (any case).
 * The channel's own `auto_ban` is checked by the caller.
 */
export function shouldDisableChannel(failure: ChannelFailure, options: OptionsService): boolean {
  if (!options.getBoolean('AutomaticDisableChannelEnabled')) return false;
  if (failure.code?.startsWith('channel:')) return true;
  if (failure.skipRetry) return false;
  const ranges = parseStatusCodeRanges(options.get('AutomaticDisableStatusCodes'));
  if (ranges.ok && statusCodeInRanges(failure.status, ranges.ranges)) return true;
  const message = failure.message.toLowerCase();
  return options
    .get('AutomaticDisableKeywords')
    .split('\n')
    .map((keyword) => keyword.trim().toLowerCase())
    .some((keyword) => keyword !== '' && message.includes(keyword));
}
