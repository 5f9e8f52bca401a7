import {
  parseStatusCodeRanges,
  type StatusCodeRange,
  statusCodeInRanges,
} from '../../domain/options/status-code-ranges.ts';

export interface RetryInput {
  /** HTTP status of the failed attempt, after the channel's status_code_mapping. */
  status: number;
  /** The error's code; `channel:*` codes blame the channel's own configuration. */
  errorCode?: string | null | undefined;
  /** Attempts still allowed after this one (RetryTimes minus retries made). */
  remainingRetries: number;
  /** The key pinned a channel (`sk-…-<id>`): there is no other channel to go to. */
  pinned?: boolean | undefined;
  /** Raised before the upstream was contacted, or the rule said so: another channel cannot help. */
  skipRetry?: boolean | undefined;
  /** Channel affinity asked for no failover (reference §4.2 `skip_retry_on_failure`). */
  affinitySkip?: boolean | undefined;
}

export interface RetryOptions {
  /** AutomaticRetryStatusCodes, parsed (see `retryStatusRanges`). */
  retryStatusCodes: readonly StatusCodeRange[];
}

/**
 * Whether a failed attempt is retried on another channel (reference §4.3). new-api's order, with
 * two deliberate changes: the remaining-retries and pinned checks come first, so a `channel:*`
 * error never retries past RetryTimes (new-api's loop bound already stops it) nor retries a pinned
 * channel (which would reuse the failing channel, §11 #8).
 */
export function shouldRetry(input: RetryInput, options: RetryOptions): boolean {
  if (input.affinitySkip) return false;
  if (input.remainingRetries <= 0) return false;
  if (input.pinned) return false;
  if (input.errorCode?.startsWith('channel:')) return true;
  if (input.skipRetry) return false;
  const status = input.status;
  if (status >= 200 && status < 300) return false;
  if (!(status >= 100 && status <= 599)) return true;
  if (input.errorCode === 'bad_response_body') return false;
  // Gateway timeouts: the upstream may still be working on (and billing) the request.
  if (status === 504 || status === 524) return false;
  return statusCodeInRanges(status, options.retryStatusCodes);
}

/**
 * Whether a task submission (Midjourney, Suno, video) the upstream refused with this status goes to
 * another channel (reference §4.3, task relay): a rate limit or a redirect does; a server error does
 * unless it is a gateway timeout (the task may have been taken); 400, 408 and 2xx never do; any other
 * status does.
 */
export function shouldRetryTask(status: number): boolean {
  if (status === 429 || status === 307) return true;
  if (status >= 500) return status !== 504 && status !== 524;
  if (status === 400 || status === 408) return false;
  return status < 200 || status >= 300;
}

export const DEFAULT_RETRY_STATUS_CODES = '100-199,300-399,401-407,409-499,500-503,505-523,525-599';

const DEFAULT_RANGES: readonly StatusCodeRange[] = Object.freeze(rangesOf(DEFAULT_RETRY_STATUS_CODES) ?? []);

let cachedText: string | undefined;
let cachedRanges: readonly StatusCodeRange[] = DEFAULT_RANGES;

/**
 * AutomaticRetryStatusCodes text to ranges, remembering the last text so that a caller can pass
 * the option on every request for free. Text the validator would refuse falls back to the default.
 */
export function retryStatusRanges(text: string): readonly StatusCodeRange[] {
  if (text === cachedText) return cachedRanges;
  const ranges = rangesOf(text);
  cachedText = text;
  cachedRanges = ranges ? Object.freeze(ranges) : DEFAULT_RANGES;
  return cachedRanges;
}

function rangesOf(text: string): StatusCodeRange[] | undefined {
  const parsed = parseStatusCodeRanges(text);
  return parsed.ok ? parsed.ranges : undefined;
}

/**
 * The status an upstream error is reported with under the channel's status_code_mapping
 * (`{"429":"500"}`, values strings or numbers; reference §4.6). A 200 is never remapped; an
 * unusable target (not an integer in 100–599) leaves the status as it was.
 */
export function mapStatusCode(status: number, mapping: Readonly<Record<string, unknown>> | undefined): number {
  if (mapping === undefined || status === 200) return status;
  const key = String(status);
  if (!Object.hasOwn(mapping, key)) return status;
  const target = mapping[key];
  const mapped = typeof target === 'number' ? target : typeof target === 'string' ? Number(target.trim()) : Number.NaN;
  return Number.isInteger(mapped) && mapped >= 100 && mapped <= 599 ? mapped : status;
}
