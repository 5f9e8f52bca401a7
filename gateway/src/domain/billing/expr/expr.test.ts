import { describe, expect, it } from 'vitest';
import { compileExpression, type ExprContext, ExprError, noTokens, runExpression } from './index.ts';

function context(overrides: Partial<ExprContext> = {}, tokens: Partial<Record<string, number>> = {}): ExprContext {
  return {
    tokens: { ...noTokens(), ...tokens },
    param: () => undefined,
    header: () => '',
    now: new Date('2026-01-05T12:00:00Z'),
    timeZone: 'UTC',
    ...overrides,
  };
}

const run = (source: string, ctx: ExprContext = context()) => runExpression(compileExpression(source), ctx);

function errorOf(source: string): ExprError {
  try {
    compileExpression(source);
  } catch (error) {
    if (error instanceof ExprError) return error;
    throw error;
  }
  throw new Error(`${source} compiled`);
}

describe('billing expressions', () => {
  it('prices tokens in USD per 1M and names the tier that ran', () => {
    const source = 'len <= 200000 ? tier("standard", p * 3 + c * 15) : tier("long_context", p * 6 + c * 22.5)';
    expect(run(source, context({}, { p: 1000, c: 100, len: 1000 }))).toMatchObject({ cost: 4500, tier: 'standard' });
    expect(run(source, context({}, { p: 250000, c: 100, len: 250000 }))).toMatchObject({
      cost: 1_502_250,
      tier: 'long_context',
    });
    expect(compileExpression(source).tiers).toEqual(['standard', 'long_context']);
  });

  it('follows precedence: * before +, ** to the right, && before ||, ternaries nest to the right', () => {
    expect(run('1 + 2 * 3').cost).toBe(7);
    expect(run('(1 + 2) * 3').cost).toBe(9);
    expect(run('2 ** 3 ** 2').cost).toBe(512);
    expect(run('true || false && false ? 1 : 2').cost).toBe(1);
    expect(run('false ? 1 : false ? 2 : 3').cost).toBe(3);
    expect(run('-2 * -3 + 10 % 4').cost).toBe(8);
    expect(run('not false and 1 < 2 ? max(1, 4, 2) + min(3, 5) + abs(-1) + ceil(0.2) + floor(1.8) : 0').cost).toBe(10);
    expect(run('v1:tier("base", 1_000 * 2)')).toMatchObject({ cost: 2000, tier: 'base' });
  });

  it('runs expressions written for new-api unchanged: multi-line ternary chains, math helpers', () => {
    const glm = `
(
  p < 32000 && c < 200 ? tier("tier1_short", (p)*2 + c*8) :
  p < 32000 && c >= 200 ? tier("tier2_long_output", (p)*3 + c*14) :
  tier("tier3_long_input", (p)*4 + c*16)
) / 1000000
`;
    expect(run(glm, context({}, { p: 15000, c: 500 }))).toMatchObject({
      cost: (15000 * 3 + 500 * 14) / 1e6,
      tier: 'tier2_long_output',
    });
    expect(run('ceil(p / 1000) * 0.5', context({}, { p: 1500 })).cost).toBe(1);
    expect(run('max(p, c) * 0.5 + min(p, c) * 0.1', context({}, { p: 300, c: 500 })).cost).toBe(280);
    expect(() => compileExpression('invalid +-+ syntax')).toThrow(ExprError);
    expect(() => compileExpression('_trace(0, true, 5.0)')).toThrow('unknown function');
  });

  it('reads request fields and headers', () => {
    const ctx = context({
      param: (path) => ({ service_tier: 'priority', 'reasoning.effort': 'high', n: '2' })[path],
      header: (name) => (name === 'anthropic-beta' ? 'fast-mode-2025' : ''),
    });
    expect(run('param("service_tier") == "priority" ? 2 : 1', ctx).cost).toBe(2);
    expect(run('param("reasoning.effort") != "high" ? 2 : 1', ctx).cost).toBe(1);
    expect(run('param("n") * 3', ctx).cost).toBe(6);
    expect(run('param("missing") == nil ? 5 : 1', ctx).cost).toBe(5);
    expect(run('(param("missing") ?? 7) + 0', ctx).cost).toBe(7);
    expect(run('has(header("anthropic-beta"), "fast-mode") ? 6 : 1', ctx).cost).toBe(6);
    expect(run('header("Anthropic-Beta") startsWith "fast" ? 6 : 1', ctx).cost).toBe(6);
    expect(run('tier("request", fixed(0.01))', ctx)).toMatchObject({ cost: 10000, tier: 'request' });
  });

  it('lists its request multipliers in a canonical spelling, with whether each applied', () => {
    const source =
      "(tier('base', p * 2)) * (param('service_tier')=='fast' ? 2 : 1) * (has(header('anthropic-beta'), 'fast-mode') ? 2.5 : 1) * (hour() >= 22 || hour() < 6 ? 0.5 : 1) * (p > 10 ? 3 : 1)";
    const ctx = context({ param: (path) => (path === 'service_tier' ? 'fast' : undefined) }, { p: 10 });
    expect(run(source, ctx)).toEqual({
      cost: 40,
      tier: 'base',
      rules: [
        { cond: 'param("service_tier") == "fast"', multiplier: 2, matched: true },
        { cond: 'has(header("anthropic-beta"), "fast-mode")', multiplier: 2.5, matched: false },
        { cond: 'hour() >= 22 || hour() < 6', multiplier: 0.5, matched: false },
      ],
    });
  });

  it('reads the clock in the configured zone or in the zone given', () => {
    // 2026-01-05 is a Monday; 12:00 UTC is 20:00 in Shanghai.
    const ctx = context({ now: new Date('2026-01-05T12:00:00Z'), timeZone: 'Asia/Shanghai' });
    expect(run('hour()', ctx).cost).toBe(20);
    expect(run('hour("UTC")', ctx).cost).toBe(12);
    expect(run('weekday()', ctx).cost).toBe(1);
    expect(run('weekday("America/Los_Angeles")', ctx).cost).toBe(1);
    expect(run('month() * 100 + day() + minute()', ctx).cost).toBe(105);
    expect(run('weekday("Pacific/Kiritimati")', context({ now: new Date('2026-01-04T12:00:00Z') })).cost).toBe(1);
  });

  it('refuses what it cannot run when it is saved, naming the position', () => {
    expect(errorOf('p * 2 + q').position).toBe(8);
    expect(errorOf('p * 2 + q').message).toContain('unknown name "q"');
    expect(errorOf('eval("1")').message).toContain('unknown function "eval"');
    expect(errorOf('p / 0').message).toContain('division by zero');
    expect(errorOf('p / (2 - 2)').position).toBe(5);
    expect(errorOf('tier(p, 1)').message).toContain('quoted name');
    expect(errorOf('tier("a")').message).toContain('takes 2 arguments');
    expect(errorOf('hour("Mars/Olympus")').message).toContain('unknown time zone');
    expect(errorOf('(p * 2').message).toContain('expected ")"');
    expect(errorOf('p * ').message).toContain('ends too early');
    expect(errorOf('"open').message).toContain('not closed');
    expect(errorOf('p $ 2').position).toBe(2);
    expect(errorOf('v1:p + x').position).toBe(7);
    expect(errorOf('p; c').position).toBe(1);
  });

  it('bounds size and depth', () => {
    expect(errorOf(`${'('.repeat(40)}p${')'.repeat(40)}`).message).toContain('nested deeper');
    expect(errorOf(Array.from({ length: 300 }, () => 'p').join(' + ')).message).toContain('terms');
    expect(errorOf('p + '.repeat(1200)).message).toContain('longer than');
    expect(errorOf(`${'-'.repeat(40)}p`).message).toContain('nested deeper');
  });

  it('fails at run time on a zero divisor or a cost that is not a non-negative number', () => {
    expect(() => run('p / c', context({}, { p: 1, c: 0 }))).toThrow(ExprError);
    expect(() => run('"text"')).toThrow('does not give a number');
    expect(() => run('p - 10')).toThrow('negative');
    expect(() => run('header("x") * 2')).toThrow('a number is needed');
  });
});
