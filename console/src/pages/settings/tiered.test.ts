import { describe, expect, it } from 'vitest';
import { BILLING_EXPR_KEY, BILLING_MODE_KEY, rowProblems, TIMEZONE_KEY, tieredChanges, tieredRows } from './tiered.ts';

const options = {
  [BILLING_MODE_KEY]: JSON.stringify({ 'claude-sonnet-4': 'tiered_expr' }),
  [BILLING_EXPR_KEY]: JSON.stringify({ 'claude-sonnet-4': 'p * 3 + c * 15', 'gpt-4o': 'p * 2.5 + c * 10' }),
  [TIMEZONE_KEY]: 'UTC',
};

describe('the tiered pricing editor', () => {
  it('lists every model of either option, on only when its mode is tiered_expr', () => {
    expect(tieredRows(options)).toEqual([
      { model: 'claude-sonnet-4', tiered: true, expression: 'p * 3 + c * 15' },
      { model: 'gpt-4o', tiered: false, expression: 'p * 2.5 + c * 10' },
    ]);
  });

  it('writes only what changed, expressions before modes', () => {
    const rows = tieredRows(options);
    expect(tieredChanges(options, rows, 'UTC')).toEqual([]);
    const switched = rows.map((row) => ({ ...row, tiered: true }));
    expect(tieredChanges(options, switched, 'Asia/Shanghai')).toEqual([
      {
        key: BILLING_MODE_KEY,
        value: JSON.stringify({ 'claude-sonnet-4': 'tiered_expr', 'gpt-4o': 'tiered_expr' }, null, 2),
      },
      { key: TIMEZONE_KEY, value: 'Asia/Shanghai' },
    ]);
    const added = [...rows, { model: 'new', tiered: true, expression: 'tier("base", p)' }];
    expect(tieredChanges(options, added, 'UTC').map((change) => change.key)).toEqual([
      BILLING_EXPR_KEY,
      BILLING_MODE_KEY,
    ]);
  });

  it('points at the position the gateway would refuse, in the reader language', () => {
    const rows = [
      { model: 'a', tiered: true, expression: 'p * 2 + q' },
      { model: 'a', tiered: true, expression: 'p' },
      { model: '', tiered: true, expression: 'p' },
      { model: 'b', tiered: true, expression: '' },
      { model: 'c', tiered: false, expression: '' },
    ];
    expect(rowProblems(rows, 'en')).toEqual({
      0: {
        field: 'expression',
        message: 'settings.tiered.problems.invalid',
        values: { position: 9, reason: 'unknown name "q"' },
      },
      1: { field: 'model', message: 'settings.tiered.problems.duplicate' },
      2: { field: 'model', message: 'settings.tiered.problems.no_model' },
      3: { field: 'expression', message: 'settings.tiered.problems.no_expression' },
    });
    expect(rowProblems(rows.slice(0, 1), 'zh')[0]?.values).toEqual({ position: 9, reason: '未知的名称 "q"' });
  });
});
