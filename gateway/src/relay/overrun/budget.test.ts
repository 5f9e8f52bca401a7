import { describe, expect, it } from 'vitest';
import { fakeOptions } from '../../domain/billing/fake-options.ts';
import type { ModelPrice } from '../types.ts';
import { completionBudget, completionQuota, defaultCompletionTokens } from './budget.ts';

const price: ModelPrice = {
  modelRatio: 1.25,
  completionRatio: 4,
  cacheRatio: 1,
  cacheCreationRatio: 1.25,
  imageRatio: 1,
  audioRatio: 1,
  audioCompletionRatio: 1,
  groupRatio: 2,
  configured: true,
};
const options = fakeOptions({ 'quota_setting.default_completion_tokens': { default: 1_000, 'gpt-4o': 300, off: 0 } });
const noMax = { promptEstimate: 10, maxTokens: 0 };

describe('the completion budget of a request without max_tokens', () => {
  it('is the model’s entry, else the default, at the completion price', () => {
    expect(defaultCompletionTokens(options, 'gpt-4o')).toBe(300);
    expect(defaultCompletionTokens(options, 'other')).toBe(1_000);
    const budget = completionBudget('openai-chat', 'gpt-4o', price, noMax, options);
    expect(budget).toEqual({ tokens: 300, quotaPerToken: 10 });
    expect(completionQuota(budget!)).toBe(3_000);
    expect(completionQuota({ tokens: 3, quotaPerToken: 0.35 })).toBe(2);
    expect(completionQuota({ tokens: 10, quotaPerToken: 0.3 })).toBe(3);
  });

  it('is none when the request sets max_tokens, generates no text, pays per call, is free or the model has 0', () => {
    expect(completionBudget('openai-chat', 'gpt-4o', price, { ...noMax, maxTokens: 50 }, options)).toBeUndefined();
    expect(completionBudget('openai-embeddings', 'gpt-4o', price, noMax, options)).toBeUndefined();
    expect(completionBudget('openai-chat', 'gpt-4o', { ...price, perCallUsd: 0.1 }, noMax, options)).toBeUndefined();
    expect(completionBudget('claude-messages', 'gpt-4o', { ...price, groupRatio: 0 }, noMax, options)).toBeUndefined();
    expect(completionBudget('gemini-generate', 'off', price, noMax, options)).toBeUndefined();
    expect(defaultCompletionTokens(fakeOptions({ 'quota_setting.default_completion_tokens': 'x' }), 'm')).toBe(0);
  });
});
