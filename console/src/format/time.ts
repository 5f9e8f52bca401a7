const pad = (n: number) => String(n).padStart(2, '0');

/** A Date as `yyyy-MM-dd HH:mm:ss` in the browser's time zone (the format of token expiry, spec doc 2 §5). */
export function formatDateTime(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(
    date.getMinutes(),
  )}:${pad(date.getSeconds())}`;
}

/** Unix seconds as `yyyy-MM-dd HH:mm:ss`; 0 or less as ''. */
export function formatSeconds(seconds: number | null | undefined): string {
  return seconds && seconds > 0 ? formatDateTime(new Date(seconds * 1000)) : '';
}

/** Unix milliseconds as `yyyy-MM-dd HH:mm:ss`; 0 or less as ''. */
export function formatMillis(millis: number | null | undefined): string {
  return millis && millis > 0 ? formatDateTime(new Date(millis)) : '';
}

const DATE_TIME = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;

/**
 * `yyyy-MM-dd HH:mm:ss` (seconds and the time optional, `T` accepted) in the browser's time zone as a Date,
 * or undefined when the text is not such a date or names a day that does not exist (2025-02-30).
 */
export function parseDateTime(text: string): Date | undefined {
  const match = DATE_TIME.exec(text.trim());
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? 0)) as number[];
  const date = new Date(year!, month! - 1, day!, hour!, minute!, second!);
  if (
    date.getFullYear() !== year ||
    date.getMonth() !== month! - 1 ||
    date.getDate() !== day ||
    date.getHours() !== hour ||
    date.getMinutes() !== minute
  ) {
    return undefined;
  }
  return date;
}

/** A value for `<input type="datetime-local">` (yyyy-MM-ddTHH:mm) from Unix seconds; '' for none. */
export function toLocalInput(seconds: number | undefined): string {
  if (!seconds) return '';
  return formatDateTime(new Date(seconds * 1000))
    .slice(0, 16)
    .replace(' ', 'T');
}

/** Unix seconds from a datetime-local value; undefined when empty or invalid. */
export function fromLocalInput(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const date = parseDateTime(value);
  return date ? Math.floor(date.getTime() / 1000) : undefined;
}

/** Today at 00:00 in the browser's time zone, as a Date. */
export function startOfToday(now = new Date()): Date {
  return new Date(now.getFullYear(), now.getMonth(), now.getDate());
}
