import { describe, expect, it } from 'vitest';
import { fakeOptions } from '../../domain/billing/fake-options.ts';
import type { ModelPrice } from '../types.ts';
import { completionBudget, defaultCompletionTokens } from './budget.ts';

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
    expect(completionBudget('openai-chat', 'gpt-4o', price, noMax, options)).toEqual({
      tokens: 300,
      quota: 3_000,
      quotaPerToken: 10,
    });
    // Rounded up: 3 × 0.35 = 1.05 holds 2; 10 × 0.3 holds 3.
    const cheap = { ...price, modelRatio: 0.35, completionRatio: 1, groupRatio: 1 };
    const three = fakeOptions({ 'quota_setting.default_completion_tokens': { default: 3, ten: 10 } });
    expect(completionBudget('openai-chat', 'm', cheap, noMax, three)?.quota).toBe(2);
    expect(completionBudget('openai-chat', 'ten', { ...cheap, modelRatio: 0.3 }, noMax, three)?.quota).toBe(3);
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
