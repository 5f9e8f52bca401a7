import { affinityRulesProblem } from '../../relay/affinity/rules.ts';
import {
  DEFAULT_AUDIO_COMPLETION_RATIO,
  DEFAULT_AUDIO_RATIO,
  DEFAULT_CACHE_RATIO,
  DEFAULT_COMPLETION_RATIO,
  DEFAULT_CREATE_CACHE_RATIO,
  DEFAULT_IMAGE_RATIO,
  DEFAULT_MODEL_PRICE,
  DEFAULT_MODEL_RATIO,
} from './default-prices.ts';
import { type Shape, shape } from './shapes.ts';

/** The largest check-in reward (2,000,000 USD of quota): far above any real one, and within what a random draw can span. */
const CHECKIN_REWARD_MAX = 1_000_000_000_000;

/**
 * THE table of options (DESIGN.md §2): every key the gateway knows, its type, its default as
 * stored, and how a new value is checked. Keys, defaults and meanings follow new-api
 * (reference §7.1 flat keys, §7.2 `<group>.<field>` keys) so that its users find them where
 * they expect; Tollgate's own additions are marked. Nothing else may define an option.
 */
export type OptionType = 'boolean' | 'integer' | 'number' | 'string' | 'json';

export interface OptionDefinition<K extends string = string, T extends OptionType = OptionType> {
  readonly key: K;
  readonly type: T;
  /** The default as stored: "true"/"false", a decimal number, plain text, or JSON text. */
  readonly default: string;
  /** Inclusive bounds for integer and number options. */
  readonly min?: number;
  readonly max?: number;
  /** Exclusive lower bound, for values that must be positive (exchange rates, quota per unit). */
  readonly above?: number;
  /** Extra syntax for string options. */
  readonly format?: 'url' | 'status-code-ranges' | 'time-zone' | 'origins' | 'domain';
  /** Extra syntax for each entry of a JSON string list. */
  readonly entries?: 'ip-ranges' | 'port-ranges';
  /** Extra syntax for each value of a JSON record (Tollgate's: checked when saved). */
  readonly values?: 'billing-expressions';
  /** The only values a string option may take. */
  readonly choices?: readonly string[];
  /** The structure a JSON option must have. */
  readonly shape?: Shape;
  /** Never returned by GET /api/option/ (credentials). */
  readonly secret?: boolean;
  /** A check beyond the shape (a JSON value already parsed): the problem in en and zh, or undefined when fine. */
  readonly check?: (value: unknown) => { en: string; zh: string } | undefined;
}

interface Bounds {
  min?: number;
  max?: number;
  above?: number;
}

const bool = <K extends string>(key: K, value: boolean): OptionDefinition<K, 'boolean'> => ({
  key,
  type: 'boolean',
  default: String(value),
});
const int = <K extends string>(key: K, value: number, bounds: Bounds = {}): OptionDefinition<K, 'integer'> => ({
  key,
  type: 'integer',
  default: String(value),
  ...bounds,
});
const num = <K extends string>(key: K, value: number, bounds: Bounds = {}): OptionDefinition<K, 'number'> => ({
  key,
  type: 'number',
  default: String(value),
  ...bounds,
});
const text = <K extends string>(key: K, value = '', choices?: readonly string[]): OptionDefinition<K, 'string'> =>
  choices ? { key, type: 'string', default: value, choices } : { key, type: 'string', default: value };
/** An http(s) URL, or empty for "not set". */
const url = <K extends string>(key: K, value = ''): OptionDefinition<K, 'string'> => ({
  key,
  type: 'string',
  default: value,
  format: 'url',
});
/** An IANA time zone name (`UTC`, `Asia/Shanghai`). */
const timeZone = <K extends string>(key: K, value: string): OptionDefinition<K, 'string'> => ({
  key,
  type: 'string',
  default: value,
  format: 'time-zone',
});
/** A comma-separated list of web origins (`https://example.com`, port allowed, no path), or empty. */
const origins = <K extends string>(key: K): OptionDefinition<K, 'string'> => ({
  key,
  type: 'string',
  default: '',
  format: 'origins',
});
/** A host name without scheme or port (a WebAuthn relying party id), or empty. */
const domain = <K extends string>(key: K): OptionDefinition<K, 'string'> => ({
  key,
  type: 'string',
  default: '',
  format: 'domain',
});
const secret = <K extends string>(key: K): OptionDefinition<K, 'string'> => ({
  key,
  type: 'string',
  default: '',
  secret: true,
});
const codeRanges = <K extends string>(key: K, value: string): OptionDefinition<K, 'string'> => ({
  key,
  type: 'string',
  default: value,
  format: 'status-code-ranges',
});
const json = <K extends string>(
  key: K,
  value: unknown,
  expected: Shape,
  check?: (value: unknown) => { en: string; zh: string } | undefined,
): OptionDefinition<K, 'json'> => ({
  key,
  type: 'json',
  default: JSON.stringify(value),
  shape: expected,
  ...(check ? { check } : {}),
});

/** A JSON list of strings, each of them in the given syntax. */
const entries = <K extends string>(
  key: K,
  value: string[],
  syntax: 'ip-ranges' | 'port-ranges',
): OptionDefinition<K, 'json'> => ({ ...json(key, value, shape.array(shape.string())), entries: syntax });

const ratioMap = shape.record(shape.number(0));
const stringList = shape.array(shape.string());
/** The colours an API address may be tagged with (new-api's palette names). */
export const API_INFO_COLORS = [
  'blue',
  'green',
  'cyan',
  'purple',
  'pink',
  'red',
  'orange',
  'amber',
  'yellow',
  'lime',
  'light-green',
  'teal',
  'light-blue',
  'indigo',
  'violet',
  'grey',
  'slate',
] as const;

const GEMINI_SAFETY_THRESHOLDS = [
  'OFF',
  'BLOCK_NONE',
  'BLOCK_ONLY_HIGH',
  'BLOCK_MEDIUM_AND_ABOVE',
  'BLOCK_LOW_AND_ABOVE',
  'HARM_BLOCK_THRESHOLD_UNSPECIFIED',
];

/** Upstream error texts that mean "this key is dead", matched case-insensitively (reference §4.4). */
const DEFAULT_DISABLE_KEYWORDS = [
  'Your credit balance is too low',
  'This organization has been disabled.',
  'You exceeded your current quota',
  'Permission denied',
  'The security token included in the request is invalid',
  'Operation not allowed',
  'Your account is not authorized',
];

const percentage = { min: 0.1, max: 1 };
const nonNegative = { min: 0 };

export const OPTION_DEFINITIONS = [
  // Sign-in and registration
  bool('PasswordLoginEnabled', true),
  bool('PasswordRegisterEnabled', true),
  bool('RegisterEnabled', true),
  bool('EmailVerificationEnabled', false),
  bool('EmailDomainRestrictionEnabled', false),
  bool('EmailAliasRestrictionEnabled', false),
  /** Tollgate's own: administrators reach no admin route until they enable two-factor sign-in. */
  bool('TwoFactorRequiredForAdmins', false),
  text(
    'EmailDomainWhitelist',
    'gmail.com,163.com,126.com,qq.com,outlook.com,hotmail.com,icloud.com,yahoo.com,foxmail.com',
  ),
  bool('GitHubOAuthEnabled', false),
  text('GitHubClientId'),
  secret('GitHubClientSecret'),
  bool('LinuxDOOAuthEnabled', false),
  text('LinuxDOClientId'),
  secret('LinuxDOClientSecret'),
  int('LinuxDOMinimumTrustLevel', 0, { min: 0, max: 4 }),
  bool('WeChatAuthEnabled', false),
  url('WeChatServerAddress'),
  secret('WeChatServerToken'),
  url('WeChatAccountQRCodeImageURL'),
  bool('TelegramOAuthEnabled', false),
  secret('TelegramBotToken'),
  text('TelegramBotName'),
  bool('TurnstileCheckEnabled', false),
  // Public by design: the browser needs it and GET /api/status hands it out.
  text('TurnstileSiteKey'),
  secret('TurnstileSecretKey'),
  bool('oidc.enabled', false),
  text('oidc.client_id'),
  secret('oidc.client_secret'),
  url('oidc.well_known'),
  url('oidc.authorization_endpoint'),
  url('oidc.token_endpoint'),
  url('oidc.user_info_endpoint'),
  // Passkeys (new-api's passkey.* settings). Empty RP id and origins: taken from the request's host.
  bool('passkey.enabled', false),
  text('passkey.rp_display_name'),
  domain('passkey.rp_id'),
  origins('passkey.origins'),
  bool('passkey.allow_insecure_origin', false),
  text('passkey.user_verification', 'preferred', ['required', 'preferred', 'discouraged']),
  text('passkey.attachment_preference', '', ['', 'platform', 'cross-platform']),
  bool('discord.enabled', false),
  text('discord.client_id'),
  secret('discord.client_secret'),

  // Mail
  text('SMTPServer'),
  int('SMTPPort', 587, { min: 1, max: 65535 }),
  text('SMTPAccount'),
  text('SMTPFrom'),
  secret('SMTPToken'),
  bool('SMTPSSLEnabled', false),
  bool('SMTPForceAuthLogin', false),

  // Site content and shell
  text('SystemName', 'Tollgate'),
  url('Logo'),
  text('Footer'),
  text('Notice'),
  text('About'),
  text('HomePageContent'),
  url('ServerAddress', 'http://localhost:3000'),
  url('TopUpLink'),
  // Empty: the top bar hides "Docs" until an admin sets a link.
  url('general_setting.docs_link'),
  text('ChatLink'),
  text('ChatLink2'),
  /** Chat clients: a list of {name: link template} maps. */
  json('Chats', [], shape.array(shape.record(shape.string()))),
  bool('DefaultCollapseSidebar', false),
  /** Top-bar entries: {home, console, pricing, docs, about}, each a boolean; pricing may be {enabled, requireAuth}. */
  json('HeaderNavModules', {}, shape.record()),
  /** Side-menu sections (chat, console, personal, admin), each {enabled, <entry>: boolean}. */
  json('SidebarModulesAdmin', {}, shape.record(shape.record(shape.boolean()))),
  text('legal.user_agreement'),
  text('legal.privacy_policy'),
  // Dashboard panels; the console checks lengths, URLs and dates entry by entry (console/src/status/console-content.ts).
  json(
    'console_setting.api_info',
    [],
    shape.array(
      shape.object({
        url: shape.string(),
        route: shape.string(),
        description: shape.string(),
        color: shape.string(API_INFO_COLORS),
      }),
    ),
  ),
  json(
    'console_setting.announcements',
    [],
    shape.array(shape.object({ content: shape.string(), publishDate: shape.string() })),
  ),
  json('console_setting.faq', [], shape.array(shape.object({ question: shape.string(), answer: shape.string() }))),
  bool('console_setting.api_info_enabled', true),
  bool('console_setting.announcements_enabled', true),
  bool('console_setting.faq_enabled', true),
  /** Uptime Kuma status pages shown on the dashboard (GET /api/uptime/status): base URL, page slug, heading. */
  json(
    'console_setting.uptime_kuma_groups',
    [],
    shape.array(shape.object({ url: shape.string(), slug: shape.string(), categoryName: shape.string() })),
  ),
  bool('console_setting.uptime_kuma_enabled', false),
  // Daily check-in (POST /api/user/checkin): a random reward in [min_quota, max_quota], once per calendar day.
  bool('checkin_setting.enabled', false),
  int('checkin_setting.min_quota', 1000, { min: 0, max: CHECKIN_REWARD_MAX }),
  int('checkin_setting.max_quota', 10000, { min: 0, max: CHECKIN_REWARD_MAX }),

  // Display
  bool('DisplayInCurrencyEnabled', true),
  bool('DisplayTokenStatEnabled', true),
  text('general_setting.quota_display_type', 'USD', ['USD', 'CNY', 'TOKENS', 'CUSTOM']),
  text('general_setting.custom_currency_symbol', '¤'),
  num('general_setting.custom_currency_exchange_rate', 1, { above: 0 }),
  bool('DrawingEnabled', true),
  bool('TaskEnabled', true),
  bool('DataExportEnabled', true),
  /** Minutes the usage dashboard's buckets are added up in memory between writes (usage/held-buckets.ts). */
  int('DataExportInterval', 5, { min: 1 }),
  text('DataExportDefaultTime', 'hour', ['hour', 'day', 'week']),

  // Quota
  num('QuotaPerUnit', 500000, { above: 0 }),
  int('QuotaForNewUser', 0, nonNegative),
  int('QuotaForInviter', 0, nonNegative),
  int('QuotaForInvitee', 0, nonNegative),
  int('QuotaRemindThreshold', 1000, nonNegative),
  int('PreConsumedQuota', 500, nonNegative),
  bool('quota_setting.enable_free_model_pre_consume', true),
  /**
   * Tollgate: completion tokens a request without max_tokens reserves, by model ("default" for the
   * others; 0: none), and what each top-up of its stream adds (relay/overrun).
   */
  json('quota_setting.default_completion_tokens', { default: 2048 }, shape.record(shape.integer(0))),
  /** Tollgate's own: the IANA zone whose midnights start the daily, weekly (Monday) and monthly quotas. */
  timeZone('quota_setting.period_timezone', 'UTC'),
  int('token_setting.max_user_tokens', 1000, { min: 1 }),

  // Pricing
  json('ModelRatio', DEFAULT_MODEL_RATIO, ratioMap),
  json('ModelPrice', DEFAULT_MODEL_PRICE, ratioMap),
  json('CompletionRatio', DEFAULT_COMPLETION_RATIO, ratioMap),
  json('CacheRatio', DEFAULT_CACHE_RATIO, ratioMap),
  json('CreateCacheRatio', DEFAULT_CREATE_CACHE_RATIO, ratioMap),
  /** Tollgate's: the JSON model catalogue (metadata and prices) that /api/models/sync_upstream reads. */
  url('ModelCatalogueUpstreamURL'),
  json('ImageRatio', DEFAULT_IMAGE_RATIO, ratioMap),
  json('AudioRatio', DEFAULT_AUDIO_RATIO, ratioMap),
  json('AudioCompletionRatio', DEFAULT_AUDIO_COMPLETION_RATIO, ratioMap),
  json('billing_setting.billing_mode', {}, shape.record(shape.string())),
  { ...json('billing_setting.billing_expr', {}, shape.record(shape.string())), values: 'billing-expressions' },
  /** Tollgate's: the IANA time zone the clock functions of billing expressions (`hour()`, …) read. */
  timeZone('billing_setting.timezone', 'UTC'),
  /** USD per 1,000 tool calls; `tool:model-prefix*` entries override the tool's price for those models. */
  json(
    'tool_price_setting.prices',
    {
      web_search: 10,
      web_search_preview: 10,
      'web_search_preview:gpt-4o*': 25,
      'web_search_preview:gpt-4.1*': 25,
      file_search: 2.5,
      google_search: 14,
    },
    ratioMap,
  ),

  // Groups
  json('GroupRatio', { default: 1, vip: 1, svip: 1 }, ratioMap),
  /** user group -> using group -> ratio. */
  json('GroupGroupRatio', { vip: { edit_this: 0.9 } }, shape.record(ratioMap)),
  json('UserUsableGroups', { default: '默认分组', vip: 'vip分组' }, shape.record(shape.string())),
  json('AutoGroups', ['default'], stringList),
  bool('DefaultUseAutoGroup', false),
  /** user group -> {"+:g" | "-:g" | "g": description}: groups added to or removed from UserUsableGroups. */
  json('group_ratio_setting.group_special_usable_group', {}, shape.record(shape.record(shape.string()))),
  json('TopupGroupRatio', { default: 1, vip: 1, svip: 1 }, ratioMap),

  // Relay: retries and channel health
  int('RetryTimes', 0, nonNegative),
  /** Seconds: a channel test slower than this counts as a failure. */
  num('ChannelDisableThreshold', 5, nonNegative),
  bool('AutomaticDisableChannelEnabled', false),
  bool('AutomaticEnableChannelEnabled', false),
  text('AutomaticDisableKeywords', DEFAULT_DISABLE_KEYWORDS.join('\n')),
  codeRanges('AutomaticDisableStatusCodes', '401'),
  codeRanges('AutomaticRetryStatusCodes', '100-199,300-399,401-407,409-499,500-503,505-523,525-599'),
  bool('monitor_setting.auto_test_channel_enabled', false),
  int('monitor_setting.auto_test_channel_minutes', 10, { min: 1 }),
  // Tollgate's: passive health, circuits per channel, key and model (relay/health/circuits.ts).
  bool('circuit_setting.enabled', true),
  /** Upstream failures within the window that open a circuit. */
  int('circuit_setting.failure_threshold', 5, { min: 1, max: 1000 }),
  int('circuit_setting.window_seconds', 60, { min: 1, max: 86400 }),
  /** First cooldown of an open circuit; doubles after each failed probe up to the maximum. */
  int('circuit_setting.cooldown_seconds', 30, { min: 1, max: 86400 }),
  int('circuit_setting.max_cooldown_seconds', 3600, { min: 1, max: 604800 }),
  /** X-Tollgate-Route on every relay answer, not only for administrators who ask with X-Tollgate-Debug: route. */
  bool('circuit_setting.route_header', false),
  bool('channel_affinity_setting.enabled', true),
  bool('channel_affinity_setting.switch_on_success', true),
  int('channel_affinity_setting.max_entries', 100000, nonNegative),
  int('channel_affinity_setting.default_ttl_seconds', 3600, { min: 1 }),
  json(
    'channel_affinity_setting.rules',
    [
      {
        name: 'codex cli trace',
        path: '/v1/responses',
        model_pattern: 'gpt-*',
        key_source: 'body:prompt_cache_key',
        skip_retry_on_failure: true,
      },
      {
        name: 'claude cli trace',
        path: '/v1/messages',
        model_pattern: 'claude-*',
        key_source: 'body:metadata.user_id',
        skip_retry_on_failure: true,
      },
      // Tollgate: the client's prompt_cache_key on chat completions, and Claude's cache breakpoints.
      {
        name: 'chat prompt cache key',
        path: '/v1/chat/completions',
        model_pattern: '*',
        key_source: 'body:prompt_cache_key',
      },
      {
        name: 'claude cache breakpoints',
        path: '/v1/messages',
        model_pattern: 'claude-*',
        key_source: 'claude:cache_prefix',
      },
    ],
    shape.array(shape.object({ name: shape.string() })),
    affinityRulesProblem,
  ),
  /** Every channel forwards the client's own bytes when no conversion is needed (relay/exchange/pass-through.ts). */
  bool('global.pass_through_request_enabled', false),
  json(
    'global.chat_completions_to_responses_policy',
    { enabled: false, all_channels: true, channel_ids: [], channel_types: [], model_patterns: [] },
    shape.object({ enabled: shape.boolean(), all_channels: shape.boolean() }),
  ),
  /** Stream chunks that may queue for a slow client before the upstream is no longer read (relay/exchange/forward.ts). */
  int('StreamCacheQueueLength', 0, nonNegative),
  bool('general_setting.ping_interval_enabled', false),
  int('general_setting.ping_interval_seconds', 60, { min: 1 }),

  // Logs. Tollgate: consume logs older than this many days are deleted; 0 keeps them forever.
  bool('LogConsumeEnabled', true),
  int('LogRetentionDays', 0, nonNegative),

  // Sensitive words
  bool('CheckSensitiveEnabled', true),
  bool('CheckSensitiveOnPromptEnabled', true),
  bool('StopOnSensitiveEnabled', true),
  text('SensitiveWords', 'test_sensitive'),

  // Per-user request rate limit on the relay
  bool('ModelRequestRateLimitEnabled', false),
  /** Requests per window, failures included; 0 means unlimited. */
  int('ModelRequestRateLimitCount', 0, nonNegative),
  int('ModelRequestRateLimitSuccessCount', 1000, { min: 1 }),
  int('ModelRequestRateLimitDurationMinutes', 1, nonNegative),
  /** group -> [total, success] overriding the two counts above. */
  json('ModelRequestRateLimitGroup', {}, shape.record(shape.tuple(shape.integer(0), shape.integer(1)))),
  // Tollgate: requests and tokens per minute per group (README "Rate limits"): group -> model or "*" -> { rpm, tpm }.
  json(
    'rate_limit_setting.groups',
    {},
    shape.record(shape.record(shape.someOf({ rpm: shape.integer(0), tpm: shape.integer(0) }))),
  ),

  // Midjourney
  bool('MjNotifyEnabled', false),
  bool('MjAccountFilterEnabled', false),
  bool('MjModeClearEnabled', false),
  bool('MjForwardUrlEnabled', true),
  bool('MjActionCheckSuccessEnabled', true),

  // Usage modes
  bool('DemoSiteEnabled', false),
  bool('SelfUseModeEnabled', false),

  // Claude
  json('claude.model_headers_settings', {}, shape.record(shape.record(stringList))),
  json('claude.default_max_tokens', { default: 8192 }, shape.record(shape.integer(0))),
  bool('claude.thinking_adapter_enabled', true),
  num('claude.thinking_adapter_budget_tokens_percentage', 0.8, percentage),

  // Gemini
  json(
    'gemini.safety_settings',
    { default: 'OFF', HARM_CATEGORY_CIVIC_INTEGRITY: 'BLOCK_NONE' },
    shape.record(shape.string(GEMINI_SAFETY_THRESHOLDS)),
  ),
  json('gemini.version_settings', { default: 'v1beta', 'gemini-1.0-pro': 'v1' }, shape.record(shape.string())),
  json(
    'gemini.supported_imagine_models',
    [
      'gemini-2.0-flash-exp-image-generation',
      'gemini-2.0-flash-exp',
      'gemini-2.5-flash-image',
      'gemini-2.5-flash-image-preview',
      'gemini-3-pro-image-preview',
    ],
    stringList,
  ),
  bool('gemini.thinking_adapter_enabled', false),
  num('gemini.thinking_adapter_budget_tokens_percentage', 0.6, percentage),
  bool('gemini.function_call_thought_signature_enabled', true),
  bool('gemini.remove_function_response_id_enabled', true),

  // Outgoing fetches of user-supplied URLs (images, webhooks)
  bool('fetch_setting.enable_ssrf_protection', true),
  bool('fetch_setting.allow_private_ip', false),
  /** false: the lists are deny lists; true: allow lists. */
  bool('fetch_setting.domain_filter_mode', false),
  bool('fetch_setting.ip_filter_mode', false),
  json('fetch_setting.domain_list', [], stringList),
  /** Addresses or CIDR ranges. */
  entries('fetch_setting.ip_list', [], 'ip-ranges'),
  /** "443" or "8000-9000"; an empty list allows any port. */
  entries('fetch_setting.allowed_ports', ['80', '443', '8080', '8443'], 'port-ranges'),
  bool('fetch_setting.apply_ip_filter_for_domain', true),

  // Top-up: epay
  url('PayAddress'),
  url('CustomCallbackAddress'),
  text('EpayId'),
  secret('EpayKey'),
  /** Local currency per USD charged for top-ups. */
  num('Price', 7.3, nonNegative),
  num('USDExchangeRate', 7.3, { above: 0 }),
  int('MinTopUp', 1, nonNegative),
  json(
    'PayMethods',
    [
      { name: '支付宝', type: 'alipay', color: '#1677ff' },
      { name: '微信', type: 'wxpay', color: '#07c160' },
    ],
    shape.array(shape.object({ name: shape.string(), type: shape.string() })),
  ),
  /** amount -> discount factor. */
  json('payment_setting.amount_discount', {}, ratioMap),
  /** The amounts the wallet offers as buttons (GET /api/user/topup/info); [] lets the page choose. */
  json('payment_setting.amount_options', [], shape.array(shape.integer(1))),
] as const;

type Definitions = (typeof OPTION_DEFINITIONS)[number];

/** Every option key, as a type: getters take these so that a typo fails to compile. */
export type OptionKey = Definitions['key'];
export type OptionKeyOfType<T extends OptionType> = Extract<Definitions, { type: T }>['key'];
export type BooleanOptionKey = OptionKeyOfType<'boolean'>;
export type NumericOptionKey = OptionKeyOfType<'integer' | 'number'>;
export type JsonOptionKey = OptionKeyOfType<'json'>;

const byKey: ReadonlyMap<string, OptionDefinition> = new Map(OPTION_DEFINITIONS.map((d) => [d.key, d]));

export function findOptionDefinition(key: string): OptionDefinition | undefined {
  return byKey.get(key);
}

export function isOptionKey(key: string): key is OptionKey {
  return byKey.has(key);
}

/** The name rule new-api uses to hide credentials from GET /api/option/ (reference §7). */
export function looksSecret(key: string): boolean {
  return ['Token', 'Secret', 'Key', 'secret', 'api_key'].some((suffix) => key.endsWith(suffix));
}

/** Keys whose names look secret but whose values are public by design. */
export const PUBLIC_DESPITE_NAME: readonly string[] = ['TurnstileSiteKey'];
