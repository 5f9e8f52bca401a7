import { describe, expect, it } from 'vitest';
import { dropUndeclaredNulls } from './validation.ts';

describe('dropUndeclaredNulls', () => {
  const schema = {
    type: 'object',
    properties: {
      aff_code: { type: 'string' },
      tag: { type: ['string', 'null'] },
      param_override: { anyOf: [{ type: 'object' }, { type: 'string' }] },
      items: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
    },
  };

  it('drops a null sent for a declared, non-nullable field, at every declared depth', () => {
    const body: Record<string, unknown> = { aff_code: null, items: [{ name: null }, { name: 'x' }] };
    dropUndeclaredNulls(body, schema);
    expect(body).toEqual({ items: [{}, { name: 'x' }] });
  });

  it('keeps nulls the schema allows, nulls inside free-form values, and fields it does not declare', () => {
    const body = { tag: null, param_override: { temperature: null }, extra: null };
    dropUndeclaredNulls(body, schema);
    expect(body).toEqual({ tag: null, param_override: { temperature: null }, extra: null });
  });
});
