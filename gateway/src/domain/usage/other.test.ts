import { describe, expect, it } from 'vitest';
import type { ModelPrice } from '../../relay/types.ts';
import { buildConsumeOther, buildErrorOther, type ConsumeOtherInput, logModelName } from './other.ts';

const price: ModelPrice = {
  modelRatio: 2.5,
  completionRatio: 4,
  cacheRatio: 0.5,
  cacheCreationRatio: 1.25,
  imageRatio: 2,
  audioRatio: 16,
  audioCompletionRatio: 2,
  groupRatio: 0.8,
  configured: true,
};

const base: ConsumeOtherInput = {
  price,
  usage: { promptTokens: 1200, completionTokens: 300, cachedTokens: 200 },
  firstResponseMs: 412,
  requestedModel: 'gpt-4o',
  upstreamModel: 'gpt-4o',
  usedChannels: [7],
};

describe('buildConsumeOther', () => {
  it('writes the ratios, cache, frt and admin_info with new-api key names; -1 for no price and no user group ratio', () => {
    expect(buildConsumeOther(base)).toEqual({
      model_ratio: 2.5,
      group_ratio: 0.8,
      completion_ratio: 4,
      cache_tokens: 200,
      cache_ratio: 0.5,
      model_price: -1,
      user_group_ratio: -1,
      frt: 412,
      admin_info: { use_channel: ['7'] },
    });
  });

  it('writes the per-call price and the group-group ratio when they applied', () => {
    const other = buildConsumeOther({ ...base, price: { ...price, perCallUsd: 0.04, userGroupRatio: 0.5 } });
    expect(other.model_price).toBe(0.04);
    expect(other.user_group_ratio).toBe(0.5);
  });

  it('records mapping, retries, multi-key, local counting, path, conversion, format, billing and stream', () => {
    const other = buildConsumeOther({
      ...base,
      usage: { ...base.usage, estimated: true },
      upstreamModel: 'gpt-4o-2024-11-20',
      usedChannels: [3, 9, 7],
      multiKeyIndex: 2,
      requestPath: '/v1/messages',
      formatChain: ['claude-messages', 'openai-chat', 'openai-responses', 'gemini-generate'],
      reasoningEffort: 'high',
      systemPromptOverwritten: true,
      billingSource: 'wallet',
      billingPreference: 'wallet_first',
      paramOverrideAudit: [{ op: 'set', path: 'temperature' }],
      stream: { endReason: 'client_gone', normal: false, endError: 'aborted', errors: ['boom'] },
      rejectReason: 'none',
      group: 'vip',
    });
    expect(other).toMatchObject({
      is_model_mapped: true,
      upstream_model_name: 'gpt-4o-2024-11-20',
      reasoning_effort: 'high',
      is_system_prompt_overwritten: true,
      admin_info: { use_channel: ['3', '9', '7'], is_multi_key: true, multi_key_index: 2, local_count_tokens: true },
      request_path: '/v1/messages',
      request_conversion: ['Claude Messages', 'OpenAI Compatible', 'OpenAI Responses', 'Google Gemini'],
      billing_source: 'wallet',
      billing_preference: 'wallet_first',
      po: [{ op: 'set', path: 'temperature' }],
      stream_status: {
        status: 'error',
        end_reason: 'client_gone',
        end_error: 'aborted',
        error_count: 1,
        errors: ['boom'],
      },
      reject_reason: 'none',
      group: 'vip',
    });
    expect(other).not.toHaveProperty('claude');
  });

  it('leaves out what did not happen', () => {
    const other = buildConsumeOther({ ...base, stream: { endReason: 'done', normal: true } });
    for (const key of ['is_model_mapped', 'upstream_model_name', 'reasoning_effort', 'request_conversion', 'po']) {
      expect(other).not.toHaveProperty(key);
    }
    expect(other.stream_status).toEqual({ status: 'ok', end_reason: 'done' });
    expect(other.admin_info).toEqual({ use_channel: ['7'] });
  });

  it('marks Claude and splits cache writes into 5-minute and 1-hour parts', () => {
    const other = buildConsumeOther({
      ...base,
      usage: { ...base.usage, cacheCreationTokens: 1000, cacheCreation1hTokens: 400 },
      upstreamFormat: 'claude-messages',
      claudeUsage: true,
    });
    expect(other).toMatchObject({
      claude: true,
      usage_semantic: 'anthropic',
      cache_creation_tokens: 1000,
      cache_creation_ratio: 1.25,
      cache_creation_tokens_5m: 600,
      cache_creation_ratio_5m: 1.25,
      cache_creation_tokens_1h: 400,
      cache_creation_ratio_1h: 2,
    });
    // Claude shows the cache-write fields even at zero; OpenAI formats only when something was written.
    expect(buildConsumeOther({ ...base, upstreamFormat: 'claude-messages' })).toMatchObject({
      claude: true,
      cache_creation_tokens: 0,
    });
    expect(buildConsumeOther(base)).not.toHaveProperty('cache_creation_tokens');
    expect(
      buildConsumeOther({ ...base, usage: { ...base.usage, cacheCreationTokens: 50 } }).cache_creation_tokens,
    ).toBe(50);
  });

  it('adds the audio split for audio models and ws for realtime, and image input', () => {
    const usage = { promptTokens: 500, completionTokens: 200, audioInputTokens: 300, audioOutputTokens: 150 };
    expect(buildConsumeOther({ ...base, usage, mode: 'audio' })).toMatchObject({
      audio: true,
      audio_input: 300,
      audio_output: 150,
      text_input: 200,
      text_output: 50,
      audio_ratio: 16,
      audio_completion_ratio: 2,
    });
    const ws = buildConsumeOther({ ...base, usage, mode: 'realtime' });
    expect(ws.ws).toBe(true);
    expect(ws).not.toHaveProperty('audio');
    expect(buildConsumeOther({ ...base, usage: { ...base.usage, imageInputTokens: 765 } })).toMatchObject({
      image: true,
      image_ratio: 2,
      image_output: 765,
    });
  });

  it('records tool surcharges only when charged', () => {
    const other = buildConsumeOther({
      ...base,
      surcharges: {
        webSearch: { calls: 2, priceUsdPer1k: 25 },
        fileSearch: { calls: 0, priceUsdPer1k: 2.5 },
        audioInput: { tokens: 80, priceUsdPer1M: 0.7 },
        imageGenerationCall: { priceUsd: 0.04 },
      },
      extra: { billing_mode: 'tiered_expr' },
    });
    expect(other).toMatchObject({
      web_search: true,
      web_search_call_count: 2,
      web_search_price: 25,
      audio_input_seperate_price: true,
      audio_input_token_count: 80,
      audio_input_price: 0.7,
      image_generation_call: true,
      image_generation_call_price: 0.04,
      billing_mode: 'tiered_expr',
    });
    expect(other).not.toHaveProperty('file_search');
  });

  it('survives JSON as the log stores it', () => {
    const other = buildConsumeOther({ ...base, stream: { endReason: 'done', normal: true } });
    expect(JSON.parse(JSON.stringify(other))).toEqual(other);
  });
});

describe('buildErrorOther', () => {
  it('writes the error, the channel and admin_info as new-api does', () => {
    expect(
      buildErrorOther({
        requestPath: '/v1/chat/completions',
        errorType: 'upstream_error',
        errorCode: 'bad_response_status_code',
        statusCode: 502,
        channelId: 4,
        channelName: 'openai-main',
        channelType: 1,
        usedChannels: [2, 4],
        multiKeyIndex: 0,
      }),
    ).toEqual({
      request_path: '/v1/chat/completions',
      error_type: 'upstream_error',
      error_code: 'bad_response_status_code',
      status_code: 502,
      channel_id: 4,
      channel_name: 'openai-main',
      channel_type: 1,
      admin_info: { use_channel: ['2', '4'], is_multi_key: true, multi_key_index: 0 },
    });
  });
});

describe('logModelName', () => {
  it('collapses GPTs and leaves other models alone', () => {
    expect(logModelName('gpt-4-gizmo-g-abcdefghi')).toBe('gpt-4-gizmo-*');
    expect(logModelName('gpt-4o-gizmo-g-abcdefghi')).toBe('gpt-4o-gizmo-*');
    expect(logModelName('gpt-4o')).toBe('gpt-4o');
  });
});
