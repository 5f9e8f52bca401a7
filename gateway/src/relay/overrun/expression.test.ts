import { describe, expect, it } from 'vitest';
import { compileExpression } from '../../domain/billing/expr/index.ts';
import { fakeOptions } from '../../domain/billing/fake-options.ts';
import { preConsumeQuota, settleQuota } from '../../domain/billing/index.ts';
import type { ModelPrice, Usage } from '../types.ts';
import { completionBudget } from './budget.ts';
import { deliveredCost } from './cost.ts';

// QuotaPerUnit 500,000: an expression's cost of N (USD per 1M × tokens) is N / 2 quota at group ratio 1.
const options = fakeOptions({ 'quota_setting.default_completion_tokens': { default: 200 } });
/** Completion at 4 up to 100 tokens, then the whole completion at 8: the price changes at a completion size. */
const TIERED = 'c <= 100 ? tier("short", p * 2 + c * 4) : tier("long", p * 2 + c * 8)';
/** Half price from 22:00 to 06:00 UTC. */
const NIGHT = 'tier("base", p * 2 + c * 8) * (hour() >= 22 || hour() < 6 ? 0.5 : 1)';
/** Cheaper long answers: not monotone in c. */
const FALLING = 'c <= 100 ? p * 2 + c * 8 : p * 2 + c * 2';

const priced = (source: string, groupRatio = 1): ModelPrice => ({
  modelRatio: 0,
  completionRatio: 1,
  cacheRatio: 1,
  cacheCreationRatio: 1.25,
  imageRatio: 1,
  audioRatio: 1,
  audioCompletionRatio: 1,
  groupRatio,
  configured: true,
  expression: compileExpression(source),
});
const noMax = { promptEstimate: 10, maxTokens: 0 };
const noon = { now: new Date('2026-11-26T12:00:00Z') };
const night = { now: new Date('2026-11-26T23:00:00Z') };
const usage = (completionTokens: number): Usage => ({ promptTokens: 10, completionTokens });

describe('the completion budget of an expression-priced model', () => {
  it('is cost(p, budget) − cost(p, 0), rounded up, at the tier the budget reaches', () => {
    // cost(10, 200) = 20 + 200 × 8 = 1,620 → 810 quota; cost(10, 0) = 20 → 10: the budget is 800.
    const budget = completionBudget('openai-chat', 'm', priced(TIERED), noMax, options, noon);
    expect(budget).toMatchObject({ tokens: 200, quota: 800 });
    expect(budget!.quotaPerToken).toBeCloseTo(4, 9);
    // With the prompt's reservation it holds what max_tokens = 200 would.
    const reserve = (maxTokens: number) =>
      preConsumeQuota({ price: priced(TIERED), promptTokens: 10, maxTokens, options, request: noon });
    expect(reserve(0) + budget!.quota).toBe(reserve(200));
    // Group ratio 0.3: 1,600 / 2 × 0.3 = 240; 1,597 / 2 × 0.3 = 239.55 rounds up to 240.
    expect(completionBudget('openai-chat', 'm', priced(TIERED, 0.3), noMax, options, noon)?.quota).toBe(240);
    const odd = priced('p * 2 + c * 7.985');
    expect(completionBudget('openai-chat', 'm', { ...odd, groupRatio: 0.3 }, noMax, options, noon)?.quota).toBe(240);
  });

  it('reads the reservation’s clock: half at night', () => {
    expect(completionBudget('claude-messages', 'm', priced(NIGHT), noMax, options, noon)?.quota).toBe(800);
    expect(completionBudget('claude-messages', 'm', priced(NIGHT), noMax, options, night)?.quota).toBe(400);
  });

  it('is the most the completion reaches when the expression falls with c, none when c is free', () => {
    // cost(10, 100) − cost(10, 0) = 800 → 400, above cost(10, 200) − cost(10, 0) = 400 → 200.
    expect(completionBudget('openai-chat', 'm', priced(FALLING), noMax, options, noon)?.quota).toBe(400);
    expect(completionBudget('openai-chat', 'm', priced('p * 3'), noMax, options, noon)).toBeUndefined();
    expect(
      completionBudget('openai-chat', 'm', priced(TIERED), { ...noMax, maxTokens: 50 }, options, noon),
    ).toBeUndefined();
  });
});

describe('the delivered cost of an expression-priced stream', () => {
  const follow = (source: string, request = noon) => {
    const price = priced(source);
    const budget = completionBudget('openai-chat', 'm', price, noMax, options, request)!;
    return deliveredCost({ price, options, model: 'm', request, budget });
  };

  it('is the bill if the stream ended now, by the reservation’s clock whatever the wall clock says', () => {
    // cost(10, 50) = 20 + 400 = 420 → 210; at night 105.
    expect(follow(NIGHT).quota(usage(50))).toBe(210);
    expect(follow(NIGHT, night).quota(usage(50))).toBe(105);
    const bill = settleQuota({ price: priced(TIERED), usage: usage(150), options, semantics: 'openai', request: noon });
    // cost(10, 150) = 20 + 1,200 → 610.
    expect(follow(TIERED).quota(usage(150))).toBe(610);
    expect(bill.quota).toBe(610);
  });

  it('never falls: an expression cheaper for long answers keeps the highest bill seen', () => {
    const cost = follow(FALLING);
    // cost(10, 100) = 820 → 410; cost(10, 150) = 320 → 160.
    expect(cost.quota(usage(100))).toBe(410);
    expect(cost.quota(usage(150))).toBe(410);
  });

  it('prices the next tokens by the steepest climb ahead: a tier change close ahead checks sooner', () => {
    const cost = follow(TIERED);
    // At 90 the tier changes 11 tokens on: 12 more cost (20 + 102 × 8) − (20 + 90 × 4) = 456 → 228, 19 a token.
    expect(cost.quotaPerToken(usage(90))).toBeCloseTo(19, 9);
    // Well past it, 8 a token (4 quota).
    expect(cost.quotaPerToken(usage(300))).toBeCloseTo(4, 9);
    // Never below the budget's own rate (4), though past 100 a token costs 2 (1 quota).
    expect(follow(FALLING).quotaPerToken(usage(150))).toBeCloseTo(4, 9);
  });
});
