import { describe, expect, it } from 'vitest';
import { boundNumbers, dropUndeclaredNulls, INT4_MAX, validatorCompiler } from './validation.ts';

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

describe('boundNumbers', () => {
  const check = (schema: object, httpPart: string, data: Record<string, unknown>) => {
    const validate = validatorCompiler({ schema, httpPart, method: 'GET', url: '/x' }) as ((d: unknown) => boolean) & {
      errors: Array<{ keyword: string }> | null;
    };
    return validate(data) ? 'ok' : validate.errors?.[0]?.keyword;
  };
  const object = (properties: object) => ({ type: 'object', properties });

  it('bounds path parameters, ids and query filters to int4, and refuses infinities', () => {
    const params = object({ id: { type: 'integer', minimum: 1 } });
    expect(check(params, 'params', { id: String(INT4_MAX) })).toBe('ok');
    expect(check(params, 'params', { id: String(INT4_MAX + 1) })).toBe('maximum');
    expect(check(params, 'params', { id: 'Infinity' })).toBe('finite');
    const query = object({ channel: { type: 'integer' }, start_timestamp: { type: 'integer' } });
    expect(check(query, 'querystring', { channel: '2147483648' })).toBe('maximum');
    expect(check(query, 'querystring', { start_timestamp: '2147483648' })).toBe('ok');
    expect(check(query, 'querystring', { start_timestamp: '1e20' })).toBe('maximum');
    expect(check(query, 'querystring', { start_timestamp: '-Infinity' })).toBe('finite');
  });

  it('bounds other body numbers to ±2^53 and keeps the bounds a schema names', () => {
    const body = object({
      quota: { type: 'number' },
      user_id: { type: 'integer' },
      n: { type: 'integer', maximum: 5 },
    });
    expect(check(body, 'body', { quota: 2 ** 40 })).toBe('ok');
    expect(check(body, 'body', { quota: 1e308 })).toBe('maximum');
    expect(check(body, 'body', { quota: -1e20 })).toBe('minimum');
    expect(check(body, 'body', { user_id: 2 ** 40 })).toBe('maximum');
    expect(check(body, 'body', { n: 6 })).toBe('maximum');
  });

  it('leaves the route schema itself as written (it is the API documentation)', () => {
    const schema = object({ id: { type: 'integer' } });
    check(schema, 'params', { id: '1' });
    expect(schema).toEqual(object({ id: { type: 'integer' } }));
    expect(boundNumbers(schema, 'params')).toMatchObject({ properties: { id: { maximum: INT4_MAX, finite: true } } });
  });
});
