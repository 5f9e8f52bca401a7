import { describe, expect, it } from 'vitest';
import { sparkErrorStatus } from './errors.ts';

describe('Spark error statuses', () => {
  it.each([
    [10013, 400],
    [10907, 400],
    [10163, 400],
    [11200, 403],
    [11201, 429],
    [11203, 429],
    [10313, 403],
    [20001, 502],
  ])('%i → %i', (code, status) => {
    expect(sparkErrorStatus(code)).toBe(status);
  });
});
