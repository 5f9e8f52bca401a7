import type { OptionField, OptionSectionDef } from './options.ts';

/** Settings sections by tab (spec doc 2 §2 Settings page, §3 Option keys, §5 bounds, §9 defaults). */

const sw = (key: string, label: string, extra: Partial<OptionField> = {}): OptionField => ({
  key,
  kind: 'switch',
  label,
  ...extra,
});
const num = (key: string, label: string, extra: Partial<OptionField> = {}): OptionField => ({
  key,
  kind: 'number',
  label,
  ...extra,
});
const int = (key: string, label: string, extra: Partial<OptionField> = {}): OptionField =>
  num(key, label, { integer: true, step: 1, ...extra });
const text = (key: string, label: string, extra: Partial<OptionField> = {}): OptionField => ({
  key,
  kind: 'text',
  label,
  ...extra,
});
const area = (key: string, label: string, extra: Partial<OptionField> = {}): OptionField => ({
  key,
  kind: 'textarea',
  label,
  ...extra,
});
const json = (key: string, label: string, extra: Partial<OptionField> = {}): OptionField => ({
  key,
  kind: 'json',
  label,
  ...extra,
});
const secret = (key: string, label: string): OptionField => ({ key, kind: 'secret', label });

/** The operation tab's nine sections (the ratio sub-tabs follow them). */
export const OPERATION_SECTIONS: OptionSectionDef[] = [
  {
    id: 'general',
    title: 'settings.sections.general',
    fields: [
      text('TopUpLink', 'settings.fields.top_up_link'),
      text('general_setting.docs_link', 'settings.fields.docs_link'),
      num('QuotaPerUnit', 'settings.fields.quota_per_unit', { min: 0.000001, help: 'settings.help.quota_per_unit' }),
      num('USDExchangeRate', 'settings.fields.usd_exchange_rate', { min: 0.000001 }),
      int('RetryTimes', 'settings.fields.retry_times', { min: 0 }),
      {
        key: 'general_setting.quota_display_type',
        kind: 'select',
        label: 'settings.fields.quota_display_type',
        choices: [
          { id: 'USD', name: 'settings.choices.usd' },
          { id: 'CNY', name: 'settings.choices.cny' },
          { id: 'TOKENS', name: 'settings.choices.tokens' },
          { id: 'CUSTOM', name: 'settings.choices.custom' },
        ],
      },
      text('general_setting.custom_currency_symbol', 'settings.fields.custom_currency_symbol'),
      num('general_setting.custom_currency_exchange_rate', 'settings.fields.custom_currency_exchange_rate', {
        min: 0.000001,
      }),
      sw('DisplayInCurrencyEnabled', 'settings.fields.display_in_currency'),
      sw('DisplayTokenStatEnabled', 'settings.fields.display_token_stat'),
      sw('DefaultCollapseSidebar', 'settings.fields.default_collapse_sidebar'),
      sw('DemoSiteEnabled', 'settings.fields.demo_site'),
      sw('SelfUseModeEnabled', 'settings.fields.self_use_mode'),
    ],
  },
  {
    id: 'drawing',
    title: 'settings.sections.drawing',
    fields: [
      sw('DrawingEnabled', 'settings.fields.drawing_enabled'),
      sw('TaskEnabled', 'settings.fields.task_enabled'),
      sw('MjNotifyEnabled', 'settings.fields.mj_notify'),
      sw('MjAccountFilterEnabled', 'settings.fields.mj_account_filter'),
      sw('MjForwardUrlEnabled', 'settings.fields.mj_forward_url'),
      sw('MjModeClearEnabled', 'settings.fields.mj_mode_clear'),
      sw('MjActionCheckSuccessEnabled', 'settings.fields.mj_action_check'),
    ],
  },
  {
    id: 'sensitive',
    title: 'settings.sections.sensitive',
    fields: [
      sw('CheckSensitiveEnabled', 'settings.fields.check_sensitive', { help: 'settings.help.sensitive_check' }),
      sw('CheckSensitiveOnPromptEnabled', 'settings.fields.check_sensitive_prompt', {
        help: 'settings.help.sensitive_prompt',
      }),
      sw('StopOnSensitiveEnabled', 'settings.fields.stop_on_sensitive', { help: 'settings.help.sensitive_stop' }),
      area('SensitiveWords', 'settings.fields.sensitive_words', { help: 'settings.help.sensitive_words' }),
    ],
  },
  {
    id: 'log',
    title: 'settings.sections.log',
    fields: [
      sw('LogConsumeEnabled', 'settings.fields.log_consume'),
      int('LogRetentionDays', 'settings.fields.log_retention_days', { min: 0, help: 'settings.help.log_retention' }),
    ],
  },
  {
    id: 'dashboard',
    title: 'settings.sections.dashboard',
    fields: [
      sw('DataExportEnabled', 'settings.fields.data_export', { help: 'settings.help.data_export' }),
      int('DataExportInterval', 'settings.fields.data_export_interval', {
        min: 1,
        help: 'settings.help.data_export_interval',
      }),
      {
        key: 'DataExportDefaultTime',
        kind: 'select',
        label: 'settings.fields.data_export_default_time',
        choices: [
          { id: 'hour', name: 'settings.choices.hour' },
          { id: 'day', name: 'settings.choices.day' },
          { id: 'week', name: 'settings.choices.week' },
        ],
      },
    ],
  },
  {
    id: 'monitoring',
    title: 'settings.sections.monitoring',
    fields: [
      num('ChannelDisableThreshold', 'settings.fields.channel_disable_threshold', { min: 0 }),
      int('QuotaRemindThreshold', 'settings.fields.quota_remind_threshold', { min: 0 }),
      sw('AutomaticDisableChannelEnabled', 'settings.fields.auto_disable_channel'),
      sw('AutomaticEnableChannelEnabled', 'settings.fields.auto_enable_channel'),
      sw('monitor_setting.auto_test_channel_enabled', 'settings.fields.auto_test_channel'),
      int('monitor_setting.auto_test_channel_minutes', 'settings.fields.auto_test_channel_minutes', { min: 1 }),
      text('AutomaticDisableStatusCodes', 'settings.fields.auto_disable_status_codes'),
      text('AutomaticRetryStatusCodes', 'settings.fields.auto_retry_status_codes'),
      area('AutomaticDisableKeywords', 'settings.fields.auto_disable_keywords', { help: 'settings.help.one_per_line' }),
      sw('circuit_setting.enabled', 'settings.fields.circuit_enabled', { help: 'settings.help.circuit_enabled' }),
      int('circuit_setting.failure_threshold', 'settings.fields.circuit_failure_threshold', { min: 1, max: 1000 }),
      int('circuit_setting.window_seconds', 'settings.fields.circuit_window_seconds', { min: 1, max: 86400 }),
      int('circuit_setting.cooldown_seconds', 'settings.fields.circuit_cooldown_seconds', { min: 1, max: 86400 }),
      int('circuit_setting.max_cooldown_seconds', 'settings.fields.circuit_max_cooldown_seconds', {
        min: 1,
        max: 604800,
      }),
      sw('circuit_setting.route_header', 'settings.fields.circuit_route_header', {
        help: 'settings.help.circuit_route_header',
      }),
    ],
  },
  {
    id: 'quota',
    title: 'settings.sections.quota',
    fields: [
      int('QuotaForNewUser', 'settings.fields.quota_for_new_user', { min: 0 }),
      int('PreConsumedQuota', 'settings.fields.pre_consumed_quota', { min: 0 }),
      json('quota_setting.default_completion_tokens', 'settings.fields.default_completion_tokens', {
        help: 'settings.help.default_completion_tokens',
      }),
      int('QuotaForInviter', 'settings.fields.quota_for_inviter', { min: 0 }),
      int('QuotaForInvitee', 'settings.fields.quota_for_invitee', { min: 0 }),
      text('quota_setting.period_timezone', 'periods.timezone', { help: 'periods.timezone_help' }),
      sw('checkin_setting.enabled', 'settings.fields.checkin_enabled', { help: 'settings.help.checkin_help' }),
      int('checkin_setting.min_quota', 'settings.fields.checkin_min_quota', { min: 0 }),
      int('checkin_setting.max_quota', 'settings.fields.checkin_max_quota', { min: 0 }),
    ],
  },
  {
    id: 'chats',
    title: 'settings.sections.chats',
    fields: [json('Chats', 'settings.fields.chats', { help: 'settings.help.chats' })],
  },
  {
    id: 'groups',
    title: 'settings.sections.groups',
    fields: [
      json('GroupRatio', 'settings.fields.group_ratio'),
      json('UserUsableGroups', 'settings.fields.user_usable_groups'),
      json('GroupGroupRatio', 'settings.fields.group_group_ratio'),
      json('AutoGroups', 'settings.fields.auto_groups'),
      json('TopupGroupRatio', 'settings.fields.topup_group_ratio'),
      sw('DefaultUseAutoGroup', 'settings.fields.default_use_auto_group'),
    ],
  },
];

/** Console tab: the dashboard's Uptime Kuma panel (console_setting.uptime_kuma_*). */
export const UPTIME_SECTION: OptionSectionDef = {
  id: 'uptime',
  title: 'settings.sections.uptime',
  fields: [
    sw('console_setting.uptime_kuma_enabled', 'settings.fields.uptime_enabled'),
    json('console_setting.uptime_kuma_groups', 'settings.fields.uptime_groups', {
      help: 'settings.help.uptime_groups',
    }),
  ],
};

/** Operation tab, ratio sub-tab "model ratio settings": the price maps as JSON. */
export const MODEL_RATIO_SECTION: OptionSectionDef = {
  id: 'model_ratio',
  title: 'settings.sections.model_ratio',
  fields: [
    json('ModelPrice', 'settings.fields.model_price', { help: 'settings.help.model_price' }),
    json('ModelRatio', 'settings.fields.model_ratio', { help: 'settings.help.model_ratio' }),
    json('CacheRatio', 'settings.fields.cache_ratio'),
    json('CompletionRatio', 'settings.fields.completion_ratio', { help: 'settings.help.completion_ratio' }),
    json('ImageRatio', 'settings.fields.image_ratio'),
    json('AudioRatio', 'settings.fields.audio_ratio'),
    json('AudioCompletionRatio', 'settings.fields.audio_completion_ratio'),
    text('ModelCatalogueUpstreamURL', 'settings.fields.model_catalogue_url', {
      help: 'settings.help.model_catalogue_url',
    }),
  ],
};

/** Rate limit tab (spec doc 2 §5: count ≥ 0 with 0 unlimited, success count ≥ 1, duration ≥ 0). */
export const RATE_LIMIT_SECTIONS: OptionSectionDef[] = [
  {
    id: 'rate_limit',
    title: 'settings.sections.rate_limit',
    fields: [
      sw('ModelRequestRateLimitEnabled', 'settings.fields.rate_limit_enabled'),
      int('ModelRequestRateLimitDurationMinutes', 'settings.fields.rate_limit_duration', { min: 0 }),
      int('ModelRequestRateLimitCount', 'settings.fields.rate_limit_count', {
        min: 0,
        help: 'settings.help.rate_limit_count',
      }),
      int('ModelRequestRateLimitSuccessCount', 'settings.fields.rate_limit_success_count', { min: 1 }),
      json('ModelRequestRateLimitGroup', 'settings.fields.rate_limit_group', {
        help: 'settings.help.rate_limit_group',
      }),
    ],
  },
  {
    id: 'rate_limit_groups',
    title: 'settings.sections.rate_limit_groups',
    fields: [
      json('rate_limit_setting.groups', 'settings.fields.rate_limit_groups', {
        help: 'settings.help.rate_limit_groups',
      }),
    ],
  },
];

/** Models tab: global, Gemini and Claude settings (spec doc 2 §3, §5 budget percentage 0.1-1, ping ≥ 1 s). */
export const MODEL_SECTIONS: OptionSectionDef[] = [
  {
    id: 'global',
    title: 'settings.sections.global',
    fields: [
      sw('global.pass_through_request_enabled', 'settings.fields.pass_through', { help: 'settings.help.pass_through' }),
      sw('general_setting.ping_interval_enabled', 'settings.fields.ping_interval_enabled'),
      int('general_setting.ping_interval_seconds', 'settings.fields.ping_interval_seconds', { min: 1 }),
      int('StreamCacheQueueLength', 'settings.fields.stream_cache_queue_length', {
        min: 0,
        help: 'settings.help.stream_cache_queue_length',
      }),
    ],
  },
  {
    id: 'gemini',
    title: 'settings.sections.gemini',
    fields: [
      json('gemini.safety_settings', 'settings.fields.gemini_safety'),
      json('gemini.version_settings', 'settings.fields.gemini_version'),
      json('gemini.supported_imagine_models', 'settings.fields.gemini_imagine_models'),
      sw('gemini.thinking_adapter_enabled', 'settings.fields.thinking_adapter'),
      num('gemini.thinking_adapter_budget_tokens_percentage', 'settings.fields.thinking_budget', {
        min: 0.1,
        max: 1,
        step: 0.1,
        help: 'settings.help.gemini_budget',
      }),
    ],
  },
  {
    id: 'claude',
    title: 'settings.sections.claude',
    fields: [
      json('claude.model_headers_settings', 'settings.fields.claude_headers'),
      json('claude.default_max_tokens', 'settings.fields.claude_max_tokens', {
        help: 'settings.help.claude_max_tokens',
      }),
      sw('claude.thinking_adapter_enabled', 'settings.fields.thinking_adapter'),
      num('claude.thinking_adapter_budget_tokens_percentage', 'settings.fields.thinking_budget', {
        min: 0.1,
        max: 1,
        step: 0.1,
      }),
    ],
  },
];

/** System tab (system options: site address, sign-in, mail, OAuth providers, human check, payment). */
export const SYSTEM_SECTIONS: OptionSectionDef[] = [
  {
    id: 'system_general',
    title: 'settings.sections.system_general',
    fields: [text('ServerAddress', 'settings.fields.server_address')],
  },
  {
    // What the gateway may fetch when a URL comes from a user or an upstream (webhooks, notifyHook, images).
    id: 'fetch',
    title: 'settings.sections.fetch',
    fields: [
      sw('fetch_setting.enable_ssrf_protection', 'settings.fields.ssrf_protection', {
        help: 'settings.help.ssrf_protection',
      }),
      sw('fetch_setting.allow_private_ip', 'settings.fields.allow_private_ip', {
        help: 'settings.help.allow_private_ip',
      }),
      json('fetch_setting.allowed_ports', 'settings.fields.allowed_ports', { help: 'settings.help.allowed_ports' }),
      sw('fetch_setting.domain_filter_mode', 'settings.fields.domain_filter_mode', {
        help: 'settings.help.domain_filter_mode',
      }),
      json('fetch_setting.domain_list', 'settings.fields.domain_list', { help: 'settings.help.domain_list' }),
      sw('fetch_setting.ip_filter_mode', 'settings.fields.ip_filter_mode', { help: 'settings.help.ip_filter_mode' }),
      json('fetch_setting.ip_list', 'settings.fields.ip_list', { help: 'settings.help.ip_list' }),
      sw('fetch_setting.apply_ip_filter_for_domain', 'settings.fields.apply_ip_filter_for_domain', {
        help: 'settings.help.apply_ip_filter_for_domain',
      }),
    ],
  },
  {
    id: 'login',
    title: 'settings.sections.login',
    fields: [
      sw('PasswordLoginEnabled', 'settings.fields.password_login', {
        confirmOff: { title: 'settings.confirm.password_login_title', content: 'settings.confirm.password_login' },
      }),
      sw('PasswordRegisterEnabled', 'settings.fields.password_register'),
      sw('RegisterEnabled', 'settings.fields.register'),
      sw('EmailVerificationEnabled', 'settings.fields.email_verification'),
      sw('GitHubOAuthEnabled', 'settings.fields.github_oauth'),
      sw('oidc.enabled', 'settings.fields.oidc'),
      sw('LinuxDOOAuthEnabled', 'settings.fields.linuxdo_oauth'),
      sw('discord.enabled', 'settings.fields.discord_oauth'),
      sw('TelegramOAuthEnabled', 'settings.fields.telegram_oauth'),
      sw('WeChatAuthEnabled', 'settings.fields.wechat_auth'),
      sw('TurnstileCheckEnabled', 'settings.fields.turnstile'),
      sw('TwoFactorRequiredForAdmins', 'settings.fields.two_factor_admins', {
        help: 'settings.help.two_factor_admins',
      }),
    ],
  },
  {
    id: 'email_domain',
    title: 'settings.sections.email_domain',
    fields: [
      sw('EmailDomainRestrictionEnabled', 'settings.fields.email_domain_restriction'),
      sw('EmailAliasRestrictionEnabled', 'settings.fields.email_alias_restriction'),
      area('EmailDomainWhitelist', 'settings.fields.email_domain_whitelist', { help: 'settings.help.comma_separated' }),
    ],
  },
  {
    id: 'smtp',
    title: 'settings.sections.smtp',
    fields: [
      text('SMTPServer', 'settings.fields.smtp_server'),
      int('SMTPPort', 'settings.fields.smtp_port', { min: 1, max: 65535 }),
      text('SMTPAccount', 'settings.fields.smtp_account'),
      text('SMTPFrom', 'settings.fields.smtp_from'),
      secret('SMTPToken', 'settings.fields.smtp_token'),
      sw('SMTPSSLEnabled', 'settings.fields.smtp_ssl'),
    ],
  },
  {
    id: 'github',
    title: 'settings.sections.github',
    fields: [
      text('GitHubClientId', 'settings.fields.client_id'),
      secret('GitHubClientSecret', 'settings.fields.client_secret'),
    ],
  },
  {
    id: 'oidc',
    title: 'settings.sections.oidc',
    fields: [
      text('oidc.well_known', 'settings.fields.oidc_well_known'),
      text('oidc.client_id', 'settings.fields.client_id'),
      secret('oidc.client_secret', 'settings.fields.client_secret'),
      text('oidc.authorization_endpoint', 'settings.fields.oidc_authorization_endpoint'),
      text('oidc.token_endpoint', 'settings.fields.oidc_token_endpoint'),
      text('oidc.user_info_endpoint', 'settings.fields.oidc_user_info_endpoint'),
    ],
  },
  {
    id: 'passkey',
    title: 'settings.sections.passkey',
    fields: [
      sw('passkey.enabled', 'settings.fields.passkey_enabled'),
      text('passkey.rp_display_name', 'settings.fields.passkey_display_name', {
        help: 'settings.help.passkey_display_name',
      }),
      text('passkey.rp_id', 'settings.fields.passkey_rp_id', { help: 'settings.help.passkey_rp_id' }),
      text('passkey.origins', 'settings.fields.passkey_origins', { help: 'settings.help.passkey_origins' }),
      sw('passkey.allow_insecure_origin', 'settings.fields.passkey_allow_insecure', {
        help: 'settings.help.passkey_allow_insecure',
      }),
      {
        key: 'passkey.user_verification',
        kind: 'select',
        label: 'settings.fields.passkey_user_verification',
        choices: [
          { id: 'required', name: 'settings.choices.uv_required' },
          { id: 'preferred', name: 'settings.choices.uv_preferred' },
          { id: 'discouraged', name: 'settings.choices.uv_discouraged' },
        ],
      },
      {
        key: 'passkey.attachment_preference',
        kind: 'select',
        label: 'settings.fields.passkey_attachment',
        choices: [
          { id: '', name: 'settings.choices.attachment_any' },
          { id: 'platform', name: 'settings.choices.attachment_platform' },
          { id: 'cross-platform', name: 'settings.choices.attachment_cross_platform' },
        ],
      },
    ],
  },
  {
    id: 'linuxdo',
    title: 'settings.sections.linuxdo',
    fields: [
      text('LinuxDOClientId', 'settings.fields.client_id'),
      secret('LinuxDOClientSecret', 'settings.fields.client_secret'),
      int('LinuxDOMinimumTrustLevel', 'settings.fields.linuxdo_trust_level', { min: 0, max: 4 }),
    ],
  },
  {
    id: 'discord',
    title: 'settings.sections.discord',
    fields: [
      text('discord.client_id', 'settings.fields.client_id'),
      secret('discord.client_secret', 'settings.fields.client_secret'),
    ],
  },
  {
    id: 'telegram',
    title: 'settings.sections.telegram',
    fields: [
      text('TelegramBotName', 'settings.fields.telegram_bot_name'),
      secret('TelegramBotToken', 'settings.fields.telegram_bot_token'),
    ],
  },
  {
    id: 'wechat',
    title: 'settings.sections.wechat',
    fields: [
      text('WeChatServerAddress', 'settings.fields.wechat_server_address'),
      secret('WeChatServerToken', 'settings.fields.wechat_server_token'),
      text('WeChatAccountQRCodeImageURL', 'settings.fields.wechat_qrcode'),
    ],
  },
  {
    id: 'turnstile',
    title: 'settings.sections.turnstile',
    fields: [
      text('TurnstileSiteKey', 'settings.fields.turnstile_site_key'),
      secret('TurnstileSecretKey', 'settings.fields.turnstile_secret_key'),
    ],
  },
  {
    id: 'payment',
    title: 'settings.sections.payment',
    fields: [
      text('PayAddress', 'settings.fields.pay_address'),
      text('CustomCallbackAddress', 'settings.fields.custom_callback_address'),
      text('EpayId', 'settings.fields.epay_id'),
      secret('EpayKey', 'settings.fields.epay_key'),
      num('Price', 'settings.fields.price', { min: 0 }),
      int('MinTopUp', 'settings.fields.min_top_up', { min: 0 }),
      json('PayMethods', 'settings.fields.pay_methods'),
      json('payment_setting.amount_options', 'settings.fields.amount_options'),
    ],
  },
];

/** Other tab: site content. */
export const OTHER_SECTIONS: OptionSectionDef[] = [
  {
    id: 'site',
    title: 'settings.sections.site',
    fields: [
      text('SystemName', 'settings.fields.system_name'),
      text('Logo', 'settings.fields.logo'),
      area('Notice', 'settings.fields.notice', { help: 'settings.help.markdown' }),
      area('HomePageContent', 'settings.fields.home_page_content', { help: 'settings.help.markdown_or_url' }),
      area('About', 'settings.fields.about', { help: 'settings.help.markdown_or_url' }),
      area('Footer', 'settings.fields.footer', { help: 'settings.help.footer' }),
    ],
  },
];

/** Operation tab: channel affinity (the cache statistics and clear button render under it). */
export const CHANNEL_AFFINITY_SECTION: OptionSectionDef = {
  id: 'channel_affinity',
  title: 'settings.affinity.section',
  fields: [
    sw('channel_affinity_setting.enabled', 'settings.affinity.enabled'),
    sw('channel_affinity_setting.switch_on_success', 'settings.affinity.switch_on_success'),
    int('channel_affinity_setting.max_entries', 'settings.affinity.max_entries', { min: 0 }),
    int('channel_affinity_setting.default_ttl_seconds', 'settings.affinity.default_ttl_seconds', { min: 1 }),
    json('channel_affinity_setting.rules', 'settings.affinity.rules', { help: 'settings.affinity.rules_help' }),
  ],
};
