import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.ts';
import { assertJsonDepth, MAX_JSON_DEPTH } from './json-depth.ts';

const bytes = (text: string) => Buffer.from(text);
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const refusal = (text: string, limit?: number) => {
  try {
    assertJsonDepth(bytes(text), limit);
    return undefined;
  } catch (error) {
    return error;
  }
};

describe('assertJsonDepth', () => {
  it('takes nesting up to the limit and refuses one level more with body_too_deep', () => {
    expect(refusal(nested(MAX_JSON_DEPTH))).toBeUndefined();
    const refused = refusal(nested(MAX_JSON_DEPTH + 1));
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('body_too_deep');
    expect((refused as AppError).status).toBe(400);
    expect(refusal(`{"a":{"b":[{"c":${nested(3)}}]}}`, 7)).toBeUndefined();
    expect(refusal(`{"a":{"b":[{"c":${nested(3)}}]}}`, 6)).toBeInstanceOf(AppError);
  });

  it('counts depth, not brackets: siblings do not add up', () => {
    expect(refusal(`[${Array.from({ length: 10_000 }, () => '[{}]').join(',')}]`, 3)).toBeUndefined();
  });

  it('skips brackets inside strings, escaped quotes and backslashes included', () => {
    expect(refusal(`{"a":"${'[{'.repeat(500)}"}`, 2)).toBeUndefined();
    expect(refusal(String.raw`{"a":"\"[[[[","b":"\\","c":[1]}`, 2)).toBeUndefined();
    // After an escaped backslash the quote closes the string: the brackets after it count.
    expect(refusal(String.raw`{"a":"\\",  "b":[[[1]]]}`, 3)).toBeInstanceOf(AppError);
  });

  it('reads a 5,000-deep body and a large string body in linear time', () => {
    expect(refusal(nested(5000))).toBeInstanceOf(AppError);
    expect(refusal(`{"image":"${'QUJD'.repeat(2_000_000)}"}`)).toBeUndefined();
  });
});
