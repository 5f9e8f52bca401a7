import { describe, expect, it } from 'vitest';
import { inputProblem, MAX_BODY_DEPTH } from './input-guard.ts';

describe('inputProblem', () => {
  it('finds NUL bytes and lone surrogates in values and keys, at any depth', () => {
    expect(inputProblem({ a: ['x', { b: 'a\u0000b' }] }, MAX_BODY_DEPTH)).toBe('malformed_text');
    expect(inputProblem({ a: 'x\ud800' }, MAX_BODY_DEPTH)).toBe('malformed_text');
    expect(inputProblem({ a: '\udc00x' }, MAX_BODY_DEPTH)).toBe('malformed_text');
    expect(inputProblem({ 'k\u0000': 1 }, MAX_BODY_DEPTH)).toBe('malformed_text');
    expect(inputProblem('\u0000', MAX_BODY_DEPTH)).toBe('malformed_text');
  });

  it('accepts well-formed text, surrogate pairs (emoji) included, and non-text values', () => {
    expect(
      inputProblem({ a: 'ok 😀 中文', n: 1e308, b: true, z: null, list: [1, 'x'] }, MAX_BODY_DEPTH),
    ).toBeUndefined();
    expect(inputProblem(undefined, MAX_BODY_DEPTH)).toBeUndefined();
  });

  it('counts nesting levels of objects and arrays, without recursion', () => {
    const nested = (depth: number) => {
      let value: unknown = 1;
      for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
      return value;
    };
    expect(inputProblem(nested(MAX_BODY_DEPTH), MAX_BODY_DEPTH)).toBeUndefined();
    expect(inputProblem(nested(MAX_BODY_DEPTH + 1), MAX_BODY_DEPTH)).toBe('nested_too_deep');
    expect(inputProblem(nested(100_000), MAX_BODY_DEPTH)).toBe('nested_too_deep');
  });
});
