import { describe, expect, it } from 'vitest';
import { assertFuture, parseExpiry } from './expiry.ts';

describe('parseExpiry', () => {
  it('reads Unix seconds, digits, local yyyy-MM-dd HH:mm:ss and the never marker', () => {
    expect(parseExpiry(1_900_000_000, -1)).toBe(1_900_000_000);
    expect(parseExpiry('1900000000', -1)).toBe(1_900_000_000);
    expect(parseExpiry(-1, -1)).toBe(-1);
    expect(parseExpiry(' -1 ', -1)).toBe(-1);
    expect(parseExpiry(0, 0)).toBe(0);
    expect(parseExpiry('2099-12-31 23:59:58', -1)).toBe(new Date(2099, 11, 31, 23, 59, 58).getTime() / 1000);
  });

  it.each([
    ['text', 'tomorrow'],
    ['a date alone', '2099-12-31'],
    ['February 30th', '2099-02-30 00:00:00'],
    ['hour 24', '2099-01-01 24:00:00'],
    ['zero for tokens', 0],
    ['-1 for codes', -1],
    ['milliseconds', 1_900_000_000_000],
    ['a fraction', 1_900_000_000.5],
    ['a boolean', true],
    ['null', null],
  ])('refuses %s', (_case, input) => {
    const never = _case === '-1 for codes' ? 0 : -1;
    expect(() => parseExpiry(input, never)).toThrow(expect.objectContaining({ code: 'EXPIRY_INVALID' }));
  });

  it('refuses a passed time but never "never"', () => {
    expect(() => assertFuture(100, -1, 200)).toThrow(expect.objectContaining({ code: 'EXPIRY_IN_PAST' }));
    expect(() => assertFuture(200, -1, 200)).toThrow(expect.objectContaining({ code: 'EXPIRY_IN_PAST' }));
    expect(() => assertFuture(-1, -1, 200)).not.toThrow();
    expect(() => assertFuture(201, -1, 200)).not.toThrow();
  });
});
