import type { ChannelService } from '../../domain/channels/service.ts';
import type { OptionsService } from '../../domain/options/index.ts';
import type { ChannelTester } from './channel-test.ts';

const MAX_COOLDOWN_MS = 3_600_000;

export interface ChannelRecoveryDeps {
  channels: ChannelService;
  tester: ChannelTester;
  options: OptionsService;
  /** First wait after a channel is disabled; doubles after every failed re-test, up to an hour. */
  cooldownMs: number;
}

/**
 * Half-open recovery of channels the gateway disabled (better than the reference, which waits for
 * the next test of all channels; §11 #7): after a cooldown one test request goes to the channel; a
 * good answer enables it again, a bad one doubles the wait. A multi-key channel recovers key by key:
 * each key the gateway disabled gets its own test and backoff, and a good one enables that key (and
 * the channel, when all its keys were off). Runs on one pod (AutomaticEnableChannelEnabled gates it, as
 * it gates every automatic re-enable).
 */
export class ChannelRecovery {
  readonly #deps: ChannelRecoveryDeps;
  /** Failed re-tests per channel (`<id>`) or key (`<id>:<key>`) and when the next one is due (ms). */
  readonly #backoff = new Map<string, { failures: number; dueAt: number }>();

  constructor(deps: ChannelRecoveryDeps) {
    this.#deps = deps;
  }

  /** Re-tests the channels and keys that are due; answers the ids of channels re-enabled (or with a key re-enabled). */
  async runOnce(signal?: AbortSignal): Promise<number[]> {
    const { channels, options } = this.#deps;
    if (!options.getBoolean('AutomaticEnableChannelEnabled')) return [];
    const disabled = await channels.autoDisabled();
    const targets: Array<{ slot: string; id: number; since: number; keyIndex?: number }> = [];
    for (const channel of disabled) {
      // A channel off for a reason of its own (not only its keys) is tested with a key it would use.
      if (channel.disabled && (channel.keys.length === 0 || !channel.keys.some((key) => key.since === channel.since)))
        targets.push({ slot: String(channel.id), id: channel.id, since: channel.since });
      for (const key of channel.keys)
        targets.push({ slot: `${channel.id}:${key.index}`, id: channel.id, since: key.since, keyIndex: key.index });
    }
    const slots = new Set(targets.map((target) => target.slot));
    for (const slot of this.#backoff.keys()) if (!slots.has(slot)) this.#backoff.delete(slot);
    const recovered = new Set<number>();
    for (const target of targets) {
      if (signal?.aborted) break;
      if (await this.#retest(target)) recovered.add(target.id);
    }
    return [...recovered];
  }

  async #retest(target: { slot: string; id: number; since: number; keyIndex?: number }): Promise<boolean> {
    const { tester, cooldownMs } = this.#deps;
    const state = this.#backoff.get(target.slot) ?? { failures: 0, dueAt: target.since * 1000 + cooldownMs };
    this.#backoff.set(target.slot, state);
    if (Date.now() < state.dueAt) return false;
    const result = await tester.test(target.id, { keyIndex: target.keyIndex }).catch(() => undefined);
    if (result?.success) {
      this.#backoff.delete(target.slot);
      return true;
    }
    state.failures++;
    state.dueAt = Date.now() + Math.min(cooldownMs * 2 ** state.failures, MAX_COOLDOWN_MS);
    return false;
  }
}
