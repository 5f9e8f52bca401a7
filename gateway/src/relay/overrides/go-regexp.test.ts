import { describe, expect, it } from 'vitest';
import { compileGoRegExp, REGEX_INPUT_LIMIT, replaceBounded, testBounded } from './go-regexp.ts';

describe('admin regular expressions on user text', () => {
  it('match texts up to REGEX_INPUT_LIMIT and never run on a longer one', () => {
    // Exponential on a run of a's without b: run on the megabyte, this would not end.
    const backtracking = compileGoRegExp('^(a|aa)*b$');
    expect(testBounded(backtracking, 'a'.repeat(1_000_000))).toBe(false);
    expect(testBounded(backtracking, 'aab')).toBe(true);
    const any = compileGoRegExp('(?i)^A+$');
    expect(testBounded(any, 'a'.repeat(REGEX_INPUT_LIMIT))).toBe(true);
    expect(testBounded(any, 'a'.repeat(REGEX_INPUT_LIMIT + 1))).toBe(false);
    const long = 'a'.repeat(1_000_000);
    expect(replaceBounded(long, backtracking, 'x')).toBe(long);
    expect(replaceBounded('ab', compileGoRegExp('b', 'g'), 'c')).toBe('ac');
  });
});
