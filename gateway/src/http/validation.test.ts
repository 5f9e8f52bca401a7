import { describe, expect, it } from 'vitest';
import { dropUndeclaredNulls, validatorCompiler } from './validation.ts';

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

describe('validatorCompiler', () => {
  const compile = (schema: object, httpPart: string) =>
    validatorCompiler({ schema, httpPart, method: 'POST', url: '/x' }) as ((data: unknown) => boolean) & {
      errors?: unknown[] | null;
    };

  it('compiles a schema on its first use, not when the route is registered', () => {
    // An invalid schema shows when it is compiled: not at registration, but at the first request.
    const validate = compile({ type: 'no-such-type' }, 'body');
    expect(() => validate({})).toThrow(/no-such-type|type/);
  });

  it('validates bodies strictly and coerces query strings, with Fastify reading the errors', () => {
    const schema = { type: 'object', properties: { n: { type: 'number' } } };
    const body = compile(schema, 'body');
    expect(body({ n: '1' })).toBe(false);
    expect(body.errors?.length).toBe(1);
    expect(body({ n: 1 })).toBe(true);
    expect(body.errors).toBeNull();
    const query = compile(schema, 'querystring');
    const data = { n: '1' };
    expect(query(data)).toBe(true);
    expect(data).toEqual({ n: 1 });
  });
});
