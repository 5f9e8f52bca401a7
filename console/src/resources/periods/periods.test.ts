import { describe, expect, it } from 'vitest';
import { invalidPeriodLimits, periodLimitBody, periodLimitValues } from './periods.ts';

describe('period limit fields', () => {
  it('reads limits as form text and writes them back as integers, empty meaning none', () => {
    const values = periodLimitValues({ daily_quota_limit: 500_000, weekly_request_limit: 7 });
    expect(values).toEqual({
      daily_quota_limit: '500000',
      daily_request_limit: '0',
      weekly_quota_limit: '0',
      weekly_request_limit: '7',
      monthly_quota_limit: '0',
      monthly_request_limit: '0',
    });
    expect(periodLimitBody({ ...values, monthly_quota_limit: ' 12 ', daily_request_limit: '' })).toEqual({
      daily_quota_limit: 500_000,
      daily_request_limit: 0,
      weekly_quota_limit: 0,
      weekly_request_limit: 7,
      monthly_quota_limit: 12,
      monthly_request_limit: 0,
    });
  });

  it('names the fields that are not whole numbers of at least 0', () => {
    expect(
      invalidPeriodLimits({ daily_quota_limit: '-1', weekly_request_limit: '1.5', monthly_quota_limit: '' }),
    ).toEqual(['daily_quota_limit', 'weekly_request_limit']);
    expect(invalidPeriodLimits({ daily_quota_limit: 3 })).toEqual([]);
  });
});
