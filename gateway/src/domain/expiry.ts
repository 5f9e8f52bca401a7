import { AppError, defineErrors } from '../errors.ts';

export const EXPIRY_ERRORS = defineErrors({
  EXPIRY_INVALID: {
    status: 400,
    message: {
      zh: '过期时间格式错误！',
      en: 'Invalid expiry time! Use yyyy-MM-dd HH:mm:ss, a Unix time in seconds, or {never} for never',
    },
  },
  EXPIRY_IN_PAST: {
    status: 400,
    message: { zh: '过期时间不能早于当前时间', en: 'The expiry time must be in the future' },
  },
});

// Anything above this is not a plausible time in seconds (it is year 5138): most likely milliseconds.
const LATEST_SECONDS = 100_000_000_000;
const TEXT_FORMAT = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/;

/**
 * An expiry as the console or a script sends it: Unix seconds (a number or digits), the text format
 * `yyyy-MM-dd HH:mm:ss` read in the server's time zone (the console formats in local time), or the
 * `never` marker (-1 for tokens, 0 for redemption codes). Answers Unix seconds or `never`.
 */
export function parseExpiry(input: unknown, never: number): number {
  const invalid = () => new AppError(EXPIRY_ERRORS.EXPIRY_INVALID, { never });
  if (typeof input === 'number') {
    if (input === never) return never;
    if (!Number.isSafeInteger(input) || input <= 0 || input >= LATEST_SECONDS) throw invalid();
    return input;
  }
  if (typeof input !== 'string') throw invalid();
  const text = input.trim();
  if (text === String(never)) return never;
  if (/^\d+$/.test(text)) return parseExpiry(Number(text), never);
  const parts = TEXT_FORMAT.exec(text);
  if (!parts) throw invalid();
  const [year, month, day, hour, minute, second] = parts.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(year, month - 1, day, hour, minute, second);
  // Date rolls impossible dates over (Feb 30 -> Mar 2); a rolled-over date is a typo, not a time.
  const exact =
    date.getFullYear() === year &&
    date.getMonth() === month - 1 &&
    date.getDate() === day &&
    date.getHours() === hour &&
    date.getMinutes() === minute &&
    date.getSeconds() === second;
  if (!exact) throw invalid();
  return Math.floor(date.getTime() / 1000);
}

/** Refuses an expiry that has already passed; `never` always passes. */
export function assertFuture(expiry: number, never: number, now: number): void {
  if (expiry !== never && expiry <= now) throw new AppError(EXPIRY_ERRORS.EXPIRY_IN_PAST);
}
