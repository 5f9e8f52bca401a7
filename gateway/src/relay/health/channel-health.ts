import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { CHANNEL_STATUS } from '../../domain/channels/input.ts';
import type { ChannelService } from '../../domain/channels/service.ts';
import type { Notification, Notifier } from '../../domain/notifications.ts';
import type { OptionsService } from '../../domain/options/index.ts';
import type { Database } from '../../store/database.ts';
import { findUserWithRoleAtLeast } from '../../store/repositories/users.ts';
import type { RelayMetrics } from '../metrics.ts';
import type { ChannelSnapshot } from '../types.ts';
import { type ChannelFailure, shouldDisableChannel } from './auto-disable.ts';

const ROOT_ROLE = 100;
/** Longest reason kept on the channel. */
const MAX_REASON_LENGTH = 500;

export interface ChannelHealthDeps {
  channels: ChannelService;
  options: OptionsService;
  metrics: RelayMetrics;
  logger: Logger;
  db: Kysely<Database>;
  notifier: Notifier;
}

/**
 * Turns upstream failures and test results into channel state (reference §4.4): a failure that
 * blames the channel disables it (or only the failing key of a multi-key channel), a good test
 * re-enables a channel the gateway disabled. Changes are stored, announced on the bus (every pod's
 * routing index drops the channel within a second) and told to the root user.
 */
export class ChannelHealth {
  readonly #deps: ChannelHealthDeps;
  /** One disable per channel (or key) at a time: a burst of failures makes one change. */
  readonly #pending = new Map<string, Promise<void>>();

  constructor(deps: ChannelHealthDeps) {
    this.#deps = deps;
  }

  /**
   * Applies the auto-disable rule to a failure on `channel` with key `keyIndex` (undefined: not the
   * key's fault, the whole channel's). Never throws.
   */
  failed(channel: ChannelSnapshot, keyIndex: number | undefined, failure: ChannelFailure): Promise<void> {
    const { options, channels, metrics, logger } = this.#deps;
    if (!channel.autoBan || !shouldDisableChannel(failure, options)) return Promise.resolve();
    const multiKey = channel.keys.length > 1 && keyIndex !== undefined;
    const slot = `${channel.id}:${multiKey ? keyIndex : '*'}`;
    const running = this.#pending.get(slot);
    if (running) return running;
    const reason = `HTTP ${failure.status}${failure.code ? ` ${failure.code}` : ''}: ${failure.message}`.slice(
      0,
      MAX_REASON_LENGTH,
    );
    const work = (async () => {
      const view = await channels.autoDisable(channel.id, reason, multiKey ? keyIndex : undefined);
      if (!view) return;
      const whole = view.status !== channel.status;
      metrics.autoDisabled(channel, whole ? 'channel' : 'key');
      logger.warn({ channel: channel.id, key: multiKey ? keyIndex : undefined, reason }, 'channel auto-disabled');
      if (whole) {
        await this.#tellRoot({
          type: 'channel_update',
          title: `渠道「${channel.name}」（#${channel.id}）已被自动禁用 / Channel disabled`,
          content: `渠道「${channel.name}」（#${channel.id}）已被自动禁用，原因：${reason}\n\nChannel "${channel.name}" (#${channel.id}) was disabled automatically: ${reason}`,
        });
      }
    })()
      .catch((error: unknown) => logger.warn({ err: error, channel: channel.id }, 'channel auto-disable not stored'))
      .finally(() => this.#pending.delete(slot));
    this.#pending.set(slot, work);
    return work;
  }

  /**
   * A good test of a channel the gateway disabled (with `keyIndex`, of that key of a multi-key channel):
   * enabled again when AutomaticEnableChannelEnabled is on. Root is told when the channel comes back.
   */
  async recovered(channel: ChannelSnapshot, keyIndex?: number): Promise<boolean> {
    if (!this.#deps.options.getBoolean('AutomaticEnableChannelEnabled')) return false;
    const view = await this.#deps.channels.autoEnable(channel.id, keyIndex);
    if (!view) return false;
    this.#deps.logger.info({ channel: channel.id, key: keyIndex }, 'channel re-enabled after a good test');
    if (channel.status !== CHANNEL_STATUS.autoDisabled) return true;
    await this.#tellRoot({
      type: 'channel_update',
      title: `渠道「${channel.name}」（#${channel.id}）已恢复 / Channel re-enabled`,
      content: `渠道「${channel.name}」（#${channel.id}）测试通过，已重新启用。\n\nChannel "${channel.name}" (#${channel.id}) tested well and was enabled again.`,
    });
    return true;
  }

  /** Waits for changes being stored, for a clean shutdown. */
  async close(): Promise<void> {
    await Promise.all(this.#pending.values());
  }

  async #tellRoot(notification: Notification): Promise<void> {
    try {
      const root = await findUserWithRoleAtLeast(this.#deps.db, ROOT_ROLE);
      if (root) await this.#deps.notifier.notify(root, notification);
    } catch (error) {
      this.#deps.logger.warn({ err: error }, 'channel notification not sent');
    }
  }
}
