import { describe, expect, it } from 'vitest';
import { checkRateLimits, limitFor, rateLimitsToStore, readRateLimits } from './rate-limits.ts';

describe('rate limits as declared', () => {
  it('keeps rpm and tpm per model, dropping zeros and empty entries', () => {
    expect(checkRateLimits({ '*': { rpm: 10, tpm: 0 }, ' gpt-4o ': { tpm: 500 }, o1: {} })).toEqual({
      ok: true,
      limits: { '*': { rpm: 10 }, 'gpt-4o': { tpm: 500 } },
    });
    expect(checkRateLimits(undefined)).toEqual({ ok: true, limits: {} });
    expect(checkRateLimits(null)).toEqual({ ok: true, limits: {} });
  });

  it('refuses anything else with a message that points at the bad spot', () => {
    const message = (value: unknown) => {
      const checked = checkRateLimits(value);
      return checked.ok ? undefined : checked.message.en;
    };
    expect(message([])).toMatch(/must be an object/);
    expect(message({ '*': 5 })).toBe('rate_limits["*"] must be an object { rpm, tpm }');
    expect(message({ '*': { rpn: 5 } })).toBe('rate_limits["*"]: unknown field rpn (rpm or tpm only)');
    expect(message({ '*': { rpm: -1 } })).toBe('rate_limits["*"].rpm must be a whole number ≥ 0');
    expect(message({ '*': { tpm: 1.5 } })).toBe('rate_limits["*"].tpm must be a whole number ≥ 0');
    expect(message({ ' ': { tpm: 1 } })).toMatch(/model name must be non-empty/);
    expect(() => rateLimitsToStore({ '*': { rpm: '5' } })).toThrow(
      expect.objectContaining({ code: 'RATE_LIMITS_INVALID' }),
    );
  });

  it('stores normalised JSON and reads unreadable text as no limit', () => {
    expect(rateLimitsToStore({ '*': { rpm: 3, tpm: 0 } })).toBe('{"*":{"rpm":3}}');
    expect(readRateLimits('{"*":{"rpm":3}}')).toEqual({ '*': { rpm: 3 } });
    expect(readRateLimits('not json')).toEqual({});
    expect(readRateLimits('')).toEqual({});
  });

  it('takes a model its own entry, field by field, else "*"', () => {
    const limits = { '*': { rpm: 10, tpm: 1000 }, 'gpt-4o': { tpm: 200 } };
    expect(limitFor(limits, 'gpt-4o', 'tpm')).toEqual({ limit: 200, rule: 'gpt-4o' });
    expect(limitFor(limits, 'gpt-4o', 'rpm')).toEqual({ limit: 10, rule: '*' });
    expect(limitFor(limits, 'o1', 'tpm')).toEqual({ limit: 1000, rule: '*' });
    expect(limitFor({ 'gpt-4o': { rpm: 1 } }, 'o1', 'rpm')).toBeUndefined();
  });
});
