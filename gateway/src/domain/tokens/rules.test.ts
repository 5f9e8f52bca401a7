import { describe, expect, it } from 'vitest';
import { bareKey, generateKey } from './keys.ts';
import { effectiveTokenStatus, normalizeAllowIps, normalizeModelLimits } from './rules.ts';

describe('token rules', () => {
  it('generates 48 characters of [0-9a-zA-Z]', () => {
    const keys = Array.from({ length: 50 }, generateKey);
    for (const key of keys) expect(key).toMatch(/^[0-9a-zA-Z]{48}$/);
    expect(new Set(keys).size).toBe(50);
    // All 62 characters turn up (a biased or short alphabet would not).
    expect(new Set(keys.join('')).size).toBe(62);
  });

  it('reads a key as pasted: sk- and a channel pin are not part of it', () => {
    expect(bareKey('sk-abc')).toBe('abc');
    expect(bareKey(' abc ')).toBe('abc');
    expect(bareKey('sk-abc-12')).toBe('abc');
    expect(bareKey('sk-')).toBe('');
  });

  it('accepts IPv4/IPv6 addresses and CIDRs, one per line', () => {
    expect(normalizeAllowIps('1.2.3.4\n10.0.0.0/8, ::1\n\nfe80::/10 1.2.3.4')).toBe(
      '1.2.3.4\n10.0.0.0/8\n::1\nfe80::/10',
    );
    expect(normalizeAllowIps('')).toBe('');
    for (const bad of ['1.2.3', '1.2.3.4/', '1.2.3.4/33', '::1/129', '1.2.3.4/8/8', 'host.example', '10.0.0.0/-1']) {
      expect(() => normalizeAllowIps(bad), bad).toThrow(expect.objectContaining({ code: 'TOKEN_ALLOW_IP_INVALID' }));
    }
  });

  it('keeps model limits as a clean comma list', () => {
    expect(normalizeModelLimits('a, b,,a , c')).toBe('a,b,c');
  });

  it('shows expired (3) and exhausted (4) only for enabled tokens', () => {
    const base = { status: 1, expired_time: -1, remain_quota: 10, unlimited_quota: false };
    expect(effectiveTokenStatus(base, 100)).toBe(1);
    expect(effectiveTokenStatus({ ...base, expired_time: 100 }, 100)).toBe(3);
    expect(effectiveTokenStatus({ ...base, expired_time: 101 }, 100)).toBe(1);
    expect(effectiveTokenStatus({ ...base, remain_quota: 0 }, 100)).toBe(4);
    expect(effectiveTokenStatus({ ...base, remain_quota: 0, unlimited_quota: true }, 100)).toBe(1);
    expect(effectiveTokenStatus({ ...base, status: 2, expired_time: 1 }, 100)).toBe(2);
  });
});
