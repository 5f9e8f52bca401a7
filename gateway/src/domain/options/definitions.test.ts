import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CACHE_RATIO,
  DEFAULT_COMPLETION_RATIO,
  DEFAULT_MODEL_PRICE,
  DEFAULT_MODEL_RATIO,
} from './default-prices.ts';
import { looksSecret, OPTION_DEFINITIONS, PUBLIC_DESPITE_NAME } from './definitions.ts';
import { validateOption } from './validate.ts';

/** Every key spec doc 2 §3 names, written out so that dropping one from the table fails here. */
const SPEC_KEYS = [
  'QuotaForNewUser',
  'QuotaForInviter',
  'QuotaForInvitee',
  'QuotaRemindThreshold',
  'PreConsumedQuota',
  'StreamCacheQueueLength',
  'ModelRatio',
  'CacheRatio',
  'CompletionRatio',
  'ModelPrice',
  'GroupRatio',
  'UserUsableGroups',
  'GroupGroupRatio',
  'DefaultUseAutoGroup',
  'AutoGroups',
  'TopUpLink',
  'general_setting.docs_link',
  'QuotaPerUnit',
  'ChannelDisableThreshold',
  'DataExportDefaultTime',
  'DataExportInterval',
  'RetryTimes',
  'Chats',
  'SensitiveWords',
  'AutomaticDisableKeywords',
  'USDExchangeRate',
  'DefaultCollapseSidebar',
  // "the Mj*, Check*, Demo and SelfUse switches"
  'MjNotifyEnabled',
  'MjAccountFilterEnabled',
  'MjModeClearEnabled',
  'MjForwardUrlEnabled',
  'MjActionCheckSuccessEnabled',
  'CheckSensitiveEnabled',
  'CheckSensitiveOnPromptEnabled',
  'DemoSiteEnabled',
  'SelfUseModeEnabled',
  // Rate limit
  'ModelRequestRateLimitEnabled',
  'ModelRequestRateLimitCount',
  'ModelRequestRateLimitSuccessCount',
  'ModelRequestRateLimitDurationMinutes',
  // Gemini
  'gemini.safety_settings',
  'gemini.version_settings',
  'gemini.supported_imagine_models',
  'gemini.thinking_adapter_enabled',
  'gemini.thinking_adapter_budget_tokens_percentage',
  // Claude
  'claude.model_headers_settings',
  'claude.default_max_tokens',
  'claude.thinking_adapter_enabled',
  'claude.thinking_adapter_budget_tokens_percentage',
  // Global
  'global.pass_through_request_enabled',
  'general_setting.ping_interval_enabled',
  'general_setting.ping_interval_seconds',
];

/** Options the status object (spec doc 1 §3) is built from. */
const STATUS_KEYS = [
  'SystemName',
  'Logo',
  'Footer',
  'DisplayInCurrencyEnabled',
  'DrawingEnabled',
  'TaskEnabled',
  'DataExportEnabled',
  'PayMethods',
  'ChatLink',
  'ChatLink2',
  'TurnstileCheckEnabled',
  'TurnstileSiteKey',
  'EmailVerificationEnabled',
  'GitHubOAuthEnabled',
  'GitHubClientId',
  'oidc.enabled',
  'oidc.client_id',
  'oidc.authorization_endpoint',
  'WeChatAuthEnabled',
  'WeChatAccountQRCodeImageURL',
  'TelegramOAuthEnabled',
  'TelegramBotName',
  'LinuxDOOAuthEnabled',
  'LinuxDOClientId',
  'ServerAddress',
  'Price',
];

const keys = OPTION_DEFINITIONS.map((d) => d.key);
const byKey = new Map(OPTION_DEFINITIONS.map((d) => [d.key as string, d]));

describe('the option table', () => {
  it('has no duplicate keys', () => {
    const seen = new Set<string>();
    const duplicates = keys.filter((key) => seen.size === seen.add(key).size);
    expect(duplicates).toEqual([]);
  });

  it('has every key spec doc 2 §3 names, and those the status object needs', () => {
    expect([...SPEC_KEYS, ...STATUS_KEYS].filter((key) => !byKey.has(key))).toEqual([]);
  });

  it('accepts every default with its own validator, unchanged', () => {
    for (const definition of OPTION_DEFINITIONS) {
      expect(validateOption(definition.key, definition.default), definition.key).toBe(definition.default);
    }
  });

  it('types every key ending in Enabled or _enabled as boolean', () => {
    const wrong = OPTION_DEFINITIONS.filter((d) => /(Enabled|_enabled)$/.test(d.key) && d.type !== 'boolean');
    expect(wrong.map((d) => d.key)).toEqual([]);
  });

  it('marks secret exactly the keys whose names say credential, apart from public ones', () => {
    for (const definition of OPTION_DEFINITIONS) {
      const expected = looksSecret(definition.key) && !PUBLIC_DESPITE_NAME.includes(definition.key);
      expect(definition.secret === true, definition.key).toBe(expected);
    }
    for (const key of PUBLIC_DESPITE_NAME) expect(byKey.has(key), key).toBe(true);
  });

  it('uses bounds only on numbers, choices and formats only on strings, shapes only on JSON', () => {
    for (const d of OPTION_DEFINITIONS) {
      const numeric = d.type === 'integer' || d.type === 'number';
      if (!numeric) expect([d.min, d.max, d.above], d.key).toEqual([undefined, undefined, undefined]);
      if (d.type !== 'string') expect([d.choices, d.format], d.key).toEqual([undefined, undefined]);
      if (d.type === 'json') expect(d.shape, d.key).toBeDefined();
      else expect(d.shape, d.key).toBeUndefined();
    }
  });

  it('holds the defaults the spec and the reference give', () => {
    const defaults = Object.fromEntries(OPTION_DEFINITIONS.map((d) => [d.key, d.default]));
    expect(defaults).toMatchObject({
      QuotaPerUnit: '500000',
      USDExchangeRate: '7.3',
      Price: '7.3',
      MinTopUp: '1',
      DataExportDefaultTime: 'hour',
      DataExportInterval: '5',
      Chats: '[]',
      RetryTimes: '0',
      ChannelDisableThreshold: '5',
      PreConsumedQuota: '500',
      QuotaRemindThreshold: '1000',
      GroupRatio: '{"default":1,"vip":1,"svip":1}',
      UserUsableGroups: '{"default":"默认分组","vip":"vip分组"}',
      AutoGroups: '["default"]',
      AutomaticRetryStatusCodes: '100-199,300-399,401-407,409-499,500-503,505-523,525-599',
      AutomaticDisableStatusCodes: '401',
      SystemName: 'Tollgate',
      ServerAddress: 'http://localhost:3000',
      'general_setting.docs_link': '',
      ModelRequestRateLimitEnabled: 'false',
      ModelRequestRateLimitCount: '0',
      ModelRequestRateLimitSuccessCount: '1000',
      ModelRequestRateLimitDurationMinutes: '1',
      'claude.thinking_adapter_enabled': 'true',
      'claude.thinking_adapter_budget_tokens_percentage': '0.8',
      'claude.default_max_tokens': '{"default":8192}',
      'gemini.thinking_adapter_enabled': 'false',
      'gemini.thinking_adapter_budget_tokens_percentage': '0.6',
      'general_setting.ping_interval_enabled': 'false',
      'general_setting.ping_interval_seconds': '60',
      LogRetentionDays: '0',
    });
    expect(JSON.parse(defaults['gemini.safety_settings']!)).toMatchObject({ default: 'OFF' });
    expect(JSON.parse(defaults['gemini.version_settings']!)).toMatchObject({ default: 'v1beta' });
    expect(defaults.AutomaticDisableKeywords!.split('\n')).toHaveLength(7);
  });

  it('derives model ratios from USD prices: ratio = input $/1M / 2', () => {
    expect(DEFAULT_MODEL_RATIO['gpt-4o']).toBe(1.25);
    expect(DEFAULT_COMPLETION_RATIO['gpt-4o']).toBe(4);
    expect(DEFAULT_CACHE_RATIO['gpt-4o-mini']).toBe(0.5);
    expect(DEFAULT_MODEL_RATIO['claude-sonnet-4-20250514']).toBe(1.5);
    expect(DEFAULT_COMPLETION_RATIO['claude-sonnet-4-20250514']).toBe(5);
    expect(DEFAULT_MODEL_RATIO['text-embedding-3-small']).toBe(0.01);
    expect(DEFAULT_MODEL_PRICE).toMatchObject({
      'dall-e-3': 0.04,
      mj_imagine: 0.1,
      mj_video: 0.8,
      mj_describe: 0.05,
      mj_upscale: 0.05,
      suno_music: 0.1,
      suno_lyrics: 0.01,
    });
    // A per-call model has no ratio: the fixed price would win anyway, two entries would confuse.
    expect(Object.keys(DEFAULT_MODEL_PRICE).filter((model) => model in DEFAULT_MODEL_RATIO)).toEqual([]);
    for (const [model, ratio] of Object.entries(DEFAULT_MODEL_RATIO)) {
      expect(Number.isFinite(ratio) && ratio >= 0, model).toBe(true);
    }
  });
});
