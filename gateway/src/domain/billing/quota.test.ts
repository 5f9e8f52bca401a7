import { describe, expect, it } from 'vitest';
import type { ModelPrice } from '../../relay/types.ts';
import { buildConsumeOther, type ConsumeOtherInput } from '../usage/other.ts';
import { fakeOptions } from './fake-options.ts';
import { imagePriceMultiplier } from './image-price.ts';
import { resolvePrice } from './price.ts';
import { preConsumeQuota, quotaToUsd, settleQuota, taskCallQuota } from './quota.ts';
import { toolPriceUsd } from './tool-price.ts';

// Every expected quota below is worked out from the formula of reference §5.4 in the test itself,
// with QuotaPerUnit = 500000 and PreConsumedQuota = 500 (fakeOptions).
const options = fakeOptions();

const ratioPrice = (overrides: Partial<ModelPrice> = {}): ModelPrice => ({
  modelRatio: 1,
  completionRatio: 1,
  cacheRatio: 1,
  cacheCreationRatio: 1.25,
  imageRatio: 1,
  audioRatio: 1,
  audioCompletionRatio: 1,
  groupRatio: 1,
  configured: true,
  ...overrides,
});

/** The consume log's `other` for a bill: billing fields must explain the quota charged. */
const logOther = (price: ModelPrice, usage: ConsumeOtherInput['usage'], extra: Partial<ConsumeOtherInput> = {}) =>
  buildConsumeOther({
    price,
    usage,
    firstResponseMs: 0,
    requestedModel: 'm',
    upstreamModel: 'm',
    usedChannels: [1],
    ...extra,
  });

describe('settleQuota, ratio mode', () => {
  it('bills prompt and completion at the model ratio', () => {
    const price = ratioPrice({ modelRatio: 2.5 });
    const usage = { promptTokens: 1000, completionTokens: 500 };
    const { quota, surcharges } = settleQuota({ price, usage, options, semantics: 'openai' });
    // (1000 + 500 × 1) × 2.5 × 1
    expect(quota).toBe(3750);
    expect(surcharges).toEqual({});
    expect(logOther(price, usage)).toMatchObject({
      model_ratio: 2.5,
      group_ratio: 1,
      completion_ratio: 1,
      cache_tokens: 0,
      cache_ratio: 1,
      model_price: -1,
      user_group_ratio: -1,
    });
  });

  it('multiplies completion tokens by the completion ratio', () => {
    const { quota } = settleQuota({
      price: ratioPrice({ modelRatio: 1.25, completionRatio: 4 }),
      usage: { promptTokens: 1200, completionTokens: 300 },
      options,
      semantics: 'openai',
    });
    // (1200 + 300 × 4) × 1.25 = 2400 × 1.25
    expect(quota).toBe(3000);
  });

  it('bills cached prompt tokens at the cache ratio', () => {
    const price = ratioPrice({ modelRatio: 1.25, completionRatio: 4, cacheRatio: 0.5 });
    const usage = { promptTokens: 2000, cachedTokens: 1500, completionTokens: 100 };
    const { quota } = settleQuota({ price, usage, options, semantics: 'openai' });
    const other = logOther(price, usage);
    // ((2000 − 1500) + 1500 × 0.5 + 100 × 4) × 1.25 = (500 + 750 + 400) × 1.25 = 2062.5 → 2063
    expect(quota).toBe(2063);
    expect(other).toMatchObject({ cache_tokens: 1500, cache_ratio: 0.5 });
    expect(other.cache_creation_tokens).toBeUndefined();
  });

  it('bills Claude cache writes, 5-minute at the write ratio and 1-hour at 1.6 × it', () => {
    // Claude reported input_tokens 100, cache_read 2000, cache_creation 1000 (400 of them 1h);
    // the adaptor normalised promptTokens to every input token: 100 + 2000 + 1000.
    const usage = {
      promptTokens: 3100,
      cachedTokens: 2000,
      cacheCreationTokens: 1000,
      cacheCreation1hTokens: 400,
      completionTokens: 200,
    };
    const price = ratioPrice({ modelRatio: 1.5, completionRatio: 5, cacheRatio: 0.1, cacheCreationRatio: 1.25 });
    const { quota } = settleQuota({ price, usage, options, semantics: 'claude' });
    const other = logOther(price, usage, { claudeUsage: true });
    // prompt: 100 + 2000 × 0.1 + 600 × 1.25 + 400 × 1.25 × 1.6 = 100 + 200 + 750 + 800 = 1850
    // completion: 200 × 5 = 1000;  (1850 + 1000) × 1.5 = 4275
    expect(quota).toBe(4275);
    expect(other).toMatchObject({
      usage_semantic: 'anthropic',
      input_tokens_total: 3100,
      cache_tokens: 2000,
      cache_ratio: 0.1,
      cache_creation_tokens: 1000,
      cache_creation_ratio: 1.25,
      cache_creation_tokens_5m: 600,
      cache_creation_ratio_5m: 1.25,
      cache_creation_tokens_1h: 400,
      cache_creation_ratio_1h: 2,
    });
    // Same normalised usage, same bill: semantics only shapes the log.
    expect(settleQuota({ price, usage, options, semantics: 'openai' }).quota).toBe(4275);
  });

  it('bills cache writes without a 1-hour part entirely at the write ratio', () => {
    const price = ratioPrice({ modelRatio: 2, cacheCreationRatio: 1.25 });
    const usage = { promptTokens: 1000, cacheCreationTokens: 800, completionTokens: 0 };
    const { quota } = settleQuota({ price, usage, options, semantics: 'openai' });
    const other = logOther(price, usage);
    // (200 + 800 × 1.25) × 2 = 1200 × 2
    expect(quota).toBe(2400);
    expect(other.cache_creation_tokens_1h).toBeUndefined();
  });

  it('bills audio input and output at the audio ratios', () => {
    const price = ratioPrice({ modelRatio: 1.25, completionRatio: 4, audioRatio: 16, audioCompletionRatio: 2 });
    const usage = { promptTokens: 1000, audioInputTokens: 600, completionTokens: 500, audioOutputTokens: 300 };
    const { quota } = settleQuota({ price, usage, options, semantics: 'openai' });
    const other = logOther(price, usage);
    // prompt: 400 + 600 × 16 = 10000; completion: 200 × 4 + 300 × 16 × 2 = 800 + 9600 = 10400
    // (10000 + 10400) × 1.25 = 25500
    expect(quota).toBe(25500);
    expect(other).toMatchObject({
      audio: true,
      audio_input: 600,
      audio_output: 300,
      text_input: 400,
      text_output: 200,
      audio_ratio: 16,
      audio_completion_ratio: 2,
    });
  });

  it('bills image input tokens at the image ratio', () => {
    const price = ratioPrice({ modelRatio: 2.5, completionRatio: 8, imageRatio: 2 });
    const usage = { promptTokens: 1000, imageInputTokens: 800, completionTokens: 100 };
    const { quota } = settleQuota({ price, usage, options, semantics: 'openai' });
    const other = logOther(price, usage);
    // (200 + 800 × 2 + 100 × 8) × 2.5 = 2600 × 2.5
    expect(quota).toBe(6500);
    expect(other).toMatchObject({ image: true, image_ratio: 2, image_output: 800 });
  });

  it('multiplies by the group ratio', () => {
    const price = ratioPrice({ modelRatio: 2.5, groupRatio: 0.8 });
    const usage = { promptTokens: 1000, completionTokens: 500 };
    const { quota } = settleQuota({ price, usage, options, semantics: 'openai' });
    // (1000 + 500) × 2.5 × 0.8
    expect(quota).toBe(3000);
    expect(logOther(price, usage).group_ratio).toBe(0.8);
  });

  it('bills with the group-group ratio when the user group has one for the using group', () => {
    const opts = fakeOptions({ GroupRatio: { default: 1 }, GroupGroupRatio: { vip: { default: 0.5 } } });
    const price = resolvePrice({
      model: 'm',
      usingGroup: 'default',
      userGroup: 'vip',
      maps: { ModelRatio: { m: 2 }, CompletionRatio: { m: 3 }, ModelPrice: {}, CacheRatio: {}, CreateCacheRatio: {} },
      options: opts,
      acceptUnset: false,
    });
    const usage = { promptTokens: 1000, completionTokens: 100 };
    const { quota } = settleQuota({ price, usage, options: opts, semantics: 'openai' });
    // (1000 + 100 × 3) × 2 × 0.5
    expect(quota).toBe(1300);
    expect(logOther(price, usage)).toMatchObject({ group_ratio: 0.5, user_group_ratio: 0.5 });
  });

  it('rounds half up and agrees with exact decimal arithmetic', () => {
    const half = settleQuota({
      price: ratioPrice({ modelRatio: 0.075 }),
      usage: { promptTokens: 1100, completionTokens: 0 },
      options,
      semantics: 'openai',
    });
    // 1100 × 0.075 = 82.5 → 83
    expect(half.quota).toBe(83);
    const noisy = settleQuota({
      price: ratioPrice({ modelRatio: 0.7 }),
      usage: { promptTokens: 45, completionTokens: 0 },
      options,
      semantics: 'openai',
    });
    // 45 × 0.7 = 31.5 exactly (31.499999999999996 in binary floating point) → 32
    expect(noisy.quota).toBe(32);
    const down = settleQuota({
      price: ratioPrice({ modelRatio: 0.075 }),
      usage: { promptTokens: 1000, completionTokens: 0 },
      options,
      semantics: 'openai',
    });
    // 1000 × 0.075 = 75
    expect(down.quota).toBe(75);
  });

  it('charges at least 1 when tokens were used at a non-zero ratio', () => {
    const { quota } = settleQuota({
      price: ratioPrice({ modelRatio: 0.0001 }),
      usage: { promptTokens: 10, completionTokens: 0 },
      options,
      semantics: 'openai',
    });
    // 10 × 0.0001 = 0.001 → rounds to 0 → raised to 1
    expect(quota).toBe(1);
  });

  it('charges nothing when the upstream reports no tokens', () => {
    const { quota } = settleQuota({
      price: ratioPrice({ modelRatio: 2.5 }),
      usage: { promptTokens: 0, completionTokens: 0 },
      options,
      semantics: 'openai',
    });
    expect(quota).toBe(0);
  });

  it('charges nothing for a free model or a free group', () => {
    const usage = { promptTokens: 1000, completionTokens: 1000 };
    expect(settleQuota({ price: ratioPrice({ modelRatio: 0 }), usage, options, semantics: 'openai' }).quota).toBe(0);
    expect(settleQuota({ price: ratioPrice({ groupRatio: 0 }), usage, options, semantics: 'openai' }).quota).toBe(0);
  });

  it('never bills a negative base when the usage subsets exceed the prompt', () => {
    const { quota } = settleQuota({
      price: ratioPrice({ modelRatio: 1, cacheRatio: 0.5 }),
      usage: { promptTokens: 100, cachedTokens: 300, completionTokens: 0 },
      options,
      semantics: 'openai',
    });
    // base max(0, 100 − 300) = 0; 300 × 0.5 = 150
    expect(quota).toBe(150);
  });
});

describe('settleQuota, tool surcharges', () => {
  it('adds web search at the model-prefix price and file search, per 1,000 calls, × group ratio × QuotaPerUnit', () => {
    const price = ratioPrice({ modelRatio: 0.075, completionRatio: 4, groupRatio: 0.5 });
    const usage = { promptTokens: 1000, completionTokens: 100, webSearchCalls: 3, fileSearchCalls: 2 };
    const { quota, surcharges } = settleQuota({ price, usage, options, semantics: 'openai', model: 'gpt-4o-mini' });
    const other = logOther(price, usage, { surcharges });
    // tokens: (1000 + 100 × 4) × 0.075 × 0.5 = 52.5
    // web_search_preview:gpt-4o* = $25/1K: 3 / 1000 × 25 × 0.5 × 500000 = 18750
    // file_search = $2.5/1K: 2 / 1000 × 2.5 × 0.5 × 500000 = 1250
    // 52.5 + 18750 + 1250 = 20052.5 → 20053
    expect(quota).toBe(20053);
    expect(other).toMatchObject({
      web_search: true,
      web_search_call_count: 3,
      web_search_price: 25,
      file_search: true,
      file_search_call_count: 2,
      file_search_price: 2.5,
    });
  });

  it('prices web search by the key of the protocol: web_search for Claude, web_search_preview for OpenAI', () => {
    const opts = fakeOptions({ 'tool_price_setting.prices': { web_search: 10, web_search_preview: 30 } });
    const settle = (semantics: 'openai' | 'claude') =>
      settleQuota({
        price: ratioPrice({ modelRatio: 1.5 }),
        usage: { promptTokens: 100, completionTokens: 0, webSearchCalls: 5 },
        options: opts,
        semantics,
        model: 'claude-sonnet-4',
      }).quota;
    // 100 × 1.5 + 5 / 1000 × 10 × 1 × 500000 = 150 + 25000
    expect(settle('claude')).toBe(25150);
    // 100 × 1.5 + 5 / 1000 × 30 × 1 × 500000 = 150 + 75000
    expect(settle('openai')).toBe(75150);
  });

  it('looks tool prices up by exact model, then the longest prefix, then the tool', () => {
    const opts = fakeOptions({
      'tool_price_setting.prices': { t: 1, 't:gpt-*': 2, 't:gpt-4o*': 3, 't:gpt-4o-mini': 4 } as never,
    });
    const price = (model: string) => toolPriceUsd(opts, 't' as never, model);
    expect(price('gpt-4o-mini')).toBe(4);
    expect(price('gpt-4o-2024')).toBe(3);
    expect(price('gpt-5')).toBe(2);
    expect(price('claude')).toBe(1);
    expect(toolPriceUsd(opts, 'file_search', 'x')).toBe(0);
  });
});

describe('settleQuota, price mode', () => {
  const perCall = ratioPrice({ perCallUsd: 0.04, modelRatio: 0 });

  it('bills the per-call price × QuotaPerUnit × group ratio', () => {
    const price = { ...perCall, groupRatio: 0.8 };
    const usage = { promptTokens: 20, completionTokens: 0 };
    const { quota } = settleQuota({ price, usage, options, semantics: 'openai' });
    // 0.04 × 500000 × 0.8
    expect(quota).toBe(16000);
    expect(logOther(price, usage).model_price).toBe(0.04);
  });

  it('bills a successful call even when no tokens were reported', () => {
    const { quota } = settleQuota({
      price: perCall,
      usage: { promptTokens: 0, completionTokens: 0 },
      options,
      semantics: 'openai',
    });
    // 0.04 × 500000
    expect(quota).toBe(20000);
  });

  it('multiplies by the image count and the size/quality multiplier', () => {
    const { quota } = settleQuota({
      price: perCall,
      usage: { promptTokens: 0, completionTokens: 0 },
      options,
      semantics: 'openai',
      n: 2,
      priceMultiplier: imagePriceMultiplier('dall-e-3', '1792x1024', 'hd'),
    });
    // 0.04 × 500000 × 2 images × (size 2 × hd 1.5)
    expect(quota).toBe(120000);
  });

  it('bills a free per-call model nothing', () => {
    const { quota } = settleQuota({
      price: { ...perCall, perCallUsd: 0 },
      usage: { promptTokens: 100, completionTokens: 100 },
      options,
      semantics: 'openai',
    });
    expect(quota).toBe(0);
  });
});

describe('preConsumeQuota', () => {
  it('reserves at least PreConsumedQuota prompt tokens plus max_tokens', () => {
    const price = ratioPrice({ modelRatio: 1.25, completionRatio: 4 });
    // (max(100, 500) + 1000) × 1.25
    expect(preConsumeQuota({ price, promptTokens: 100, maxTokens: 1000, options })).toBe(1875);
    // (max(800, 500) + 1000) × 1.25
    expect(preConsumeQuota({ price, promptTokens: 800, maxTokens: 1000, options })).toBe(2250);
    // max(100, 500) × 1.25 without max_tokens
    expect(preConsumeQuota({ price, promptTokens: 100, options })).toBe(625);
  });

  it('follows PreConsumedQuota and the group ratio', () => {
    const price = ratioPrice({ modelRatio: 2, groupRatio: 0.5 });
    // (max(300, 0) + 200) × 2 × 0.5
    expect(
      preConsumeQuota({ price, promptTokens: 300, maxTokens: 200, options: fakeOptions({ PreConsumedQuota: 0 }) }),
    ).toBe(500);
    // (max(300, 2000) + 200) × 2 × 0.5
    expect(
      preConsumeQuota({ price, promptTokens: 300, maxTokens: 200, options: fakeOptions({ PreConsumedQuota: 2000 }) }),
    ).toBe(2200);
  });

  it('rounds up, exactly', () => {
    // 500 × 0.075 = 37.5 → 38
    expect(preConsumeQuota({ price: ratioPrice({ modelRatio: 0.075 }), promptTokens: 10, options })).toBe(38);
    // 100 × 0.07 = 7 exactly (7.000000000000001 in floating point) → 7, not 8
    const opts = fakeOptions({ PreConsumedQuota: 100 });
    expect(preConsumeQuota({ price: ratioPrice({ modelRatio: 0.07 }), promptTokens: 0, options: opts })).toBe(7);
  });

  it('reserves the per-call price in price mode', () => {
    const price = ratioPrice({ perCallUsd: 0.04, groupRatio: 0.5 });
    // 0.04 × 500000 × 0.5
    expect(preConsumeQuota({ price, promptTokens: 5000, maxTokens: 5000, options })).toBe(10000);
    // × 3 images
    expect(preConsumeQuota({ price, promptTokens: 0, options, n: 3 })).toBe(30000);
    // × 3 images × size 0.45
    expect(preConsumeQuota({ price, promptTokens: 0, options, n: 3, priceMultiplier: 0.45 })).toBe(13500);
  });

  it('reserves nothing for a free model or group', () => {
    expect(preConsumeQuota({ price: ratioPrice({ modelRatio: 0 }), promptTokens: 100, maxTokens: 10, options })).toBe(
      0,
    );
    expect(preConsumeQuota({ price: ratioPrice({ groupRatio: 0 }), promptTokens: 100, maxTokens: 10, options })).toBe(
      0,
    );
  });
});

describe('imagePriceMultiplier', () => {
  it('follows the DALL·E size and quality table', () => {
    expect(imagePriceMultiplier('dall-e-2', '256x256')).toBe(0.4);
    expect(imagePriceMultiplier('dall-e-2', '512x512')).toBe(0.45);
    expect(imagePriceMultiplier('dall-e-3', '1024x1024')).toBe(1);
    expect(imagePriceMultiplier('dall-e-3', '1024x1792')).toBe(2);
    expect(imagePriceMultiplier('dall-e-3', '1024x1024', 'hd')).toBe(2);
    expect(imagePriceMultiplier('dall-e-3', '1792x1024', 'hd')).toBe(3);
    expect(imagePriceMultiplier('dall-e-2', '1024x1024', 'hd')).toBe(1);
    expect(imagePriceMultiplier('gpt-image-1', '256x256', 'hd')).toBe(1);
  });
});

describe('quotaToUsd', () => {
  it('divides by QuotaPerUnit', () => {
    expect(quotaToUsd(500000, options)).toBe(1);
    expect(quotaToUsd(1000, options)).toBe(0.002);
    expect(quotaToUsd(1000, fakeOptions({ QuotaPerUnit: 1000 }))).toBe(1);
  });
});

describe('taskCallQuota (reference §9.1)', () => {
  it('charges a task its per-call price × QuotaPerUnit × group ratio', () => {
    // mj_imagine at 0.1 USD in a group of ratio 1.5: 0.1 × 500000 × 1.5
    expect(taskCallQuota(ratioPrice({ perCallUsd: 0.1, modelRatio: 0, groupRatio: 1.5 }), options)).toBe(75_000);
  });

  it('with only a ratio, charges ratio / 2 × QuotaPerUnit × group ratio', () => {
    // ratio 0.3 in a group of ratio 2: 0.15 × 500000 × 2
    expect(taskCallQuota(ratioPrice({ modelRatio: 0.3, groupRatio: 2 }), options)).toBe(150_000);
    expect(taskCallQuota(ratioPrice({ perCallUsd: 0, groupRatio: 2 }), options)).toBe(0);
  });
});

describe('quota bounds', () => {
  it('never gives the ledger more than Number.MAX_SAFE_INTEGER, nor NaN or Infinity', () => {
    const perCall = ratioPrice({ perCallUsd: 0.04, modelRatio: 0 });
    for (const n of [1e9, 1e308]) {
      const reserved = preConsumeQuota({ price: perCall, promptTokens: 0, options, n });
      const { quota } = settleQuota({
        price: perCall,
        usage: { promptTokens: 0, completionTokens: 0 },
        options,
        semantics: 'openai',
        n,
      });
      expect(Number.isSafeInteger(reserved)).toBe(true);
      expect(Number.isSafeInteger(quota)).toBe(true);
    }
    // 1e308 images at $0.04: the formula overflows to Infinity, held as the most a wallet can hold.
    expect(preConsumeQuota({ price: perCall, promptTokens: 0, options, n: 1e308 })).toBe(Number.MAX_SAFE_INTEGER);
    const huge = settleQuota({
      price: ratioPrice({ modelRatio: 1e300 }),
      usage: { promptTokens: 1e300, completionTokens: 1 },
      options,
      semantics: 'openai',
    });
    expect(huge.quota).toBe(Number.MAX_SAFE_INTEGER);
    const nan = settleQuota({
      price: ratioPrice({ modelRatio: Number.NaN }),
      usage: { promptTokens: 10, completionTokens: 1 },
      options,
      semantics: 'openai',
    });
    expect(Number.isSafeInteger(nan.quota)).toBe(true);
  });
});
