import { describe, expect, it } from 'vitest';
import { isExpired, validateRedemption } from './form.ts';

describe('redemption checks (spec doc 2 §5)', () => {
  const valid = { name: 'promo', quota: '100000', count: '1', expiry: '' };
  it('wants a 1-20 character name, a positive integer quota and 1-100 codes', () => {
    expect(validateRedemption(valid, true)).toBeUndefined();
    expect(validateRedemption({ ...valid, name: '' }, true)).toBeUndefined();
    expect(validateRedemption({ ...valid, name: '' }, false)).toBe('redemption.validation.name_length');
    expect(validateRedemption({ ...valid, name: 'x'.repeat(21) }, true)).toBe('redemption.validation.name_length');
    expect(validateRedemption({ ...valid, quota: '0' }, true)).toBe('redemption.validation.quota_positive');
    expect(validateRedemption({ ...valid, quota: '1.5' }, true)).toBe('redemption.validation.quota_positive');
    expect(validateRedemption({ ...valid, count: '0' }, true)).toBe('redemption.validation.count_range');
    expect(validateRedemption({ ...valid, count: '101' }, true)).toBe('redemption.validation.count_range');
    expect(validateRedemption({ ...valid, count: '101' }, false)).toBeUndefined();
  });
  it('refuses an expiry in the past', () => {
    expect(validateRedemption({ ...valid, expiry: '2000-01-01T00:00' }, true)).toBe(
      'redemption.validation.expiry_past',
    );
    expect(validateRedemption({ ...valid, expiry: '2999-01-01T00:00' }, true)).toBeUndefined();
  });
  it('shows unused codes past their expiry as expired', () => {
    expect(isExpired({ status: 1, expired_time: 10 }, 20)).toBe(true);
    expect(isExpired({ status: 1, expired_time: 0 }, 20)).toBe(false);
    expect(isExpired({ status: 3, expired_time: 10 }, 20)).toBe(false);
  });
});
