import type { Logger } from 'pino';
import { runOnOnePod } from '../../cluster/index.ts';
import type { Config } from '../../config.ts';
import type { Services } from '../../services.ts';
import type { ShutdownStep } from '../../shutdown.ts';
import type { ChannelTester } from './channel-test.ts';
import { ChannelRecovery } from './recovery.ts';

/** How often the one pod running them looks whether a test run or a recovery re-test is due. */
const CHECK_INTERVAL_MS = 30_000;

/**
 * The background channel checks, each run by one pod at a time: the periodic test of all channels
 * (monitor_setting.auto_test_channel_* or CHANNEL_TEST_FREQUENCY, reference §4.5) and the recovery
 * re-tests of channels the gateway disabled.
 */
export function startHealthJobs(
  config: Config,
  logger: Logger,
  services: Services,
  tester: ChannelTester,
  opened: ShutdownStep[],
): void {
  const { cluster, options, channels } = services;
  const { recoveryCooldownMs, testIntervalMs } = config.channelHealth;
  const checkMs = Math.min(CHECK_INTERVAL_MS, recoveryCooldownMs);

  const recovery = new ChannelRecovery({ channels, tester, options, cooldownMs: recoveryCooldownMs });
  const recoveryJob = runOnOnePod(
    cluster,
    { name: 'channel-recovery', intervalMs: checkMs, ttlMs: checkMs * 4 },
    async (signal) => {
      const recovered = await recovery.runOnce(signal);
      if (recovered.length > 0) logger.info({ recovered }, 'auto-disabled channels re-enabled');
    },
  );
  opened.push({ name: 'channel recovery', run: () => recoveryJob.stop() });

  // The test run starts one interval after start, so restarts and rollouts do not test everything at once.
  let lastRun = Date.now();
  const testJob = runOnOnePod(
    cluster,
    { name: 'channel-auto-test', intervalMs: CHECK_INTERVAL_MS, ttlMs: CHECK_INTERVAL_MS * 4 },
    async () => {
      const intervalMs =
        testIntervalMs ??
        (options.getBoolean('monitor_setting.auto_test_channel_enabled')
          ? options.getNumber('monitor_setting.auto_test_channel_minutes') * 60_000
          : undefined);
      if (intervalMs === undefined || Date.now() - lastRun < intervalMs) return;
      lastRun = Date.now();
      await tester.startAll().catch((error: unknown) => logger.warn({ err: error }, 'channel test run not started'));
    },
  );
  opened.push({ name: 'channel auto-test', run: () => testJob.stop() });
}
