/**
 * Calendar periods in a time zone. A period is named by its start as seen in the zone — daily
 * `2026-11-26`, weekly `2026-W48` (ISO weeks: Monday to Sunday, numbered in the ISO week-year),
 * monthly `2026-11` — so every pod that reads the same clock and zone names the same period, and a
 * new period needs no reset: its name is new.
 */
export const PERIOD_KINDS = ['daily', 'weekly', 'monthly'] as const;
export type PeriodKind = (typeof PERIOD_KINDS)[number];

export interface Period {
  kind: PeriodKind;
  /** `2026-11-26`, `2026-W48` or `2026-11`. */
  name: string;
  /** The first instant (Unix ms) of the next period. */
  endsAtMs: number;
}

const DAY_MS = 86_400_000;
/** Past the longest period of each kind (a 25-hour day, a week, a 31-day month), with room for DST. */
const LONGEST_MS: Record<PeriodKind, number> = {
  daily: DAY_MS + 2 * 3_600_000,
  weekly: 8 * DAY_MS,
  monthly: 32 * DAY_MS,
};
const PREFIX: Record<PeriodKind, string> = { daily: 'd', weekly: 'w', monthly: 'm' };

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      calendar: 'iso8601',
      numberingSystem: 'latn',
    });
    formatters.set(zone, format);
  }
  return format;
}

interface LocalDate {
  year: number;
  month: number;
  day: number;
}

function localDate(ms: number, zone: string): LocalDate {
  const date: LocalDate = { year: 0, month: 0, day: 0 };
  for (const part of formatter(zone).formatToParts(ms)) {
    if (part.type === 'year' || part.type === 'month' || part.type === 'day') date[part.type] = Number(part.value);
  }
  return date;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The ISO week-year and week of a calendar date: the week belongs to the year of its Thursday. */
function isoWeek({ year, month, day }: LocalDate): { year: number; week: number } {
  const date = Date.UTC(year, month - 1, day);
  const mondayBased = (new Date(date).getUTCDay() + 6) % 7;
  const thursday = new Date(date + (3 - mondayBased) * DAY_MS);
  const weekYear = thursday.getUTCFullYear();
  const week = 1 + Math.floor((thursday.getTime() - Date.UTC(weekYear, 0, 1)) / (7 * DAY_MS));
  return { year: weekYear, week };
}

/** The name of the period of `kind` that holds the instant `ms` in `zone`. */
export function periodName(kind: PeriodKind, ms: number, zone: string): string {
  const date = localDate(ms, zone);
  if (kind === 'daily') return `${pad(date.year, 4)}-${pad(date.month)}-${pad(date.day)}`;
  if (kind === 'monthly') return `${pad(date.year, 4)}-${pad(date.month)}`;
  const { year, week } = isoWeek(date);
  return `${pad(year, 4)}-W${pad(week)}`;
}

/**
 * The first instant after `ms` that belongs to another period: searched on the zone's own clock, so
 * a midnight moved or skipped by a DST change is found where the zone puts it.
 */
function nextStart(kind: PeriodKind, ms: number, zone: string, name: string): number {
  let inside = ms;
  let outside = ms + LONGEST_MS[kind];
  while (outside - inside > 1) {
    const middle = Math.floor((inside + outside) / 2);
    if (periodName(kind, middle, zone) === name) inside = middle;
    else outside = middle;
  }
  return outside;
}

/** The period of `kind` that holds `ms` in `zone`, with its end. */
export function periodAt(kind: PeriodKind, ms: number, zone: string): Period {
  const name = periodName(kind, ms, zone);
  return { kind, name, endsAtMs: nextStart(kind, ms, zone, name) };
}

/** The key of a period in `period_usage`: its kind's letter and its name (`d:2026-11-26`). */
export const periodKey = (kind: PeriodKind, name: string) => `${PREFIX[kind]}:${name}`;
