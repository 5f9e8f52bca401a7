import { describe, expect, it } from 'vitest';
import { groupColumns } from '../groups/managed.ts';
import { priceColumns } from './managed.ts';

describe('priceColumns', () => {
  it('turns USD per 1M tokens into new-api ratios (ratio 1 = $2 per 1M input tokens)', () => {
    expect(
      priceColumns({ model: 'gpt-4o', perToken: { input: 2.5, output: 10, cacheRead: 1.25, cacheWrite: 3.125 } }),
    ).toEqual({
      ok: true,
      columns: {
        quota_type: 0,
        model_price: null,
        model_ratio: 1.25,
        completion_ratio: 4,
        cache_ratio: 0.5,
        cache_creation_ratio: 1.25,
        billing_expr: null,
      },
    });
  });

  it('leaves ratios the spec does not price to the gateway defaults, and rounds float noise', () => {
    expect(priceColumns({ model: 'm', perToken: { input: 0.15, output: 0.6 } })).toMatchObject({
      columns: { model_ratio: 0.075, completion_ratio: 4, cache_ratio: null, cache_creation_ratio: null },
    });
  });

  it('stores a per-call price as the model price', () => {
    expect(priceColumns({ model: 'mj', perCall: { price: 0.04 } })).toEqual({
      ok: true,
      columns: {
        quota_type: 1,
        model_price: 0.04,
        model_ratio: null,
        completion_ratio: null,
        cache_ratio: null,
        cache_creation_ratio: null,
        billing_expr: null,
      },
    });
  });

  it('stores a tiered price as the expression alone, refusing one that does not compile', () => {
    const expression = 'len <= 200000 ? tier("standard", p * 3 + c * 15) : tier("long", p * 6 + c * 22.5)';
    expect(priceColumns({ model: 'claude', tiered: { expression } })).toEqual({
      ok: true,
      columns: {
        quota_type: 0,
        model_price: null,
        model_ratio: null,
        completion_ratio: null,
        cache_ratio: null,
        cache_creation_ratio: null,
        billing_expr: expression,
      },
    });
    expect(priceColumns({ model: 'claude', tiered: { expression: 'p * 3 + q' } })).toEqual({
      ok: false,
      code: 'MODEL_PRICE_INVALID',
      message: 'tiered.expression is invalid at position 9: unknown name "q"',
    });
    expect(priceColumns({ model: 'm', tiered: { expression: 'p' }, perCall: { price: 1 } })).toMatchObject({
      ok: false,
      message: 'exactly one of perToken, perCall and tiered must be set',
    });
  });

  it('refuses what the ratios cannot express', () => {
    expect(priceColumns({ model: 'm' })).toMatchObject({ ok: false, code: 'MODEL_PRICE_INVALID' });
    expect(priceColumns({ model: 'm', perCall: { price: 1 }, perToken: { input: 1 } })).toMatchObject({ ok: false });
    expect(priceColumns({ model: ' ', perCall: { price: 1 } })).toMatchObject({ ok: false });
    expect(priceColumns({ model: 'm', perToken: { input: -1 } })).toMatchObject({ ok: false });
    expect(priceColumns({ model: 'm', perToken: { input: 0, output: 1 } })).toMatchObject({
      ok: false,
      message: 'perToken.output needs a perToken.input above 0',
    });
    expect(priceColumns({ model: 'free', perToken: { input: 0, output: 0 } })).toMatchObject({
      ok: true,
      columns: { model_ratio: 0, completion_ratio: 0 },
    });
  });
});

describe('groupColumns', () => {
  it('stores user group ratios as JSON with sorted keys', () => {
    expect(groupColumns({ name: 'vip', ratio: 0.8, userGroupRatios: { svip: 0.5, default: 1 } })).toEqual({
      ok: true,
      columns: {
        name: 'vip',
        ratio: 0.8,
        description: '',
        selectable: false,
        user_group_ratios: '{"default":1,"svip":0.5}',
        rate_limits: '{}',
      },
    });
  });

  it('refuses names the gateway cannot list and negative ratios', () => {
    expect(groupColumns({ name: 'a,b', ratio: 1 })).toMatchObject({ ok: false, code: 'GROUP_INVALID' });
    expect(groupColumns({ name: 'vip', ratio: -1 })).toMatchObject({ ok: false });
    expect(groupColumns({ name: 'vip', ratio: 1, userGroupRatios: { x: -2 } })).toMatchObject({ ok: false });
  });
});
