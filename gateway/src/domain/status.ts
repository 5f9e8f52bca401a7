import type { OptionsService } from './options/index.ts';
import type { SetupService } from './setup.ts';

/**
 * The public status object the console loads first (spec doc 1 §3, reference §7.3). Everything in it
 * is safe for visitors: flags, public client ids, display settings, never a secret.
 */
export class StatusService {
  readonly #options: OptionsService;
  readonly #setup: SetupService;
  readonly #version: string;
  readonly #startTime: number;

  constructor(deps: { options: OptionsService; setup: SetupService; version: string; startTime: number }) {
    this.#options = deps.options;
    this.#setup = deps.setup;
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
      stripe_unit_price: num('StripeUnitPrice'),
      pay_methods: o.getJson('PayMethods'),
      enable_online_topup: this.#onlineTopUpEnabled(),
      enable_stripe_topup: text('StripeApiSecret') !== '' && text('StripePriceId') !== '',

      enable_drawing: flag('DrawingEnabled'),
      enable_task: flag('TaskEnabled'),
      enable_data_export: flag('DataExportEnabled'),
      data_export_default_time: text('DataExportDefaultTime'),
      default_collapse_sidebar: flag('DefaultCollapseSidebar'),
      mj_notify_enabled: flag('MjNotifyEnabled'),
      self_use_mode_enabled: flag('SelfUseModeEnabled'),
      demo_site_enabled: flag('DemoSiteEnabled'),
      default_use_auto_group: flag('DefaultUseAutoGroup'),
      checkin_enabled: flag('checkin_setting.enabled'),

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
      discord_oauth: flag('discord.enabled'),
      discord_client_id: text('discord.client_id'),
      passkey_login: flag('passkey.enabled'),

      user_agreement_enabled: text('legal.user_agreement') !== '',
      privacy_policy_enabled: text('legal.privacy_policy') !== '',
      HeaderNavModules: o.getJson('HeaderNavModules'),
      SidebarModulesAdmin: o.getJson('SidebarModulesAdmin'),
      ...this.#consoleSections(),
    };
  }

  /** Console home sections: a flag each, and the content only when the section is on. */
  #consoleSections(): Record<string, unknown> {
    const sections: Record<string, unknown> = {};
    for (const name of ['api_info', 'announcements', 'faq', 'uptime_kuma']) {
      const enabled = this.#options.getBoolean(`console_setting.${name}_enabled`);
      sections[`${name}_enabled`] = enabled;
      if (enabled && name !== 'uptime_kuma') sections[name] = this.#options.getJson(`console_setting.${name}`);
    }
    return sections;
  }

  /** Online top-up works only when a payment provider is fully configured. */
  #onlineTopUpEnabled(): boolean {
    const o = this.#options;
    return o.get('PayAddress') !== '' && o.get('EpayId') !== '' && o.get('EpayKey') !== '';
  }
}
