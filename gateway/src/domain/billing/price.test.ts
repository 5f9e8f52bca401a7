import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.ts';
import { findOptionDefinition, type OptionsService } from '../options/index.ts';
import type { PriceMaps } from '../pricing/service.ts';
import { FAKE_OPTION_KEYS, fakeOptions } from './fake-options.ts';
import type { BillingOptions } from './options.ts';
import { COMPACTION_PRICE_SUFFIX, compactionPriceModel, resolveGroupRatio, resolvePrice } from './price.ts';

// Compile-time: the real OptionsService can be passed wherever billing wants its options.
const _structural: (service: OptionsService) => BillingOptions = (service) => service;

const maps = (overrides: Partial<PriceMaps> = {}): PriceMaps => ({
  ModelRatio: { 'gpt-4o': 1.25, 'claude-sonnet-4': 1.5, 'dall-e-3': 7 },
  CompletionRatio: { 'gpt-4o': 4, 'claude-sonnet-4': 5 },
  ModelPrice: { 'dall-e-3': 0.04 },
  CacheRatio: { 'gpt-4o': 0.5, 'claude-sonnet-4': 0.1 },
  CreateCacheRatio: { 'claude-sonnet-4': 1.3 },
  ...overrides,
});

const input = (model: string, extra: Partial<Parameters<typeof resolvePrice>[0]> = {}) => ({
  model,
  usingGroup: 'default',
  userGroup: 'default',
  maps: maps(),
  options: fakeOptions(),
  acceptUnset: false,
  ...extra,
});

describe('resolvePrice', () => {
  it('reads every ratio of a priced model from the maps', () => {
    const price = resolvePrice(
      input('gpt-4o', {
        options: fakeOptions({
          ImageRatio: { 'gpt-4o': 2 },
          AudioRatio: { 'gpt-4o': 16 },
          AudioCompletionRatio: { 'gpt-4o': 2.5 },
        }),
      }),
    );
    expect(price).toEqual({
      modelRatio: 1.25,
      completionRatio: 4,
      cacheRatio: 0.5,
      cacheCreationRatio: 1.25,
      imageRatio: 2,
      audioRatio: 16,
      audioCompletionRatio: 2.5,
      groupRatio: 1,
      configured: true,
    });
    expect(price.perCallUsd).toBeUndefined();
  });

  it('defaults what a model leaves unset: completion 1, cache 1, cache write 1.25, image and audio 1', () => {
    const price = resolvePrice(input('ratio-only', { maps: maps({ ModelRatio: { 'ratio-only': 3 } }) }));
    expect(price).toMatchObject({
      modelRatio: 3,
      completionRatio: 1,
      cacheRatio: 1,
      cacheCreationRatio: 1.25,
      imageRatio: 1,
      audioRatio: 1,
      audioCompletionRatio: 1,
      configured: true,
    });
  });

  it('uses a configured cache-write ratio', () => {
    expect(resolvePrice(input('claude-sonnet-4')).cacheCreationRatio).toBe(1.3);
  });

  it('prefers a fixed per-call price over a ratio', () => {
    const price = resolvePrice(input('dall-e-3'));
    expect(price.perCallUsd).toBe(0.04);
    expect(price.configured).toBe(true);
  });

  it('treats a per-call price without a ratio as configured, with ratio 0 rather than the unset default', () => {
    const price = resolvePrice(input('mj_imagine', { maps: maps({ ModelPrice: { mj_imagine: 0.1 } }) }));
    expect(price.perCallUsd).toBe(0.1);
    expect(price.modelRatio).toBe(0);
    expect(price.configured).toBe(true);
  });

  it('keeps a per-call price of 0 (a free model), not "unset"', () => {
    const price = resolvePrice(input('free-img', { maps: maps({ ModelPrice: { 'free-img': 0 } }) }));
    expect(price.perCallUsd).toBe(0);
  });

  it('refuses a model with neither price nor ratio, naming it, with status 400', () => {
    let caught: unknown;
    try {
      resolvePrice(input('mystery-model'));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AppError);
    const error = caught as AppError;
    expect(error.code).toBe('MODEL_PRICE_NOT_CONFIGURED');
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      'The price of model mystery-model is not configured; ask an administrator to set it or enable self-use mode',
    );
    expect(error.localized('zh')).toContain('模型 mystery-model 的价格未配置');
  });

  it('accepts an unpriced model at ratio 37.5 in self-use mode', () => {
    const price = resolvePrice(input('mystery-model', { options: fakeOptions({ SelfUseModeEnabled: true }) }));
    expect(price.modelRatio).toBe(37.5);
    expect(price.configured).toBe(false);
    expect(price.completionRatio).toBe(1);
  });

  it('accepts an unpriced model at ratio 37.5 when the user accepts unset models', () => {
    const price = resolvePrice(input('mystery-model', { acceptUnset: true }));
    expect(price.modelRatio).toBe(37.5);
    expect(price.configured).toBe(false);
  });

  it('ignores map entries that are not numbers', () => {
    const broken = maps({ ModelRatio: { odd: 'x' as unknown as number } });
    expect(() => resolvePrice(input('odd', { maps: broken }))).toThrow(AppError);
  });
});

describe('compactionPriceModel', () => {
  it('prices a compaction under <model>-openai-compact when that name has a ratio or a price', () => {
    expect(COMPACTION_PRICE_SUFFIX).toBe('-openai-compact');
    expect(compactionPriceModel('gpt-4o', maps({ ModelRatio: { 'gpt-4o-openai-compact': 0.5 } }))).toBe(
      'gpt-4o-openai-compact',
    );
    expect(compactionPriceModel('gpt-4o', maps({ ModelPrice: { 'gpt-4o-openai-compact': 0.01 } }))).toBe(
      'gpt-4o-openai-compact',
    );
  });

  it('prices it as the model itself otherwise', () => {
    expect(compactionPriceModel('gpt-4o', maps())).toBe('gpt-4o');
    expect(compactionPriceModel('gpt-4o', maps({ CompletionRatio: { 'gpt-4o-openai-compact': 2 } }))).toBe('gpt-4o');
  });
});

describe('group ratio', () => {
  const options = fakeOptions({
    GroupRatio: { default: 1, vip: 0.8, svip: 0.5 },
    GroupGroupRatio: { vip: { default: 0.9 }, svip: {} },
  });

  it('takes GroupRatio of the using group', () => {
    expect(resolveGroupRatio(options, 'default', 'vip')).toEqual({ groupRatio: 0.8 });
    expect(resolvePrice(input('gpt-4o', { options, usingGroup: 'svip' })).groupRatio).toBe(0.5);
  });

  it('is 1 for a group GroupRatio does not list', () => {
    expect(resolveGroupRatio(options, 'default', 'nowhere')).toEqual({ groupRatio: 1 });
  });

  it('lets GroupGroupRatio[userGroup][usingGroup] win, reporting it as the user group ratio', () => {
    expect(resolveGroupRatio(options, 'vip', 'default')).toEqual({ groupRatio: 0.9, userGroupRatio: 0.9 });
    const price = resolvePrice(input('gpt-4o', { options, userGroup: 'vip', usingGroup: 'default' }));
    expect(price.groupRatio).toBe(0.9);
    expect(price.userGroupRatio).toBe(0.9);
  });

  it('applies GroupGroupRatio only to its own user group and using group', () => {
    // vip's special ratio is for the default group; in vip it pays GroupRatio.vip.
    expect(resolveGroupRatio(options, 'vip', 'vip')).toEqual({ groupRatio: 0.8 });
    // Another user group in the default group pays GroupRatio.default.
    expect(resolveGroupRatio(options, 'svip', 'default')).toEqual({ groupRatio: 1 });
    expect(resolvePrice(input('gpt-4o', { options })).userGroupRatio).toBeUndefined();
  });
});

describe('fakeOptions', () => {
  it('holds only keys the real options define', () => {
    for (const key of FAKE_OPTION_KEYS) expect(findOptionDefinition(key), key).toBeDefined();
  });
});
