import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.ts';
import { checkChannelKeys } from './key-check.ts';

const problem = (type: number, keys: string[]): [string, string] | undefined => {
  try {
    checkChannelKeys(type, keys);
    return undefined;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return [error.code, error.localized('en')];
  }
};

describe('composite channel keys', () => {
  it('takes Baidu keys of two non-empty parts', () => {
    expect(problem(15, ['ak|sk', 'ak2|sk2'])).toBeUndefined();
  });

  it('refuses a missing separator, an empty part or too many parts, naming the key but never its text', () => {
    expect(problem(15, ['ak|sk', 'secret-only'])).toEqual([
      'CHANNEL_KEY_INVALID',
      'Key 2 of the type 15 (Baidu) channel is not valid: no "|" in it, expected APIKey|SecretKey',
    ]);
    expect(problem(15, ['ak|'])?.[1]).toContain('an empty part');
    expect(problem(15, ['a|b|c'])?.[1]).toContain('3 parts');
    expect(String(problem(15, ['secret-only']))).not.toContain('secret-only');
  });

  it('leaves single keys alone', () => {
    expect(problem(1, ['sk-anything|with|bars'])).toBeUndefined();
    expect(problem(16, ['id.secret'])).toBeUndefined();
  });
});
