import type { Kysely } from 'kysely';
import { type ClusterState, runOnOnePod } from '../../cluster/index.ts';
import type { Database } from '../../store/database.ts';
import { sweepExpiredLeases } from '../../store/repositories/quota-leases.ts';

export interface LeaseSweeperConfig {
  db: Kysely<Database>;
  cluster: ClusterState;
  intervalMs: number;
  /** How long past its expiry a lease is left alone: a holder renewing late still finds it. */
  graceMs: number;
  logger: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export interface LeaseSweeper {
  stop(): Promise<void>;
}

/**
 * Returns the leases of dead pods. One pod at a time sweeps, but only to spare the database: each
 * lease is deleted and credited in one transaction, so two sweeps at once could not return it twice.
 * Live holders renew well before expiry and stop promising out of a lease before it lapses.
 */
export function startLeaseSweeper(config: LeaseSweeperConfig): LeaseSweeper {
  const { db, logger } = config;
  const graceSeconds = Math.ceil(config.graceMs / 1000);
  return runOnOnePod(
    config.cluster,
    {
      name: 'quota-lease-sweeper',
      intervalMs: config.intervalMs,
      ttlMs: config.intervalMs * 2,
      onError: (err) => logger.error({ err }, 'quota lease sweep failed'),
    },
    async (signal) => {
      const swept = await sweepExpiredLeases(db, graceSeconds, { signal });
      for (const lease of swept) logger.info({ lease }, 'expired quota lease returned to its account');
    },
  );
}
