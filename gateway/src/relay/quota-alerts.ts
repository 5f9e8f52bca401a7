import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Notifier } from '../domain/notifications.ts';
import type { OptionsService } from '../domain/options/index.ts';
import type { Database } from '../store/database.ts';
import { findLiveUserById } from '../store/repositories/users.ts';
import type { KeyIdentity } from './auth/key-cache.ts';

export interface QuotaAlertsDeps {
  db: Kysely<Database>;
  notifier: Notifier;
  options: OptionsService;
  logger: Logger;
}

/**
 * Tells a user when a charge takes their wallet below their alert threshold (reference §5.4): their
 * own `quota_warning_threshold`, else the QuotaRemindThreshold option. Only the charge that crosses
 * the line alerts, and the Notifier's per-user limit stops bursts from several pods; sending never
 * delays or fails the request.
 */
export class QuotaAlerts {
  readonly #deps: QuotaAlertsDeps;
  readonly #sending = new Set<Promise<void>>();

  constructor(deps: QuotaAlertsDeps) {
    this.#deps = deps;
  }

  /** After a charge of `charged`, with what the wallet holds now (undefined: not known on this pod). */
  charged(user: KeyIdentity['user'], charged: number, balanceAfter: number | undefined): void {
    if (charged <= 0 || balanceAfter === undefined) return;
    const threshold = user.quotaWarningThreshold ?? this.#deps.options.getNumber('QuotaRemindThreshold');
    if (balanceAfter >= threshold || balanceAfter + charged < threshold) return;
    const sending = this.#send(user.id, balanceAfter).finally(() => this.#sending.delete(sending));
    this.#sending.add(sending);
  }

  /** Waits for alerts being sent, for a clean shutdown. */
  async close(): Promise<void> {
    await Promise.all(this.#sending);
  }

  async #send(userId: number, balance: number): Promise<void> {
    const { db, notifier, options, logger } = this.#deps;
    try {
      const user = await findLiveUserById(db, userId);
      if (!user) return;
      const usd = (balance / options.getNumber('QuotaPerUnit')).toFixed(2);
      await notifier.notify(user, {
        type: 'quota_exceed',
        title: '额度不足提醒 / Your quota is running low',
        content:
          `您的剩余额度为 ${balance}（约 $${usd}），已低于提醒阈值，请及时充值以免服务中断。\n\n` +
          `Your remaining quota is ${balance} (about $${usd}), below your alert threshold. Top up to keep your requests running.`,
        values: [balance],
      });
    } catch (error) {
      logger.warn({ err: error, userId }, 'quota alert not sent');
    }
  }
}
