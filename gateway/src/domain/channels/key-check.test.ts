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

describe('Baidu keys when a channel is saved', () => {
  it('takes APIKey|SecretKey', () => {
    expect(problem(15, ['ak|sk', 'ak2|sk2'])).toBeUndefined();
  });

  it('refuses a missing secret, an empty part or an extra part, naming the key but never its text', () => {
    expect(problem(15, ['ak|sk', 'secret-only'])).toEqual([
      'CHANNEL_KEY_INVALID',
      'Key 2 of the type 15 (Baidu) channel is not valid: it must be APIKey|SecretKey',
    ]);
    expect(problem(15, ['ak|'])?.[0]).toBe('CHANNEL_KEY_INVALID');
    expect(problem(15, ['a|b|c'])?.[0]).toBe('CHANNEL_KEY_INVALID');
    expect(String(problem(15, ['secret-only']))).not.toContain('secret-only');
  });

  it('leaves Zhipu and Ollama keys to their protocols', () => {
    expect(problem(16, ['id.secret'])).toBeUndefined();
    expect(problem(4, ['any-proxy-key'])).toBeUndefined();
  });
});
