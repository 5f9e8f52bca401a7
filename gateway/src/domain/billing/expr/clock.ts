import type { ClockFunction } from './ast.ts';

const formatters = new Map<string, Intl.DateTimeFormat>();
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** Hour (0–23), minute, weekday (0 = Sunday), month (1–12) or day of month of `now` in `timeZone`. */
export function clockPart(part: ClockFunction, now: Date, timeZone: string): number {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      hour: 'numeric',
      minute: 'numeric',
      weekday: 'short',
      month: 'numeric',
      day: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  const parts = formatter.formatToParts(now);
  const value = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  switch (part) {
    case 'hour':
      return Number(value('hour'));
    case 'minute':
      return Number(value('minute'));
    case 'weekday':
      return WEEKDAYS.indexOf(value('weekday'));
    case 'month':
      return Number(value('month'));
    case 'day':
      return Number(value('day'));
  }
}
