import { describe, expect, it } from 'vitest';
import { RelayRuleError } from './errors.ts';
import { resolveModelMapping } from './model-mapping.ts';

describe('resolveModelMapping', () => {
  it('keeps the model without a mapping or without an entry for it', () => {
    expect(resolveModelMapping('gpt-4o', undefined)).toEqual({ ok: true, upstreamModel: 'gpt-4o', mapped: false });
    expect(resolveModelMapping('gpt-4o', { 'gpt-4': 'gpt-4-0613' })).toEqual({
      ok: true,
      upstreamModel: 'gpt-4o',
      mapped: false,
    });
  });

  it('maps one step', () => {
    expect(resolveModelMapping('gpt-4o', { 'gpt-4o': 'gpt-4o-2024-08-06' })).toEqual({
      ok: true,
      upstreamModel: 'gpt-4o-2024-08-06',
      mapped: true,
    });
  });

  it('follows chains to their end', () => {
    const mapping = { a: 'b', b: 'c', c: 'd' };
    expect(resolveModelMapping('a', mapping)).toEqual({ ok: true, upstreamModel: 'd', mapped: true });
    expect(resolveModelMapping('c', mapping)).toEqual({ ok: true, upstreamModel: 'd', mapped: true });
  });

  it('treats a self-mapping as the end of the chain, not a cycle', () => {
    expect(resolveModelMapping('a', { a: 'a' })).toEqual({ ok: true, upstreamModel: 'a', mapped: false });
    expect(resolveModelMapping('a', { a: 'b', b: 'b' })).toEqual({ ok: true, upstreamModel: 'b', mapped: true });
  });

  it('refuses cycles with a stable, skip-retry channel error', () => {
    for (const [model, mapping] of [
      ['a', { a: 'b', b: 'a' }],
      ['a', { a: 'b', b: 'c', c: 'b' }],
    ] as const) {
      const result = resolveModelMapping(model, mapping);
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.error).toBeInstanceOf(RelayRuleError);
      expect(result.error.code).toBe('channel:model_mapped_error');
      expect(result.error.skipRetry).toBe(true);
      expect(result.error.message).toContain('a -> b');
    }
  });

  it('ignores empty and non-string targets and inherited names', () => {
    expect(resolveModelMapping('a', { a: '' })).toMatchObject({ upstreamModel: 'a', mapped: false });
    expect(resolveModelMapping('a', { a: 42 })).toMatchObject({ upstreamModel: 'a', mapped: false });
    expect(resolveModelMapping('constructor', { a: 'b' })).toMatchObject({ upstreamModel: 'constructor' });
  });

  it('resolves once per mapping object and model', () => {
    const mapping = { a: 'b' };
    expect(resolveModelMapping('a', mapping)).toBe(resolveModelMapping('a', mapping));
    // A reloaded channel brings a new mapping object, hence a fresh resolution.
    expect(resolveModelMapping('a', { a: 'c' })).toMatchObject({ upstreamModel: 'c' });
  });
});
