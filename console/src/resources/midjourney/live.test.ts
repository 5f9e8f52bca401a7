import { describe, expect, it } from 'vitest';
import { isFinished, LIVE_REFRESH_MS, liveQueryOptions } from './live.ts';

const interval = (statuses: string[]) =>
  liveQueryOptions.refetchInterval({ state: { data: { data: statuses.map((status) => ({ status })) } } });

describe('live task lists', () => {
  it('refresh while any visible task is unfinished', () => {
    expect(interval(['SUCCESS', 'IN_PROGRESS'])).toBe(LIVE_REFRESH_MS);
    expect(interval(['NOT_START'])).toBe(LIVE_REFRESH_MS);
    // A creative task still being submitted has an empty status.
    expect(interval([''])).toBe(LIVE_REFRESH_MS);
  });

  it('stop once every visible task is finished, or before any page arrived', () => {
    expect(interval(['SUCCESS', 'FAILURE'])).toBe(false);
    expect(interval([])).toBe(false);
    expect(liveQueryOptions.refetchInterval({ state: {} })).toBe(false);
  });

  it('count only SUCCESS and FAILURE as finished', () => {
    expect(['SUCCESS', 'FAILURE', 'MODAL', 'UNKNOWN', ''].map(isFinished)).toEqual([true, true, false, false, false]);
  });
});
