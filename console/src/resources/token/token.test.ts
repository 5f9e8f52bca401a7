import { describe, expect, it } from 'vitest';
import { expiryOf, tokenBody, validateToken } from './token.ts';

describe('token form rules (spec doc 2 §5 "Token")', () => {
  const valid = { name: 'ci', remain_quota: 500_000, expired_time: -1, count: 1 };

  it('accepts a valid token', () => {
    expect(validateToken(valid, true)).toEqual({});
  });

  it('says what is wrong with each field', () => {
    expect(validateToken({ ...valid, name: '  ' }, true)).toEqual({ name: 'token.validation.name_required' });
    expect(validateToken({ ...valid, name: '' }, false)).toEqual({});
    expect(validateToken({ ...valid, remain_quota: -1 }, true)).toEqual({
      remain_quota: 'token.validation.quota_invalid',
    });
    expect(validateToken({ ...valid, remain_quota: 1.5 }, true)).toEqual({
      remain_quota: 'token.validation.quota_invalid',
    });
    expect(validateToken({ ...valid, remain_quota: -1, unlimited_quota: true }, true)).toEqual({});
    for (const count of [0, 101, 2.5]) {
      expect(validateToken({ ...valid, count }, true)).toEqual({ count: 'token.validation.count_invalid' });
    }
    expect(validateToken({ ...valid, expired_time: 'next week' }, true)).toEqual({
      expired_time: 'token.validation.expiry_invalid',
    });
  });

  it('turns the expiry text into Unix seconds, empty or -1 into never', () => {
    expect(expiryOf('')).toBe(-1);
    expect(expiryOf('-1')).toBe(-1);
    expect(expiryOf(1_700_000_000)).toBe(1_700_000_000);
    expect(expiryOf('2030-01-02 03:04:05')).toBe(Math.floor(new Date(2030, 0, 2, 3, 4, 5).getTime() / 1000));
    expect(expiryOf('2030-13-01')).toBeUndefined();
  });

  it('sends only the token fields, the quota as an integer', () => {
    const body = tokenBody({ ...valid, remain_quota: '1000', count: 3, group: 'vip' });
    expect(body).toEqual({
      name: 'ci',
      remain_quota: 1000,
      unlimited_quota: false,
      expired_time: -1,
      model_limits_enabled: false,
      model_limits: '',
      allow_ips: '',
      group: 'vip',
      cross_group_retry: false,
      rate_limits: {},
    });
    // Cross-group retry only means something for the auto group.
    expect(tokenBody({ ...valid, group: 'vip', cross_group_retry: true }).cross_group_retry).toBe(false);
    expect(tokenBody({ ...valid, group: 'auto', cross_group_retry: true }).cross_group_retry).toBe(true);
  });

  it('sends the rate limit rows as limits, and refuses rows that are not whole numbers', () => {
    const rows = [{ model: '*', rpm: '60', tpm: '' }];
    expect(tokenBody({ ...valid, rate_limit_rows: rows }).rate_limits).toEqual({ '*': { rpm: 60 } });
    // Not shown yet: the limits as loaded.
    expect(tokenBody({ ...valid, rate_limits: { o1: { tpm: 5 } } }).rate_limits).toEqual({ o1: { tpm: 5 } });
    expect(validateToken({ ...valid, rate_limit_rows: [{ model: '*', rpm: 'x', tpm: '' }] }, false)).toEqual({
      rate_limit_rows: 'rate_limits.validation.whole_number',
    });
  });
});
