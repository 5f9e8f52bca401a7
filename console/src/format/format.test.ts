import { describe, expect, it } from 'vitest';
import { formatCompact } from './number.ts';
import { amountToQuota, formatQuota, quotaToAmount } from './quota.ts';

describe('formatCompact (spec doc 1 §1)', () => {
  it('leaves numbers below 10,000 as they are', () => {
    expect(formatCompact(0)).toBe('0');
    expect(formatCompact(9999)).toBe('9999');
    expect(formatCompact(12.345)).toBe('12.35');
  });
  it('uses k from 10,000, M from 1,000,000 and B from 1,000,000,000', () => {
    expect(formatCompact(10_000)).toBe('10k');
    expect(formatCompact(12_345)).toBe('12.3k');
    expect(formatCompact(999_999)).toBe('1000k');
    expect(formatCompact(1_000_000)).toBe('1M');
    expect(formatCompact(2_560_000)).toBe('2.6M');
    expect(formatCompact(1_000_000_000)).toBe('1B');
    expect(formatCompact(-25_000)).toBe('-25k');
  });
});

describe('formatQuota', () => {
  const usd = { quota_per_unit: 500_000, display_in_currency: true, quota_display_type: 'USD' };
  it('shows dollars with 2 decimals by default', () => {
    expect(formatQuota(500_000, usd)).toBe('$1.00');
    expect(formatQuota(1_234_567, usd)).toBe('$2.47');
    expect(formatQuota(0, usd)).toBe('$0.00');
    expect(formatQuota(-500_000, usd)).toBe('-$1.00');
    expect(formatQuota(500_000, usd, 6)).toBe('$1.000000');
  });
  it('never shows a positive amount as zero', () => {
    expect(formatQuota(1, usd)).toBe('$0.01');
  });
  it('converts to yuan and to a custom currency', () => {
    expect(formatQuota(500_000, { ...usd, quota_display_type: 'CNY', usd_exchange_rate: 7.3 })).toBe('¥7.30');
    expect(
      formatQuota(500_000, {
        ...usd,
        quota_display_type: 'CUSTOM',
        custom_currency_symbol: '€',
        custom_currency_exchange_rate: 0.9,
      }),
    ).toBe('€0.90');
  });
  it('shows raw units when currency display is off or the type is TOKENS', () => {
    expect(formatQuota(123_456, { ...usd, display_in_currency: false })).toBe('123.5k');
    expect(formatQuota(500, { ...usd, quota_display_type: 'TOKENS' })).toBe('500');
  });
  it('converts amounts back to quota for inputs', () => {
    expect(amountToQuota(1, usd)).toBe(500_000);
    expect(amountToQuota(7.3, { ...usd, quota_display_type: 'CNY', usd_exchange_rate: 7.3 })).toBe(500_000);
    expect(amountToQuota(42, { ...usd, display_in_currency: false })).toBe(42);
    expect(quotaToAmount(250_000, usd)).toBe(0.5);
  });
});
