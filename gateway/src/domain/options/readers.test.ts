import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OPTION_DEFINITIONS } from './definitions.ts';

/**
 * No inert switch: every option in the table must be read by code that acts on it. An option that is only
 * defined, edited in the settings screens, translated, or handed out by /api/status is a promise nothing
 * keeps. The walk looks for the key as a string literal in the sources of the gateway, the operator and the
 * console, leaving out the places that only store, edit, describe or relay options.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

const SOURCE_DIRS = ['gateway/src', 'operator/src', 'console/src'];

/** Files that define, validate, store, edit, translate or relay options: none of them acts on one. */
const NOT_READERS = [
  'gateway/src/domain/options/',
  'gateway/src/api/option.ts',
  'gateway/src/domain/status.ts',
  'console/src/pages/settings/',
  'console/src/i18n/',
  'console/src/status/status.ts',
];

/**
 * Options whose only consumer is the console, through a field of /api/status: the console must read the
 * field (outside its status type and defaults) for the option to count as read.
 */
const READ_BY_CONSOLE_THROUGH_STATUS: Record<string, string> = {
  Logo: 'logo',
  Footer: 'footer_html',
  TopUpLink: 'top_up_link',
  'general_setting.docs_link': 'docs_link',
  ChatLink: 'chat_link',
  ChatLink2: 'chat_link2',
  Chats: 'chats',
  DefaultCollapseSidebar: 'default_collapse_sidebar',
  HeaderNavModules: 'HeaderNavModules',
  SidebarModulesAdmin: 'SidebarModulesAdmin',
  'console_setting.api_info': 'api_info',
  'console_setting.api_info_enabled': 'api_info_enabled',
  'console_setting.announcements': 'announcements',
  'console_setting.announcements_enabled': 'announcements_enabled',
  'console_setting.faq': 'faq',
  'console_setting.faq_enabled': 'faq_enabled',
  'general_setting.quota_display_type': 'quota_display_type',
  'general_setting.custom_currency_symbol': 'custom_currency_symbol',
  'general_setting.custom_currency_exchange_rate': 'custom_currency_exchange_rate',
  DrawingEnabled: 'enable_drawing',
  TaskEnabled: 'enable_task',
  DataExportDefaultTime: 'data_export_default_time',
  WeChatAccountQRCodeImageURL: 'wechat_qrcode',
  TelegramBotName: 'telegram_bot_name',
  TurnstileSiteKey: 'turnstile_site_key',
  'oidc.authorization_endpoint': 'oidc_authorization_endpoint',
  DefaultUseAutoGroup: 'default_use_auto_group',
  DemoSiteEnabled: 'demo_site_enabled',
};

function sources(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const relative = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(relative);
      } else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) {
        files.set(relative, readFileSync(path.join(root, relative), 'utf8'));
      }
    }
  };
  for (const dir of SOURCE_DIRS) walk(dir);
  return files;
}

/** A key as a string literal, or, when it is an identifier, as a property read (`maps.ModelRatio`, `status.logo`). */
const needles = (name: string) => [
  `'${name}'`,
  `"${name}"`,
  `\`${name}\``,
  ...(/^[A-Za-z_]\w*$/.test(name) ? [`.${name}`, `?.${name}`] : []),
];

function readers(files: Map<string, string>, name: string, skip: readonly string[]): string[] {
  return [...files]
    .filter(([file]) => !skip.some((prefix) => file.startsWith(prefix)))
    .filter(([, text]) => needles(name).some((needle) => text.includes(needle)))
    .map(([file]) => file);
}

describe('the option table', () => {
  const files = sources();

  it('holds no option that nothing reads', () => {
    const unread = OPTION_DEFINITIONS.map((d) => d.key).filter((key) => {
      if (readers(files, key, NOT_READERS).length > 0) return false;
      const field = READ_BY_CONSOLE_THROUGH_STATUS[key];
      return field === undefined || readers(files, field, [...NOT_READERS, 'gateway/', 'operator/']).length === 0;
    });
    expect(unread).toEqual([]);
  });

  it('finds a reader where there is one and none where there is none (the walk itself)', () => {
    expect(readers(files, 'RetryTimes', NOT_READERS)).toContain('gateway/src/relay/pipeline.ts');
    expect(readers(files, 'an option nobody has ever defined', NOT_READERS)).toEqual([]);
  });
});
