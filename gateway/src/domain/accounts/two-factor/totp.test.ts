import { describe, expect, it } from 'vitest';
import { looksLikeBackupCode, newBackupCodes, normalizeBackupCode } from './backup-codes.ts';
import { base32Decode, base32Encode, hotp, matchingStep, newSecret, otpauthUrl, stepAt, totpAt } from './totp.ts';

// RFC 6238 appendix B: the SHA-1 seed is the ASCII text "12345678901234567890", codes of 8 digits.
const RFC_SEED = base32Encode(Buffer.from('12345678901234567890', 'ascii'));
const RFC_VECTORS: [number, string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

describe('TOTP (RFC 6238, SHA-1)', () => {
  it.each(RFC_VECTORS)('at %i seconds the code is %s', (time, code) => {
    expect(totpAt(RFC_SEED, time, 8)).toBe(code);
  });

  it('six-digit codes are the last six digits of the RFC vectors', () => {
    for (const [time, code] of RFC_VECTORS) expect(totpAt(RFC_SEED, time)).toBe(code.slice(2));
  });

  it('HOTP matches RFC 4226 appendix D', () => {
    const key = Buffer.from('12345678901234567890', 'ascii');
    expect([0, 1, 2, 9].map((c) => hotp(key, c))).toEqual(['755224', '287082', '359152', '520489']);
  });

  it('base32 round-trips and matches RFC 4648', () => {
    expect(base32Encode(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
    expect(base32Decode('MZXW6YTBOI======').toString()).toBe('foobar');
    const secret = newSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Encode(base32Decode(secret))).toBe(secret);
    expect(() => base32Decode('not base32!')).toThrow();
  });

  it('accepts one step either side of now, and names the step', () => {
    const secret = newSecret();
    const now = 1_800_000_000;
    const step = stepAt(now);
    expect(matchingStep(secret, totpAt(secret, now), now)).toBe(step);
    expect(matchingStep(secret, totpAt(secret, now - 30), now)).toBe(step - 1);
    expect(matchingStep(secret, totpAt(secret, now + 30), now)).toBe(step + 1);
    const far = totpAt(secret, now - 90);
    // A code two steps away is refused (unless it happens to equal a code inside the window).
    const inWindow = [-30, 0, 30].map((d) => totpAt(secret, now + d));
    if (!inWindow.includes(far)) expect(matchingStep(secret, far, now)).toBeUndefined();
    expect(matchingStep(secret, '12345', now)).toBeUndefined();
    expect(matchingStep(secret, 'abcdef', now)).toBeUndefined();
  });

  it('builds the otpauth URL authenticator apps read', () => {
    const text = otpauthUrl('Tollgate', 'alice', 'JBSWY3DPEHPK3PXP');
    expect(text.startsWith('otpauth://totp/Tollgate%3Aalice?')).toBe(true);
    const url = new URL(text);
    expect(url.searchParams.get('secret')).toBe('JBSWY3DPEHPK3PXP');
    expect(url.searchParams.get('issuer')).toBe('Tollgate');
  });
});

describe('backup codes', () => {
  it('makes ten distinct codes of 8 characters', () => {
    const codes = newBackupCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[A-Z2-9]{8}$/);
  });

  it('ignores case, spaces and dashes as typed', () => {
    expect(normalizeBackupCode(' abcd-efgh ')).toBe('ABCDEFGH');
    expect(looksLikeBackupCode('abcd efgh')).toBe(true);
    expect(looksLikeBackupCode('123456')).toBe(false);
  });
});
