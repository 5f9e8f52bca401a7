import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../../errors.ts';
import type { OptionsService } from '../../options/index.ts';
import { assertProviderReady, OAUTH_ERRORS } from './errors.ts';
import type { IdentityProvider } from './types.ts';

const label = 'Telegram';
/** Telegram's advice: refuse widget data older than a day, or a leaked sign-in link works forever. */
export const TELEGRAM_MAX_AGE_SECONDS = 86_400;

/** The Login Widget's fields as the browser passes them on: id, first_name, …, auth_date, hash. */
export type TelegramWidgetFields = Record<string, string>;

/**
 * Telegram Login Widget: no call to Telegram, the fields are signed by it. The hash is the
 * HMAC-SHA256 of the `key=value` lines sorted by key (all fields but `hash`), keyed with
 * SHA-256(bot token) (https://core.telegram.org/widgets/login#checking-authorization).
 */
export function telegramProvider(deps: {
  options: OptionsService;
  now?: () => number;
}): IdentityProvider<TelegramWidgetFields> {
  const { options } = deps;
  const now = deps.now ?? (() => Math.floor(Date.now() / 1000));
  return {
    label,
    home: { kind: 'column', column: 'telegram_id' },
    usernamePrefix: 'tg_',
    ensureEnabled() {
      assertProviderReady(label, options.getBoolean('TelegramOAuthEnabled'), [options.get('TelegramBotToken')]);
    },
    async exchange(fields) {
      const hash = fields.hash ?? '';
      if (!/^[0-9a-f]{64}$/i.test(hash)) throw new AppError(OAUTH_ERRORS.TELEGRAM_SIGNATURE_INVALID);
      const key = createHash('sha256').update(options.get('TelegramBotToken')).digest();
      const signed = Object.entries(fields).filter(([name]) => name !== 'hash');
      const authentic = (entries: Array<[string, string]>) => {
        const checkString = entries
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([name, value]) => `${name}=${value}`)
          .join('\n');
        return timingSafeEqual(createHmac('sha256', key).update(checkString).digest(), Buffer.from(hash, 'hex'));
      };
      // The console appends its own `lang` (spec doc 1 §7); Telegram did not sign it.
      const valid = authentic(signed) || ('lang' in fields && authentic(signed.filter(([name]) => name !== 'lang')));
      if (!valid) throw new AppError(OAUTH_ERRORS.TELEGRAM_SIGNATURE_INVALID);

      const authDate = Number(fields.auth_date);
      if (!Number.isSafeInteger(authDate) || now() - authDate > TELEGRAM_MAX_AGE_SECONDS) {
        throw new AppError(OAUTH_ERRORS.TELEGRAM_AUTH_EXPIRED);
      }
      const id = fields.id ?? '';
      if (!/^\d{1,20}$/.test(id)) throw new AppError(OAUTH_ERRORS.TELEGRAM_SIGNATURE_INVALID);
      const displayName = [fields.first_name, fields.last_name].filter((part) => part?.trim()).join(' ');
      return { providerUserId: id, username: fields.username || undefined, displayName: displayName || undefined };
    },
  };
}
