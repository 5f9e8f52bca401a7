import { describe, expect, it } from 'vitest';
import { MASK, SecretMask } from './secret-mask.ts';

const KEY = 'sk-live-4f9a2c7e1b8d3f6a0e5c9b2d7a1f4e8c';

describe('SecretMask', () => {
  const mask = new SecretMask([KEY]);

  it('masks the whole key and leaves the rest of the message', () => {
    expect(mask.mask(`Incorrect API key provided: ${KEY}. See docs.`)).toBe(
      `Incorrect API key provided: ${MASK}. See docs.`,
    );
  });

  it('masks every occurrence, and fragments of 8 characters or more', () => {
    const truncated = `${KEY.slice(0, 12)}...${KEY.slice(-10)}`;
    expect(mask.mask(`key ${truncated} and ${KEY}`)).toBe(`key ${MASK}...${MASK} and ${MASK}`);
    // 7 characters of the key are not a secret on their own.
    expect(mask.mask(`tail ${KEY.slice(-7)}`)).toBe(`tail ${KEY.slice(-7)}`);
  });

  it('masks URL-encoded and base64 forms, also inside a longer encoded value', () => {
    const special = new SecretMask(['p@ss/w+rd=secret&more']);
    expect(special.mask(`url ?key=${encodeURIComponent('p@ss/w+rd=secret&more')} end`)).toBe(`url ?key=${MASK} end`);
    for (const prefix of ['', 'u', 'us', 'user:']) {
      const basic = Buffer.from(`${prefix}${KEY}`).toString('base64');
      const out = mask.mask(`Authorization: Basic ${basic}`);
      expect(Buffer.from(out.slice('Authorization: Basic '.length), 'base64').toString()).not.toContain(
        KEY.slice(8, 24),
      );
      expect(out).toContain(MASK);
      const url = Buffer.from(`${prefix}${KEY}`).toString('base64url');
      expect(mask.mask(url)).toContain(MASK);
      expect(mask.mask(url).length).toBeLessThan(url.length / 2);
    }
  });

  it('masks strings inside JSON values, keys included, keeping the structure', () => {
    const body = { error: { message: `bad key ${KEY}`, details: [{ [KEY]: 1 }, 2, null] } };
    expect(mask.maskDeep(body)).toEqual({ error: { message: `bad key ${MASK}`, details: [{ [MASK]: 1 }, 2, null] } });
    expect(JSON.stringify(mask.maskDeep(body))).not.toContain(KEY.slice(10, 18));
  });

  it('ignores secrets shorter than 8 characters and leaves text without secrets untouched', () => {
    const short = new SecretMask(['abc', '1234567']);
    expect(short.empty).toBe(true);
    expect(short.mask('abc 1234567')).toBe('abc 1234567');
    expect(mask.mask('nothing to see here, just a long ordinary message')).toBe(
      'nothing to see here, just a long ordinary message',
    );
    expect(mask.mask('')).toBe('');
  });

  it('merges overlapping fragments into one mask', () => {
    expect(mask.mask(`${KEY}${KEY}`)).toBe(MASK);
    expect(mask.mask(`x${KEY}-${KEY}y`)).toBe(`x${MASK}-${MASK}y`);
  });

  it('is linear: a long text with many partial matches is masked quickly', () => {
    const text = `${KEY.slice(0, 7)} `.repeat(100_000);
    const started = performance.now();
    expect(mask.mask(text)).toBe(text);
    // Generous: a quadratic scan would take minutes here.
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
