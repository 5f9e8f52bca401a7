import { describe, expect, it } from 'vitest';
import type { Usage } from '../../relay/types.ts';
import { fakeOptions } from './fake-options.ts';
import { resolvePrice } from './price.ts';
import { isFreePrice, preConsumeQuota, settleQuota, taskCallQuota } from './quota.ts';
import { type ExprRequest, requestField } from './tiered.ts';

// Every expected quota below is worked out by hand from new-api's formula:
// quota = cost in USD × QuotaPerUnit (500,000) × group ratio, the cost being Σ tokens × USD per 1M / 1e6.
const QPU = 500_000;
const SONNET =
  'len <= 200000 ? tier("standard", p * 3 + c * 15 + cr * 0.3) : tier("long_context", p * 6 + c * 22.5 + cr * 0.6)';
const OFF_PEAK = 'tier("base", p * 2 + c * 8) * (hour() >= 22 || hour() < 6 ? 0.5 : 1)';
const FAST =
  'tier("base", p * 1 + c * 4) * (param("service_tier") == "priority" ? 2 : 1) * (has(header("anthropic-beta"), "fast-mode") ? 3 : 1)';

function priceOf(model: string, expression: string, extra: Record<string, unknown> = {}) {
  const options = fakeOptions({
    'billing_setting.billing_mode': { [model]: 'tiered_expr' },
    'billing_setting.billing_expr': { [model]: expression },
    GroupRatio: { default: 1, vip: 0.8 },
    ...extra,
  });
  const maps = {
    ModelRatio: { [model]: 99 },
    ModelPrice: {},
    CompletionRatio: {},
    CacheRatio: {},
    CreateCacheRatio: {},
  };
  const price = resolvePrice({ model, usingGroup: 'vip', userGroup: 'default', maps, options, acceptUnset: false });
  return { price, options };
}

const settle = (model: string, expression: string, usage: Usage, request?: ExprRequest, extra = {}) => {
  const { price, options } = priceOf(model, expression, extra);
  return settleQuota({ price, usage, options, semantics: 'claude', request });
};

describe('expression (tiered_expr) billing', () => {
  it('prices the model by its expression alone, over ratios and per-call prices', () => {
    const { price } = priceOf('claude-sonnet-4', SONNET);
    expect(price.expression?.source).toBe(SONNET);
    expect(price.modelRatio).toBe(0);
    expect(price.perCallUsd).toBeUndefined();
    expect(price.configured).toBe(true);
    expect(isFreePrice(price)).toBe(false);
  });

  it('bills a 250K-token Claude prompt at the >200K tier, to the unit', () => {
    const usage: Usage = { promptTokens: 250_000, completionTokens: 1_234, cachedTokens: 10_000 };
    const { quota, tiered } = settle('claude-sonnet-4', SONNET, usage);
    // long context: (240,000 × $6 + 1,234 × $22.5 + 10,000 × $0.6) / 1M = $1.473765; × 500,000 × 0.8
    const expected = Math.round(((240_000 * 6 + 1_234 * 22.5 + 10_000 * 0.6) / 1e6) * QPU * 0.8);
    expect(expected).toBe(589_506);
    expect(quota).toBe(expected);
    expect(tiered).toMatchObject({ tier: 'long_context', expression: SONNET });
    expect(tiered?.costUsd).toBeCloseTo(1.473765, 12);
  });

  it('keeps the standard tier at 200K even when cache reads make p smaller (len is the whole prompt)', () => {
    const usage: Usage = { promptTokens: 200_000, completionTokens: 100, cachedTokens: 150_000 };
    const { quota, tiered } = settle('claude-sonnet-4', SONNET, usage);
    expect(tiered?.tier).toBe('standard');
    expect(quota).toBe(Math.round(((50_000 * 3 + 100 * 15 + 150_000 * 0.3) / 1e6) * QPU * 0.8));
  });

  it('leaves sub-counts the expression does not price in p and c', () => {
    const usage: Usage = {
      promptTokens: 1000,
      cachedTokens: 200,
      imageInputTokens: 100,
      completionTokens: 500,
      audioOutputTokens: 100,
    };
    expect(settle('m', 'p * 3 + c * 15', usage).quota).toBe(Math.round(((1000 * 3 + 500 * 15) / 1e6) * QPU * 0.8));
    expect(settle('m', 'p * 3 + c * 15 + cr * 0.3 + img * 2 + ao * 50', usage).quota).toBe(
      Math.round(((700 * 3 + 200 * 0.3 + 100 * 2 + 400 * 15 + 100 * 50) / 1e6) * QPU * 0.8),
    );
  });

  it('applies an off-peak multiplier by the clock, in the configured time zone', () => {
    const usage: Usage = { promptTokens: 100_000, completionTokens: 10_000 };
    const full = Math.round(((100_000 * 2 + 10_000 * 8) / 1e6) * QPU * 0.8);
    const at = (iso: string, zone: string) =>
      settle('m', OFF_PEAK, usage, { now: new Date(iso) }, { 'billing_setting.timezone': zone }).quota;
    expect(at('2026-03-02T12:00:00Z', 'UTC')).toBe(full);
    expect(at('2026-03-02T23:30:00Z', 'UTC')).toBe(Math.round(full * 0.5));
    // 23:30 UTC is 07:30 the next morning in Shanghai: peak there.
    expect(at('2026-03-02T23:30:00Z', 'Asia/Shanghai')).toBe(full);
    expect(at('2026-03-02T15:00:00Z', 'Asia/Shanghai')).toBe(Math.round(full * 0.5));
  });

  it('changes the price by a request field and by a header', () => {
    const usage: Usage = { promptTokens: 10_000, completionTokens: 1_000 };
    const base = ((10_000 * 1 + 1_000 * 4) / 1e6) * QPU * 0.8;
    expect(settle('m', FAST, usage, { body: {}, headers: {} }).quota).toBe(Math.round(base));
    expect(settle('m', FAST, usage, { body: { service_tier: 'priority' }, headers: {} }).quota).toBe(
      Math.round(base * 2),
    );
    const beta = { 'anthropic-beta': 'fast-mode-2026-01-01' };
    expect(settle('m', FAST, usage, { body: {}, headers: beta }).quota).toBe(Math.round(base * 3));
    expect(settle('m', FAST, usage, { body: { service_tier: 'priority' }, headers: beta }).quota).toBe(
      Math.round(base * 6),
    );
  });

  it('reserves by the expression over the estimated prompt and the completion budget, rounded up', () => {
    const { price, options } = priceOf('claude-sonnet-4', SONNET);
    const amount = preConsumeQuota({ price, options, promptTokens: 210_001, maxTokens: 333 });
    expect(amount).toBe(Math.ceil(((210_001 * 6 + 333 * 22.5) / 1e6) * QPU * 0.8));
  });

  it('bills the estimate when the real usage makes the expression fail, and says so', () => {
    const { price, options } = priceOf('m', 'p * 2 / c * 100');
    const usage: Usage = { promptTokens: 50, completionTokens: 0 };
    const estimate = { promptEstimate: 40, maxTokens: 10 };
    const settled = settleQuota({ price, usage, options, semantics: 'openai', estimate });
    expect(settled.quota).toBe(Math.round(((40 * 2) / 10) * 100 * 1e-6 * QPU * 0.8));
    expect(settled.tiered?.fellBackToEstimate).toBe(true);
    expect(() => settleQuota({ price, usage, options, semantics: 'openai' })).toThrow('division by zero');
  });

  it('adds tool surcharges and never bills a priced request at nothing', () => {
    const usage: Usage = { promptTokens: 1, completionTokens: 0, webSearchCalls: 2 };
    const { quota } = settle('m', 'p * 0.01', usage);
    expect(quota).toBe(Math.round((0.01 / 1e6) * QPU * 0.8 + (2 / 1000) * 10 * 0.8 * QPU));
    expect(settle('m', 'p * 0.01', { promptTokens: 1, completionTokens: 0 }).quota).toBe(1);
  });

  it('reads body fields by dotted path, list indexes and lengths', () => {
    const body = { messages: [{ role: 'system' }, { role: 'user' }], stream_options: { fast_mode: true } };
    expect(requestField(body, 'messages.1.role')).toBe('user');
    expect(requestField(body, 'messages.#')).toBe(2);
    expect(requestField(body, 'stream_options.fast_mode')).toBe(true);
    expect(requestField(body, 'messages.5.role')).toBeUndefined();
    expect(requestField(body, 'toString')).toBeUndefined();
    const form = new FormData();
    form.set('quality', 'hd');
    expect(requestField(form, 'quality')).toBe('hd');
  });

  it('prices a task by the expression per request part', () => {
    const { price, options } = priceOf('suno_music', 'tier("request", fixed(0.12))');
    expect(taskCallQuota(price, options)).toBe(Math.round(0.12 * QPU * 0.8));
  });

  it('falls back to ratio pricing when the mode is not tiered_expr or no expression is set', () => {
    const options = fakeOptions({
      'billing_setting.billing_mode': { a: 'tiered_expr', b: 'ratio' },
      'billing_setting.billing_expr': { b: 'p * 100' },
    });
    const maps = {
      ModelRatio: { a: 2, b: 3 },
      ModelPrice: {},
      CompletionRatio: {},
      CacheRatio: {},
      CreateCacheRatio: {},
    };
    for (const model of ['a', 'b']) {
      const price = resolvePrice({
        model,
        usingGroup: 'default',
        userGroup: 'default',
        maps,
        options,
        acceptUnset: false,
      });
      expect(price.expression).toBeUndefined();
    }
  });
});
