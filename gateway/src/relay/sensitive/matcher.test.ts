import { describe, expect, it } from 'vitest';
import { complete, SCAN_SLICE, type Scan, WordMatcher } from './matcher.ts';

describe('WordMatcher', () => {
  it('finds nothing and changes nothing with an empty list or only blank lines', () => {
    for (const words of [[], ['', '  ', '\r']]) {
      const matcher = WordMatcher.of(words);
      expect(matcher.empty).toBe(true);
      expect(matcher.find('anything at all')).toEqual([]);
      expect(matcher.mask('anything at all')).toBe('anything at all');
    }
  });

  it('ignores case, in the text and in the list, and names a word as it is listed', () => {
    const matcher = WordMatcher.of(['Secret', 'BOMB']);
    expect(matcher.find('a SECRET about a bomb')).toEqual(['Secret', 'BOMB']);
    expect(matcher.mask('a SECRET about a bomb')).toBe('a ****** about a ****');
    expect(WordMatcher.of(['ärger', 'ΣΟΦΙΑ']).find('ÄRGER und σοφια')).toEqual(['ärger', 'ΣΟΦΙΑ']);
  });

  it('finds words that overlap, and stars their union', () => {
    const matcher = WordMatcher.of(['abcd', 'cdef']);
    expect(matcher.find('xxabcdefxx')).toEqual(['abcd', 'cdef']);
    expect(matcher.mask('xxabcdefxx')).toBe('xx******xx');
  });

  it('finds a word that is a prefix or a suffix of another, and inside it', () => {
    const matcher = WordMatcher.of(['he', 'hers', 'she', 'his']);
    expect(matcher.find('ushers').sort()).toEqual(['he', 'hers', 'she']);
    expect(matcher.mask('ushers')).toBe('u*****');
    // Only the shorter word here: the longer one is not complete.
    expect(matcher.find('hex')).toEqual(['he']);
    expect(matcher.mask('the hex')).toBe('t** **x');
  });

  it('finds a word after a partial match of another that fails', () => {
    const matcher = WordMatcher.of(['abcx', 'bcd']);
    expect(matcher.find('abcd')).toEqual(['bcd']);
    expect(matcher.mask('abcd')).toBe('a***');
  });

  it('finds CJK words, stars each character once, and a surrogate pair once', () => {
    const matcher = WordMatcher.of(['敏感词', '🙂x']);
    expect(matcher.find('这里有敏感词吗')).toEqual(['敏感词']);
    expect(matcher.mask('这里有敏感词吗')).toBe('这里有***吗');
    expect(matcher.mask('a🙂xb')).toBe('a**b');
  });

  it('reports each word once however often it occurs, and stars every occurrence', () => {
    const matcher = WordMatcher.of(['aa', 'a']);
    expect(matcher.find('aaaa')).toEqual(['a', 'aa']);
    expect(matcher.mask('baaab')).toBe('b***b');
    expect(WordMatcher.of(['x']).mask('x x x')).toBe('* * *');
  });

  it('treats duplicate words (but for case) and padded lines as one word', () => {
    const matcher = WordMatcher.of([' word ', 'WORD', 'word']);
    expect(matcher.find('a Word')).toEqual(['word']);
  });

  it('leaves a text without any word as the same string', () => {
    const text = 'nothing to see here';
    expect(WordMatcher.of(['secret']).mask(text)).toBe(text);
  });

  it('scans a large text with a large list in one pass', () => {
    const words = Array.from({ length: 5000 }, (_, i) => `word${i}x`);
    const matcher = WordMatcher.of(words);
    const text = `${'wor'.repeat(200_000)}word4999x${'w'.repeat(100_000)}`;
    expect(matcher.find(text)).toEqual(['word4999x']);
    expect(matcher.mask(text)).toBe(`${'wor'.repeat(200_000)}*********${'w'.repeat(100_000)}`);
  });

  it('scans in slices: pauses once per SCAN_SLICE units, with the same result as one pass', () => {
    const matcher = WordMatcher.of(['needle', 'edle x']);
    const text = `${'a'.repeat(SCAN_SLICE - 3)}needle x${'b'.repeat(2 * SCAN_SLICE)}`;
    const pauses = <T>(scan: Scan<T>) => {
      let count = 0;
      for (let step = scan.next(); !step.done; step = scan.next()) count++;
      return count;
    };
    expect(pauses(matcher.findScan(text))).toBe(Math.ceil(text.length / SCAN_SLICE) - 1);
    expect(complete(matcher.findScan(text))).toEqual(matcher.find(text));
    expect(matcher.find(text)).toEqual(['needle', 'edle x']);
    expect(complete(matcher.maskScan(text))).toBe(`${'a'.repeat(SCAN_SLICE - 3)}********${'b'.repeat(2 * SCAN_SLICE)}`);
    expect(pauses(matcher.findScan('short needle'))).toBe(0);
  });
});
