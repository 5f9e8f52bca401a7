import { describe, expect, it } from 'vitest';
import { RelayRuleError } from '../routing/errors.ts';
import { REGEX_INPUT_LIMIT } from './go-regexp.ts';
import { applyParamOverride, type OverrideContext, type ParamOverrideResult } from './param-override.ts';

const context: OverrideContext = {
  model: 'gpt-4o-2024-08-06',
  upstream_model: 'gpt-4o-2024-08-06',
  original_model: 'gpt-4o',
  request_path: '/v1/chat/completions',
  request_headers: { 'x-team': 'blue', 'user-agent': 'sdk/1.0', 'x-multi': ['a', 'b'] },
  retry_index: 0,
  is_retry: false,
};

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** Applies operations to a frozen copy of `body` (so any in-place edit throws) and returns the new body. */
function run(body: unknown, operations: unknown[], ctx: OverrideContext = context): unknown {
  const result = apply(body, { operations }, ctx);
  if (!result.ok) throw result.error;
  return result.body;
}

function apply(body: unknown, override: Record<string, unknown>, ctx: OverrideContext = context): ParamOverrideResult {
  return applyParamOverride(deepFreeze(structuredClone(body)), deepFreeze(structuredClone(override)), ctx);
}

function failure(body: unknown, override: Record<string, unknown>, ctx: OverrideContext = context): RelayRuleError {
  const result = apply(body, override, ctx);
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.body)}`);
  return result.error;
}

describe('param_override, legacy form', () => {
  it('sets every top-level key on the body', () => {
    const result = apply(
      { model: 'm', temperature: 1, n: 1 },
      { temperature: 0.2, max_tokens: 100, metadata: { a: 1 } },
    );
    expect(result).toEqual({
      ok: true,
      body: { model: 'm', temperature: 0.2, n: 1, max_tokens: 100, metadata: { a: 1 } },
    });
  });

  it('returns the input itself without an override', () => {
    const body = { a: 1 };
    expect(applyParamOverride(body, undefined, context)).toEqual({ ok: true, body });
    expect((applyParamOverride(body, undefined, context) as { body: unknown }).body).toBe(body);
  });

  it('refuses a body that is not an object', () => {
    expect(failure([1, 2], { a: 1 }).code).toBe('channel:param_override_invalid');
  });

  it('merges legacy keys next to operations first', () => {
    expect(apply({ a: 1 }, { b: 2, operations: [{ mode: 'copy', from: 'b', to: 'c' }] })).toEqual({
      ok: true,
      body: { a: 1, b: 2, c: 2 },
    });
  });
});

describe('param_override operations', () => {
  it('set: creates, overwrites, respects keep_origin, creates missing containers, replaces null', () => {
    expect(run({ a: 1 }, [{ mode: 'set', path: 'a', value: 2 }])).toEqual({ a: 2 });
    expect(run({ a: 1 }, [{ mode: 'set', path: 'a', value: 2, keep_origin: true }])).toEqual({ a: 1 });
    expect(run({}, [{ mode: 'set', path: 'a', value: 2, keep_origin: true }])).toEqual({ a: 2 });
    expect(run({}, [{ mode: 'set', path: 'x.y.z', value: true }])).toEqual({ x: { y: { z: true } } });
    expect(run({ stream_options: null }, [{ mode: 'set', path: 'stream_options.include_usage', value: true }])).toEqual(
      {
        stream_options: { include_usage: true },
      },
    );
    expect(run({ o: { keep: 1 } }, [{ mode: 'set', path: 'o.new', value: { deep: [1] } }])).toEqual({
      o: { keep: 1, new: { deep: [1] } },
    });
  });

  it('set with array indexes, negative ones and append', () => {
    const body = { messages: [{ content: 'a' }, { content: 'b' }] };
    expect(run(body, [{ mode: 'set', path: 'messages.0.content', value: 'A' }])).toEqual({
      messages: [{ content: 'A' }, { content: 'b' }],
    });
    expect(run(body, [{ mode: 'set', path: 'messages.-1.content', value: 'B' }])).toEqual({
      messages: [{ content: 'a' }, { content: 'B' }],
    });
    expect(run({ stop: [] }, [{ mode: 'set', path: 'stop.-1', value: 'x' }])).toEqual({ stop: ['x'] });
    expect(run({}, [{ mode: 'set', path: 'list.0', value: 'x' }])).toEqual({ list: ['x'] });
    expect(run({ k: { 'a.b': 1 } }, [{ mode: 'set', path: 'k.a\\.b', value: 2 }])).toEqual({ k: { 'a.b': 2 } });
  });

  it('set with a wildcard touches every element', () => {
    const body = { messages: [{ role: 'user' }, { role: 'system' }] };
    expect(run(body, [{ mode: 'set', path: 'messages.*.name', value: 'n' }])).toEqual({
      messages: [
        { role: 'user', name: 'n' },
        { role: 'system', name: 'n' },
      ],
    });
  });

  it('delete: a key, an array element, a missing path', () => {
    expect(run({ a: 1, b: 2 }, [{ mode: 'delete', path: 'b' }])).toEqual({ a: 1 });
    expect(run({ l: [1, 2, 3] }, [{ mode: 'delete', path: 'l.-1' }])).toEqual({ l: [1, 2] });
    expect(run({ a: 1 }, [{ mode: 'delete', path: 'x.y' }])).toEqual({ a: 1 });
    expect(
      run(
        {
          t: [
            { a: 1, b: 2 },
            { a: 3, b: 4 },
          ],
        },
        [{ mode: 'delete', path: 't.*.b' }],
      ),
    ).toEqual({
      t: [{ a: 1 }, { a: 3 }],
    });
  });

  it('move and copy; a missing source is skipped', () => {
    expect(run({ max_tokens: 5 }, [{ mode: 'move', from: 'max_tokens', to: 'max_completion_tokens' }])).toEqual({
      max_completion_tokens: 5,
    });
    expect(run({ a: { x: 1 } }, [{ mode: 'copy', from: 'a', to: 'b.c' }])).toEqual({ a: { x: 1 }, b: { c: { x: 1 } } });
    expect(run({ n: 1 }, [{ mode: 'move', from: 'max_tokens', to: 'max_completion_tokens' }])).toEqual({ n: 1 });
    expect(run({ l: ['a', 'b'] }, [{ mode: 'move', from: 'l.-1', to: 'last' }])).toEqual({ l: ['a'], last: 'b' });
  });

  it('copies are independent: changing the copy leaves the source alone', () => {
    expect(
      run({ a: { x: 1 } }, [
        { mode: 'set', path: 'a.y', value: 2 },
        { mode: 'copy', from: 'a', to: 'b' },
        { mode: 'set', path: 'b.x', value: 9 },
      ]),
    ).toEqual({ a: { x: 1, y: 2 }, b: { x: 9, y: 2 } });
  });

  it('prepend and append on strings, arrays and objects', () => {
    expect(run({ s: 'mid' }, [{ mode: 'prepend', path: 's', value: 'pre-' }])).toEqual({ s: 'pre-mid' });
    expect(run({ s: 'mid' }, [{ mode: 'append', path: 's', value: '-post' }])).toEqual({ s: 'mid-post' });
    expect(run({ l: [2] }, [{ mode: 'prepend', path: 'l', value: 1 }])).toEqual({ l: [1, 2] });
    expect(run({ l: [2] }, [{ mode: 'append', path: 'l', value: [3, 4] }])).toEqual({ l: [2, 3, 4] });
    expect(run({ o: { a: 1, b: null } }, [{ mode: 'append', path: 'o', value: { a: 2, b: 3, c: 4 } }])).toEqual({
      o: { a: 2, b: 3, c: 4 },
    });
    expect(
      run({ o: { a: 1, b: null } }, [{ mode: 'append', path: 'o', value: { a: 2, b: 3 }, keep_origin: true }]),
    ).toEqual({ o: { a: 1, b: 3 } });
    expect(run({}, [{ mode: 'append', path: 'missing', value: 'x' }])).toEqual({});
  });

  it('trim_prefix, trim_suffix, ensure_prefix, ensure_suffix', () => {
    expect(run({ m: 'openai/gpt-4o' }, [{ mode: 'trim_prefix', path: 'm', value: 'openai/' }])).toEqual({
      m: 'gpt-4o',
    });
    expect(run({ m: 'gpt-4o' }, [{ mode: 'trim_prefix', path: 'm', value: 'openai/' }])).toEqual({ m: 'gpt-4o' });
    expect(run({ m: 'gpt-4o:free' }, [{ mode: 'trim_suffix', path: 'm', value: ':free' }])).toEqual({ m: 'gpt-4o' });
    expect(run({ m: 'gpt-4o' }, [{ mode: 'ensure_prefix', path: 'm', value: 'openai/' }])).toEqual({
      m: 'openai/gpt-4o',
    });
    expect(run({ m: 'openai/gpt-4o' }, [{ mode: 'ensure_prefix', path: 'm', value: 'openai/' }])).toEqual({
      m: 'openai/gpt-4o',
    });
    expect(run({ m: 'gpt-4o' }, [{ mode: 'ensure_suffix', path: 'm', value: ':online' }])).toEqual({
      m: 'gpt-4o:online',
    });
    expect(run({ m: 'gpt-4o:online' }, [{ mode: 'ensure_suffix', path: 'm', value: ':online' }])).toEqual({
      m: 'gpt-4o:online',
    });
  });

  it('trim_space, to_lower, to_upper', () => {
    expect(run({ s: '  x y \n' }, [{ mode: 'trim_space', path: 's' }])).toEqual({ s: 'x y' });
    expect(run({ s: 'GPT-4o' }, [{ mode: 'to_lower', path: 's' }])).toEqual({ s: 'gpt-4o' });
    expect(run({ s: 'gpt-4o' }, [{ mode: 'to_upper', path: 's' }])).toEqual({ s: 'GPT-4O' });
  });

  it('replace every occurrence, literally', () => {
    expect(run({ s: 'a.b.c' }, [{ mode: 'replace', path: 's', from: '.', to: '$&-' }])).toEqual({ s: 'a$&-b$&-c' });
  });

  it('regex_replace with Go-style groups and flags', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Go's replacement syntax, not a template
    const group = '@${1}';
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Go's replacement syntax, not a template
    const named = '${val}=${key}';
    expect(
      run({ m: 'claude-3-5-sonnet-20241022' }, [{ mode: 'regex_replace', path: 'm', from: '-(\\d{8})$', to: group }]),
    ).toEqual({ m: 'claude-3-5-sonnet@20241022' });
    expect(run({ s: 'Foo foo' }, [{ mode: 'regex_replace', path: 's', from: '(?i)foo', to: 'bar' }])).toEqual({
      s: 'bar bar',
    });
    expect(
      run({ s: 'k=v' }, [{ mode: 'regex_replace', path: 's', from: '(?P<key>\\w+)=(?P<val>\\w+)', to: named }]),
    ).toEqual({ s: 'v=k' });
  });

  it('regex_replace leaves a string longer than REGEX_INPUT_LIMIT as it is (a backtracking pattern never sees it)', () => {
    // Exponential on a run of a's without b: unbounded, this would not end.
    const op = { mode: 'regex_replace', path: 's', from: '^(a|aa)*b$', to: 'x' };
    const long = 'a'.repeat(1_000_000);
    expect(run({ s: long }, [op])).toEqual({ s: long });
    expect(run({ s: 'aaab' }, [op])).toEqual({ s: 'x' });
    const limit = { mode: 'regex_replace', path: 's', from: 'a$', to: 'b' };
    expect(run({ s: 'a'.repeat(REGEX_INPUT_LIMIT) }, [limit])).toEqual({ s: `${'a'.repeat(REGEX_INPUT_LIMIT - 1)}b` });
    expect(run({ s: 'a'.repeat(REGEX_INPUT_LIMIT + 1) }, [limit])).toEqual({ s: 'a'.repeat(REGEX_INPUT_LIMIT + 1) });
  });

  it('string modes skip a missing path but refuse a value of another type', () => {
    expect(run({}, [{ mode: 'to_lower', path: 's' }])).toEqual({});
    const error = failure({ s: 5 }, { operations: [{ mode: 'to_lower', path: 's' }] });
    expect(error.code).toBe('channel:param_override_invalid');
    expect(error.message).toContain('to_lower s');
  });

  it('prune_objects removes matching objects, recursively', () => {
    const body = {
      tools: [
        { type: 'function', name: 'f' },
        { type: 'web_search_preview' },
        { type: 'function', name: 'g', nested: [{ type: 'web_search_preview' }] },
      ],
    };
    expect(run(body, [{ mode: 'prune_objects', path: 'tools', value: 'web_search_preview' }])).toEqual({
      tools: [
        { type: 'function', name: 'f' },
        { type: 'function', name: 'g', nested: [] },
      ],
    });
    // The whole body (never dropped itself), recursively by default.
    expect(run(body, [{ mode: 'prune_objects', path: '', value: { type: 'web_search_preview' } }])).toEqual(
      run(body, [{ mode: 'prune_objects', path: 'tools', value: 'web_search_preview' }]),
    );
    // `where` (all must equal), not descending into kept objects.
    expect(
      run(body, [
        { mode: 'prune_objects', path: 'tools', value: { where: { type: 'function', name: 'g' }, recursive: false } },
      ]),
    ).toEqual({ tools: [{ type: 'function', name: 'f' }, { type: 'web_search_preview' }] });
    expect(
      run(body, [
        {
          mode: 'prune_objects',
          path: 'tools',
          value: { conditions: [{ path: 'name', mode: 'full', value: 'f' }], recursive: false },
        },
      ]),
    ).toEqual({ tools: [{ type: 'web_search_preview' }, body.tools[2]] });
  });

  it('return_error stops the request with the configured error', () => {
    const error = failure(
      { model: 'gpt-4o' },
      {
        operations: [
          {
            mode: 'return_error',
            value: {
              message: 'blocked {model}',
              status_code: 403,
              code: 'policy',
              type: 'policy_error',
              skip_retry: false,
            },
          },
        ],
      },
    );
    expect(error).toBeInstanceOf(RelayRuleError);
    expect({ status: error.status, code: error.code, type: error.type, skip: error.skipRetry }).toEqual({
      status: 403,
      code: 'policy',
      type: 'policy_error',
      skip: false,
    });
    expect(error.message).toBe('blocked {model}');
    const plain = failure({}, { operations: [{ mode: 'return_error', value: 'no' }] });
    expect([plain.status, plain.code, plain.type, plain.skipRetry]).toEqual([
      400,
      'invalid_request',
      'invalid_request_error',
      true,
    ]);
  });

  it('return_error only when its conditions hold', () => {
    const override = {
      operations: [
        {
          mode: 'return_error',
          value: 'too many tokens',
          conditions: [{ path: 'max_tokens', mode: 'gt', value: 1000 }],
        },
      ],
    };
    expect(apply({ max_tokens: 10 }, override)).toEqual({ ok: true, body: { max_tokens: 10 } });
    expect(failure({ max_tokens: 5000 }, override).message).toBe('too many tokens');
  });

  it('header operations build the header override for the attempt', () => {
    const ctx = { ...context, header_override: { 'X-Static': 's', Authorization: 'Bearer {api_key}', '*': '' } };
    const result = apply(
      { model: 'm' },
      {
        operations: [
          { mode: 'set_header', path: 'X-Added', value: 'v' },
          { mode: 'set_header', path: 'x-static', value: 'kept', keep_origin: true },
          { mode: 'delete_header', path: 'authorization' },
          { mode: 'copy_header', from: 'x-team', to: 'x-upstream-team' },
          { mode: 'move_header', from: 'x-added', to: 'x-moved' },
          { mode: 'pass_headers', value: 'User-Agent, X-Absent' },
          { mode: 'copy_header', from: 'x-absent', to: 'x-never' },
          { mode: 'set_header', path: 'x-multi-copy', value: 'one' },
        ],
      },
      ctx,
    );
    expect(result).toEqual({
      ok: true,
      body: { model: 'm' },
      headerOverride: {
        'x-static': 's',
        '*': '',
        'x-upstream-team': 'blue',
        'x-moved': 'v',
        'user-agent': 'sdk/1.0',
        'x-multi-copy': 'one',
      },
    });
  });

  it('sync_fields fills whichever side is missing, between body fields and headers', () => {
    expect(run({ a: 'x' }, [{ mode: 'sync_fields', from: 'a', to: 'json:b' }])).toEqual({ a: 'x', b: 'x' });
    expect(run({ b: 'y' }, [{ mode: 'sync_fields', from: 'a', to: 'b' }])).toEqual({ a: 'y', b: 'y' });
    expect(run({ a: 1, b: 2 }, [{ mode: 'sync_fields', from: 'a', to: 'b' }])).toEqual({ a: 1, b: 2 });
    expect(run({}, [{ mode: 'sync_fields', from: 'header:x-team', to: 'body:user' }])).toEqual({ user: 'blue' });
    const result = apply(
      { session: 's1' },
      { operations: [{ mode: 'sync_fields', from: 'session', to: 'header:x-session' }] },
    );
    expect(result).toMatchObject({ ok: true, headerOverride: { 'x-session': 's1' } });
  });

  it('never modifies its input and shares untouched parts with it', () => {
    const body = { keep: { big: [1, 2, 3] }, edit: { a: 1 } };
    const result = applyParamOverride(
      deepFreeze(body),
      { operations: [{ mode: 'set', path: 'edit.b', value: 2 }] },
      context,
    );
    if (!result.ok) throw result.error;
    expect(result.body).toEqual({ keep: { big: [1, 2, 3] }, edit: { a: 1, b: 2 } });
    expect((result.body as typeof body).keep).toBe(body.keep);
    expect(body.edit).toEqual({ a: 1 });
  });

  it('does not let the body share objects with the channel setting', () => {
    const override = { operations: [{ mode: 'set', path: 'meta', value: { tags: ['a'] } }] };
    const first = applyParamOverride({}, override, context) as { body: { meta: { tags: string[] } } };
    first.body.meta.tags.push('changed');
    const second = applyParamOverride({}, override, context) as { body: { meta: { tags: string[] } } };
    expect(second.body.meta.tags).toEqual(['a']);
  });

  it('treats a JSON key named __proto__ as data', () => {
    const body = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
    const result = applyParamOverride(body, { operations: [{ mode: 'set', path: '__proto__.y', value: 2 }] }, context);
    if (!result.ok) throw result.error;
    expect(JSON.stringify(result.body)).toBe('{"__proto__":{"x":1,"y":2}}');
    expect(({} as Record<string, unknown>).y).toBeUndefined();
  });
});

describe('param_override conditions', () => {
  const setFlag = (conditions: unknown, logic?: string) => [
    { mode: 'set', path: 'flag', value: true, conditions, ...(logic ? { logic } : {}) },
  ];
  const holds = (body: unknown, conditions: unknown, logic?: string, ctx?: OverrideContext) =>
    (run(body, setFlag(conditions, logic), ctx) as { flag?: boolean }).flag === true;

  it.each([
    ['full string', { m: 'gpt-4o' }, { path: 'm', mode: 'full', value: 'gpt-4o' }, true],
    ['full string, other', { m: 'gpt-4' }, { path: 'm', mode: 'full', value: 'gpt-4o' }, false],
    ['full number', { n: 2 }, { path: 'n', mode: 'full', value: 2 }, true],
    ['full bool', { stream: false }, { path: 'stream', mode: 'full', value: false }, true],
    ['full null', { x: null }, { path: 'x', mode: 'full', value: null }, true],
    ['full, different types', { n: 2 }, { path: 'n', mode: 'full', value: '2' }, false],
    ['full object', { o: { a: 1 } }, { path: 'o', mode: 'full', value: { a: 1 } }, true],
    ['prefix', { m: 'gpt-4o' }, { path: 'm', mode: 'prefix', value: 'gpt' }, true],
    ['prefix, no', { m: 'o3' }, { path: 'm', mode: 'prefix', value: 'gpt' }, false],
    ['suffix', { m: 'gpt-4o-mini' }, { path: 'm', mode: 'suffix', value: 'mini' }, true],
    ['contains', { m: 'gpt-4o-mini' }, { path: 'm', mode: 'contains', value: '4o' }, true],
    ['contains on a number', { n: 1234 }, { path: 'n', mode: 'contains', value: '23' }, true],
    ['gt', { t: 2 }, { path: 't', mode: 'gt', value: 1 }, true],
    ['gt, equal', { t: 1 }, { path: 't', mode: 'gt', value: 1 }, false],
    ['gte', { t: 1 }, { path: 't', mode: 'gte', value: 1 }, true],
    ['lt', { t: 0.5 }, { path: 't', mode: 'lt', value: 1 }, true],
    ['lte', { t: 1 }, { path: 't', mode: 'lte', value: 1 }, true],
    ['lte, more', { t: 2 }, { path: 't', mode: 'lte', value: 1 }, false],
    ['gt on a string', { t: '5' }, { path: 't', mode: 'gt', value: 1 }, false],
    ['negative index', { l: [{ r: 'a' }, { r: 'b' }] }, { path: 'l.-1.r', mode: 'full', value: 'b' }, true],
    ['invert', { m: 'gpt-4o' }, { path: 'm', mode: 'prefix', value: 'gpt', invert: true }, false],
    ['invert, no match', { m: 'o3' }, { path: 'm', mode: 'prefix', value: 'gpt', invert: true }, true],
    ['missing key', {}, { path: 'm', mode: 'full', value: 'x' }, false],
    ['missing key, inverted', {}, { path: 'm', mode: 'full', value: 'x', invert: true }, false],
    ['missing key passes', {}, { path: 'nope', mode: 'full', value: 'x', pass_missing_key: true }, true],
  ])('%s', (_, body, condition, expected) => {
    expect(holds(body, [condition])).toBe(expected);
  });

  it('combines with OR by default and AND on request', () => {
    const conditions = [
      { path: 'a', mode: 'full', value: 1 },
      { path: 'b', mode: 'full', value: 1 },
    ];
    expect(holds({ a: 1, b: 2 }, conditions)).toBe(true);
    expect(holds({ a: 2, b: 2 }, conditions)).toBe(false);
    expect(holds({ a: 1, b: 2 }, conditions, 'AND')).toBe(false);
    expect(holds({ a: 1, b: 1 }, conditions, 'and')).toBe(true);
  });

  it('accepts the object form: every key must equal (each one is an OR branch unless AND)', () => {
    expect(holds({ a: 1 }, { a: 1 })).toBe(true);
    expect(holds({ a: 2 }, { a: 1 })).toBe(false);
  });

  it('reads the context when the body lacks the path', () => {
    const ctx: OverrideContext = {
      ...context,
      retry_index: 2,
      is_retry: true,
      last_error: {
        status_code: 429,
        message: 'slow down',
        code: 'rate_limit',
        type: 'upstream_error',
        skip_retry: false,
      },
    };
    expect(holds({}, [{ path: 'original_model', mode: 'full', value: 'gpt-4o' }], undefined, ctx)).toBe(true);
    expect(holds({}, [{ path: 'model', mode: 'full', value: 'gpt-4o-2024-08-06' }], undefined, ctx)).toBe(true);
    expect(holds({}, [{ path: 'upstream_model', mode: 'prefix', value: 'gpt-4o-' }], undefined, ctx)).toBe(true);
    expect(holds({}, [{ path: 'request_path', mode: 'suffix', value: '/completions' }], undefined, ctx)).toBe(true);
    expect(holds({}, [{ path: 'request_headers.X-Team', mode: 'full', value: 'blue' }], undefined, ctx)).toBe(true);
    expect(holds({}, [{ path: 'headers.x-multi', mode: 'full', value: 'a, b' }], undefined, ctx)).toBe(true);
    expect(holds({}, [{ path: 'retry_index', mode: 'gte', value: 2 }], undefined, ctx)).toBe(true);
    expect(holds({}, [{ path: 'is_retry', mode: 'full', value: true }], undefined, ctx)).toBe(true);
    expect(holds({}, [{ path: 'retry.index', mode: 'full', value: 2 }], undefined, ctx)).toBe(true);
    expect(holds({}, [{ path: 'last_error.status_code', mode: 'full', value: 429 }], undefined, ctx)).toBe(true);
    expect(holds({}, [{ path: 'last_error_code', mode: 'full', value: 'rate_limit' }], undefined, ctx)).toBe(true);
    expect(holds({}, [{ path: 'is_retry', mode: 'full', value: true }])).toBe(false);
    // The body wins over the context.
    expect(
      holds({ model: 'other' }, [{ path: 'model', mode: 'full', value: 'gpt-4o-2024-08-06' }], undefined, ctx),
    ).toBe(false);
  });

  it('sees the effect of earlier operations', () => {
    expect(
      run({ m: 'GPT' }, [
        { mode: 'to_lower', path: 'm' },
        { mode: 'set', path: 'ok', value: true, conditions: [{ path: 'm', mode: 'full', value: 'gpt' }] },
      ]),
    ).toEqual({ m: 'gpt', ok: true });
  });
});

describe('param_override settings that cannot be used', () => {
  it.each([
    ['operations not an array', { operations: {} }],
    ['an operation without mode', { operations: [{ path: 'a' }] }],
    ['an unknown mode', { operations: [{ mode: 'explode', path: 'a' }] }],
    ['set without path', { operations: [{ mode: 'set', value: 1 }] }],
    ['move without to', { operations: [{ mode: 'move', from: 'a' }] }],
    ['ensure_prefix with an empty value', { operations: [{ mode: 'ensure_prefix', path: 'a', value: '' }] }],
    ['replace without from', { operations: [{ mode: 'replace', path: 'a', to: 'b' }] }],
    ['a bad regular expression', { operations: [{ mode: 'regex_replace', path: 'a', from: '(' }] }],
    ['return_error without message', { operations: [{ mode: 'return_error', value: { status_code: 400 } }] }],
    ['return_error with a bad status', { operations: [{ mode: 'return_error', value: { message: 'x', status: 99 } }] }],
    [
      'an unknown condition mode',
      { operations: [{ mode: 'delete', path: 'a', conditions: [{ path: 'a', mode: 'regex' }] }] },
    ],
    ['set_header with an object value', { operations: [{ mode: 'set_header', path: 'x', value: { a: 'b' } }] }],
    ['a bad sync target', { operations: [{ mode: 'sync_fields', from: 'cookie:a', to: 'b' }] }],
  ])('%s', (_, override) => {
    const error = failure({ a: 'x' }, override);
    expect(error.code).toBe('channel:param_override_invalid');
    expect(error.status).toBe(500);
  });
});
