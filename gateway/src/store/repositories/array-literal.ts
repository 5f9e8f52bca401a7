/**
 * Postgres array literals (`{1,2}`, `{"a","b\"c"}`) built directly from one column's values, for statements
 * that send a column of many rows as one parameter (usage logs: `unnest($1::text[], …)`). Passed as a string,
 * the literal goes to Postgres as it is: the drivers' generic array serialisers (pg's, PGlite's) would run two
 * regular expressions on every element, numbers included, and PGlite's would first be handed the array over
 * IPC element by element.
 */

/** Integers (int4/int8 columns): written bare, as Postgres prints them. */
export function integerArrayLiteral(values: readonly number[]): string {
  return `{${values.join(',')}}`;
}

export function booleanArrayLiteral(values: readonly boolean[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) out += (i > 0 ? ',' : '') + (values[i] ? 't' : 'f');
  return `${out}}`;
}

const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;

/**
 * Text: every element double-quoted (so empty strings, spaces, commas, braces and the word NULL stay
 * what they are), with `"` and `\` escaped by a backslash. NUL cannot be in a text value (callers strip it).
 */
export function textArrayLiteral(values: readonly string[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    out += `${i > 0 ? ',"' : '"'}${NEEDS_ESCAPE.test(value) ? value.replace(ESCAPED, '\\$&') : value}"`;
  }
  return `${out}}`;
}
