import { type CustomProviderService, publicProviderView } from './accounts/oauth/custom-providers.ts';
import type { OptionsService } from './options/index.ts';
import type { SetupService } from './setup.ts';
import { uptimeGroups } from './uptime/groups.ts';

/**
 * Features new-api's front ends offer when these flags are on, and that Tollgate does not serve (no
 * route behind them): Stripe payments. Always off, so those front ends hide them; their options are not
 * in the option table either, so nothing can switch them on.
 */
const NOT_OFFERED = {
  enable_stripe_topup: false,
} as const;

/**
 * The public status object the console loads first (spec doc 1 §3, reference §7.3). Everything in it
 * is safe for visitors: flags, public client ids, display settings, never a secret.
 */
export class StatusService {
  readonly #options: OptionsService;
  readonly #setup: SetupService;
  readonly #customProviders: CustomProviderService;
  readonly #version: string;
  readonly #startTime: number;

  constructor(deps: {
    options: OptionsService;
    setup: SetupService;
    customProviders: CustomProviderService;
    version: string;
    startTime: number;
  }) {
    this.#options = deps.options;
    this.#setup = deps.setup;
    this.#customProviders = deps.customProviders;
    this.#version = deps.version;
    this.#startTime = deps.startTime;
  }

  async publicStatus(): Promise<Record<string, unknown>> {
    const o = this.#options;
    const flag = (key: string) => o.getBoolean(key);
    const text = (key: string) => o.get(key);
    const num = (key: string) => o.getNumber(key);
    return {
      version: this.#version,
      start_time: this.#startTime,
      setup: await this.#setup.isDone(),

      system_name: text('SystemName'),
      logo: text('Logo'),
      footer_html: text('Footer'),
      server_address: text('ServerAddress'),
      docs_link: text('general_setting.docs_link'),
      chat_link: text('ChatLink'),
      chat_link2: text('ChatLink2'),
      chats: o.getJson('Chats'),
      top_up_link: text('TopUpLink'),

      quota_per_unit: num('QuotaPerUnit'),
      display_in_currency: flag('DisplayInCurrencyEnabled'),
      quota_display_type: text('general_setting.quota_display_type'),
      custom_currency_symbol: text('general_setting.custom_currency_symbol'),
      custom_currency_exchange_rate: num('general_setting.custom_currency_exchange_rate'),
      price: num('Price'),
      usd_exchange_rate: num('USDExchangeRate'),
      min_topup: num('MinTopUp'),
      pay_methods: o.getJson('PayMethods'),
      enable_online_topup: this.#onlineTopUpEnabled(),

      enable_drawing: flag('DrawingEnabled'),
      enable_task: flag('TaskEnabled'),
      enable_data_export: flag('DataExportEnabled'),
      data_export_default_time: text('DataExportDefaultTime'),
      default_collapse_sidebar: flag('DefaultCollapseSidebar'),
      mj_notify_enabled: flag('MjNotifyEnabled'),
      self_use_mode_enabled: flag('SelfUseModeEnabled'),
      demo_site_enabled: flag('DemoSiteEnabled'),
      default_use_auto_group: flag('DefaultUseAutoGroup'),

      email_verification: flag('EmailVerificationEnabled'),
      turnstile_check: flag('TurnstileCheckEnabled'),
      turnstile_site_key: text('TurnstileSiteKey'),
      github_oauth: flag('GitHubOAuthEnabled'),
      github_client_id: text('GitHubClientId'),
      oidc_enabled: flag('oidc.enabled'),
      oidc_client_id: text('oidc.client_id'),
      oidc_authorization_endpoint: text('oidc.authorization_endpoint'),
      linuxdo_oauth: flag('LinuxDOOAuthEnabled'),
      linuxdo_client_id: text('LinuxDOClientId'),
      linuxdo_minimum_trust_level: num('LinuxDOMinimumTrustLevel'),
      wechat_login: flag('WeChatAuthEnabled'),
      wechat_qrcode: text('WeChatAccountQRCodeImageURL'),
      telegram_oauth: flag('TelegramOAuthEnabled'),
      telegram_bot_name: text('TelegramBotName'),
      // The passkey settings as configured (empty RP id and origins: each request's own host).
      passkey_login: flag('passkey.enabled'),
      passkey_display_name: text('passkey.rp_display_name'),
      passkey_rp_id: text('passkey.rp_id'),
      passkey_origins: text('passkey.origins'),
      passkey_allow_insecure: flag('passkey.allow_insecure_origin'),
      passkey_user_verification: text('passkey.user_verification'),
      passkey_attachment: text('passkey.attachment_preference'),
      // On only when a sign-in can work: new-api's front end shows the button on this flag alone.
      discord_oauth:
        flag('discord.enabled') && text('discord.client_id') !== '' && text('discord.client_secret') !== '',
      discord_client_id: text('discord.client_id'),
      // Enabled custom providers, with what the login page needs to send visitors to them.
      custom_oauth_providers: (await this.#customProviders.listEnabled()).map(publicProviderView),

      user_agreement_enabled: text('legal.user_agreement') !== '',
      privacy_policy_enabled: text('legal.privacy_policy') !== '',
      // JSON text, as new-api answers them: its front ends JSON.parse these, and "" means their defaults.
      HeaderNavModules: this.#jsonText('HeaderNavModules'),
      SidebarModulesAdmin: this.#jsonText('SidebarModulesAdmin'),
      ...this.#consoleSections(),
      checkin_enabled: flag('checkin_setting.enabled'),
      // On only when there is a status page to show: the panel would otherwise stay empty.
      uptime_kuma_enabled: uptimeGroups(o).length > 0,
      ...NOT_OFFERED,
    };
  }

  /** A JSON option's text; "" when it holds nothing ({}, [] or empty), which new-api's front ends read as "use the defaults". */
  #jsonText(key: string): string {
    const value: unknown = this.#options.getJson(key);
    const empty = value === null || typeof value !== 'object' || Object.keys(value).length === 0;
    return empty ? '' : JSON.stringify(value);
  }

  /** Console home sections: a flag each, and the content (a list, as new-api answers it) only when on. */
  #consoleSections(): Record<string, unknown> {
    const sections: Record<string, unknown> = {};
    for (const name of ['api_info', 'announcements', 'faq']) {
      const enabled = this.#options.getBoolean(`console_setting.${name}_enabled`);
      sections[`${name}_enabled`] = enabled;
      if (enabled) sections[name] = this.#options.getJson(`console_setting.${name}`);
    }
    return sections;
  }

  /** Online top-up works only when a payment provider is fully configured. */
  #onlineTopUpEnabled(): boolean {
    const o = this.#options;
    return o.get('PayAddress') !== '' && o.get('EpayId') !== '' && o.get('EpayKey') !== '';
  }
}
