import { describe, expect, it } from 'vitest';
import { statementTally } from './statement-tally.ts';

describe('statementTally', () => {
  it('is off unless TOLLGATE_EMBEDDED_STATEMENTS names a file', () => {
    expect(statementTally({})).toBeUndefined();
  });

  it('counts statements by their text, whitespace collapsed, failed ones included', async () => {
    const tally = statementTally({ TOLLGATE_EMBEDDED_STATEMENTS: '/dev/null' })!;
    expect(await tally.time('select\n   1', async () => 'a')).toBe('a');
    await tally.time('select 1', async () => 'b');
    await expect(tally.time('begin', () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    const counted = Object.fromEntries(tally.summary().map((s) => [s.sql, s.count]));
    expect(counted).toEqual({ 'select 1': 2, begin: 1 });
  });
});
