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
 * good answer enables it again, a bad one doubles the wait. Runs on one pod
 * (AutomaticEnableChannelEnabled gates it, as it gates every automatic re-enable).
 */
export class ChannelRecovery {
  readonly #deps: ChannelRecoveryDeps;
  /** Failed re-tests per channel and when the next one is due (ms). */
  readonly #backoff = new Map<number, { failures: number; dueAt: number }>();

  constructor(deps: ChannelRecoveryDeps) {
    this.#deps = deps;
  }

  /** Re-tests the channels that are due; answers the ids re-enabled. */
  async runOnce(signal?: AbortSignal): Promise<number[]> {
    const { channels, tester, options, cooldownMs } = this.#deps;
    if (!options.getBoolean('AutomaticEnableChannelEnabled')) return [];
    const disabled = await channels.autoDisabled();
    const ids = new Set(disabled.map((channel) => channel.id));
    for (const id of this.#backoff.keys()) if (!ids.has(id)) this.#backoff.delete(id);
    const recovered: number[] = [];
    for (const { id, since } of disabled) {
      if (signal?.aborted) break;
      const state = this.#backoff.get(id) ?? { failures: 0, dueAt: since * 1000 + cooldownMs };
      this.#backoff.set(id, state);
      if (Date.now() < state.dueAt) continue;
      const result = await tester.test(id).catch(() => undefined);
      if (result?.success) {
        this.#backoff.delete(id);
        recovered.push(id);
        continue;
      }
      state.failures++;
      state.dueAt = Date.now() + Math.min(cooldownMs * 2 ** state.failures, MAX_COOLDOWN_MS);
    }
    return recovered;
  }
}
