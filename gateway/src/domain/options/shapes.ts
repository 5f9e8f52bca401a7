/**
 * A tiny description language for the shape of JSON options, enough to reject a ratio map that
 * holds a string or a group list that is an object, with a message that points at the bad spot.
 */
export type Shape =
  | { readonly kind: 'any' }
  | { readonly kind: 'string'; readonly values?: readonly string[] }
  | { readonly kind: 'number'; readonly integer?: boolean; readonly min?: number }
  | { readonly kind: 'boolean' }
  | { readonly kind: 'array'; readonly items: Shape }
  | { readonly kind: 'tuple'; readonly items: readonly Shape[] }
  | { readonly kind: 'record'; readonly values: Shape }
  /** An object with these required fields; other fields are allowed. */
  | { readonly kind: 'object'; readonly fields: Readonly<Record<string, Shape>> }
  /** An object with only these fields, each optional. */
  | { readonly kind: 'some-of'; readonly fields: Readonly<Record<string, Shape>> };

export const shape = {
  any: (): Shape => ({ kind: 'any' }),
  string: (values?: readonly string[]): Shape => (values ? { kind: 'string', values } : { kind: 'string' }),
  number: (min?: number): Shape => (min === undefined ? { kind: 'number' } : { kind: 'number', min }),
  integer: (min?: number): Shape =>
    min === undefined ? { kind: 'number', integer: true } : { kind: 'number', integer: true, min },
  boolean: (): Shape => ({ kind: 'boolean' }),
  array: (items: Shape = { kind: 'any' }): Shape => ({ kind: 'array', items }),
  tuple: (...items: Shape[]): Shape => ({ kind: 'tuple', items }),
  record: (values: Shape = { kind: 'any' }): Shape => ({ kind: 'record', values }),
  object: (fields: Record<string, Shape> = {}): Shape => ({ kind: 'object', fields }),
  someOf: (fields: Record<string, Shape>): Shape => ({ kind: 'some-of', fields }),
};

export interface ShapeMismatch {
  /** Where the mismatch is, `$` being the whole value: `$["gpt-4o"]`, `$[2]`. */
  path: string;
  expected: { zh: string; en: string };
}

/** The first place where `value` does not match `expected`, or undefined when it matches. */
export function checkShape(value: unknown, expected: Shape, path = '$'): ShapeMismatch | undefined {
  const mismatch = (): ShapeMismatch => ({ path, expected: describe(expected) });
  switch (expected.kind) {
    case 'any':
      return undefined;
    case 'string':
      if (typeof value !== 'string') return mismatch();
      return expected.values && !expected.values.includes(value) ? mismatch() : undefined;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return mismatch();
      if (expected.integer && !Number.isInteger(value)) return mismatch();
      return expected.min !== undefined && value < expected.min ? mismatch() : undefined;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : mismatch();
    case 'array':
      if (!Array.isArray(value)) return mismatch();
      return firstOf(value, (item, i) => checkShape(item, expected.items, `${path}[${i}]`));
    case 'tuple':
      if (!Array.isArray(value) || value.length !== expected.items.length) return mismatch();
      return firstOf(expected.items, (item, i) => checkShape(value[i], item, `${path}[${i}]`));
    case 'record':
      if (!isPlainObject(value)) return mismatch();
      return firstOf(Object.entries(value), ([k, v]) => checkShape(v, expected.values, member(path, k)));
    case 'object':
      if (!isPlainObject(value)) return mismatch();
      return firstOf(Object.entries(expected.fields), ([k, field]) =>
        k in value
          ? checkShape(value[k], field, member(path, k))
          : { path: member(path, k), expected: describe(field) },
      );
    case 'some-of':
      if (!isPlainObject(value)) return mismatch();
      return firstOf(Object.entries(value), ([k, v]) => {
        const field = expected.fields[k];
        return field ? checkShape(v, field, member(path, k)) : { path: member(path, k), expected: describe(expected) };
      });
  }
}

function firstOf<T>(items: readonly T[], check: (item: T, index: number) => ShapeMismatch | undefined) {
  for (const [i, item] of items.entries()) {
    const found = check(item, i);
    if (found) return found;
  }
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function member(path: string, key: string): string {
  return `${path}[${JSON.stringify(key)}]`;
}

function describe(expected: Shape): { zh: string; en: string } {
  switch (expected.kind) {
    case 'any':
      return { zh: '任意值', en: 'any value' };
    case 'string':
      return expected.values
        ? { zh: `以下之一：${expected.values.join(', ')}`, en: `one of ${expected.values.join(', ')}` }
        : { zh: '字符串', en: 'a string' };
    case 'number': {
      const noun = expected.integer ? { zh: '整数', en: 'an integer' } : { zh: '数字', en: 'a number' };
      return expected.min === undefined
        ? noun
        : { zh: `不小于 ${expected.min} 的${noun.zh}`, en: `${noun.en} ≥ ${expected.min}` };
    }
    case 'boolean':
      return { zh: '布尔值', en: 'true or false' };
    case 'array':
      return { zh: '数组', en: 'an array' };
    case 'tuple':
      return { zh: `包含 ${expected.items.length} 项的数组`, en: `an array of ${expected.items.length} items` };
    case 'record':
      return { zh: '对象', en: 'an object' };
    case 'object': {
      const fields = Object.keys(expected.fields);
      return fields.length === 0
        ? { zh: '对象', en: 'an object' }
        : { zh: `包含 ${fields.join(', ')} 的对象`, en: `an object with ${fields.join(', ')}` };
    }
    case 'some-of': {
      const fields = Object.keys(expected.fields).join(', ');
      return { zh: `只含 ${fields} 的对象`, en: `an object with only ${fields}` };
    }
  }
}
