import { describe, expect, it } from 'vitest';
import { isTimeZone } from '../../time-zones.ts';
import { periodAt, periodKey, periodName } from './calendar.ts';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe('calendar periods in a time zone', () => {
  it('names the day, ISO week and month as the zone sees them, and ends each at the zone’s midnight', () => {
    // 23:59:59.999 in Shanghai (UTC+8) on Thursday 26 November 2026.
    const ms = at('2026-11-26T15:59:59.999Z');
    expect(periodAt('daily', ms, 'Asia/Shanghai')).toEqual({
      kind: 'daily',
      name: '2026-11-26',
      endsAtMs: at('2026-11-26T16:00:00Z'),
    });
    expect(periodAt('weekly', ms, 'Asia/Shanghai')).toMatchObject({
      name: '2026-W48',
      endsAtMs: at('2026-11-29T16:00:00Z'), // Monday 30 November, 00:00 in Shanghai
    });
    expect(periodAt('monthly', ms, 'Asia/Shanghai')).toMatchObject({
      name: '2026-11',
      endsAtMs: at('2026-11-30T16:00:00Z'),
    });
    // One millisecond later it is the next day there, but still the 26th in UTC.
    expect(periodName('daily', ms + 1, 'Asia/Shanghai')).toBe('2026-11-27');
    expect(periodName('daily', ms + 1, 'UTC')).toBe('2026-11-26');
  });

  it('starts weeks on Monday and numbers them in the ISO week-year across a new year', () => {
    expect(periodName('weekly', at('2026-11-29T12:00:00Z'), 'UTC')).toBe('2026-W48'); // Sunday
    expect(periodName('weekly', at('2026-11-30T00:00:00Z'), 'UTC')).toBe('2026-W49'); // Monday
    expect(periodName('weekly', at('2027-01-01T12:00:00Z'), 'UTC')).toBe('2026-W53'); // Friday of 2026's last week
    expect(periodName('weekly', at('2027-01-04T00:00:00Z'), 'UTC')).toBe('2027-W01');
    expect(periodName('weekly', at('2025-12-29T00:00:00Z'), 'UTC')).toBe('2026-W01'); // Monday before New Year
    expect(periodAt('weekly', at('2026-12-31T00:00:00Z'), 'UTC').endsAtMs).toBe(at('2027-01-04T00:00:00Z'));
  });

  it('ends a month on the first of the next, February and December included', () => {
    expect(periodAt('monthly', at('2028-02-29T23:00:00Z'), 'UTC')).toMatchObject({
      name: '2028-02',
      endsAtMs: at('2028-03-01T00:00:00Z'),
    });
    expect(periodAt('monthly', at('2026-12-15T00:00:00Z'), 'UTC').endsAtMs).toBe(at('2027-01-01T00:00:00Z'));
  });

  it('follows DST: a 23-hour and a 25-hour day in New York end at their local midnights', () => {
    // Sunday 8 March 2026: clocks go from 02:00 EST to 03:00 EDT.
    const spring = periodAt('daily', at('2026-03-08T05:00:00Z'), 'America/New_York');
    expect(spring.name).toBe('2026-03-08');
    expect(iso(spring.endsAtMs)).toBe('2026-03-09T04:00:00.000Z');
    expect(spring.endsAtMs - at('2026-03-08T05:00:00Z')).toBe(23 * 3_600_000);
    // Sunday 1 November 2026: clocks go from 02:00 EDT back to 01:00 EST.
    const autumn = periodAt('daily', at('2026-11-01T04:00:00Z'), 'America/New_York');
    expect(autumn.name).toBe('2026-11-01');
    expect(autumn.endsAtMs - at('2026-11-01T04:00:00Z')).toBe(25 * 3_600_000);
  });

  it('keys periods by kind, and knows which zone names exist', () => {
    expect(periodKey('daily', '2026-11-26')).toBe('d:2026-11-26');
    expect(periodKey('weekly', '2026-W48')).toBe('w:2026-W48');
    expect(periodKey('monthly', '2026-11')).toBe('m:2026-11');
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isTimeZone('')).toBe(false);
  });
});
