import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.ts';
import { type ClusterState, createClusterState, runOnOnePod } from './cluster/index.ts';
import type { Config } from './config.ts';
import { GroupsOverlay } from './domain/groups/overlay.ts';
import { Keyring } from './domain/keyring.ts';
import { OptionsService } from './domain/options/index.ts';
import { PricingService } from './domain/pricing/service.ts';
import { createMetrics } from './metrics.ts';
import { startRelay } from './relay/start.ts';
import { createServices } from './services.ts';
import { type ShutdownStep, shutdownOnce } from './shutdown.ts';
import { migrateToLatest, openStore, type Store } from './store/index.ts';

export interface Gateway {
  app: FastifyInstance;
  /** Where it listens, e.g. http://127.0.0.1:3000. */
  url: string;
  store: Store;
  cluster: ClusterState;
  options: OptionsService;
  /** Graceful stop: drain, flush, close. Safe to call more than once. */
  stop(): Promise<void>;
}

/** Opens every dependency, builds the app and starts listening. Used by main.ts and by tests. */
export async function startGateway(config: Config, logger: Logger): Promise<Gateway> {
  const opened: ShutdownStep[] = [];
  const closeOpened = async () => {
    for (const step of opened.reverse()) await step.run().catch(() => {});
  };
  try {
    const store = await openStore(
      config.databaseUrl
        ? { databaseUrl: config.databaseUrl, poolMax: config.databasePoolMax }
        : { dataDir: config.dataDir },
    );
    opened.push({ name: 'database', run: () => store.close() });
    logger.info({ database: store.kind }, 'database opened');
    const migrated = await migrateToLatest(store.db);
    if (migrated.length > 0) logger.info({ migrations: migrated.map((m) => m.migrationName) }, 'migrations applied');

    const cluster = await createClusterState({
      redisUrl: config.redisUrl,
      namespace: config.redisNamespace,
      onError: (err) => logger.warn({ err }, 'redis connection error'),
    });
    opened.push({ name: 'cluster state', run: () => cluster.close() });
    logger.info({ cluster: cluster.kind }, 'cluster state ready');

    const options = await OptionsService.start({
      db: store.db,
      bus: cluster.bus,
      syncIntervalMs: config.syncIntervalMs,
      logger,
    });
    opened.push({ name: 'options', run: () => options.close() });

    const { keyring, generated } = await Keyring.load(store.db, config.secretKey);
    if (generated) {
      logger.warn(
        'SECRET_KEY is not set: using a key generated once and kept in the database (set SECRET_KEY in production)',
      );
    }
    const pricing = await PricingService.start({ db: store.db, options, bus: cluster.bus });
    opened.push({ name: 'pricing', run: () => pricing.close() });
    const groups = await GroupsOverlay.start({ db: store.db, options, bus: cluster.bus });
    opened.push({ name: 'groups', run: () => groups.close() });
    const services = createServices(config, { store, cluster, options, keyring, pricing });
    await services.setup.adoptExistingRoot();
    const purge = runOnOnePod(
      cluster,
      { name: 'purge-expired-sessions', intervalMs: 3_600_000, ttlMs: 7_200_000 },
      async () => {
        const purged = await services.sessions.purgeExpired();
        if (purged > 0) logger.info({ purged }, 'expired sessions purged');
      },
    );
    opened.push({ name: 'background jobs', run: () => purge.stop() });
    // Log retention (option LogRetentionDays) and, on the embedded database, the logs table's statistics.
    const logJob = runOnOnePod(
      cluster,
      { name: 'log-maintenance', intervalMs: 3_600_000, ttlMs: 7_200_000 },
      async (signal) => {
        const { deleted } = await services.logMaintenance.run(signal);
        if (deleted > 0) logger.info({ deleted }, 'logs past retention deleted');
      },
    );
    opened.push({ name: 'log maintenance', run: () => logJob.stop() });
    // CHANNEL_UPDATE_FREQUENCY: every enabled channel's upstream balance, refreshed by one pod. The
    // first turn is skipped, so restarts and rollouts do not ask every upstream at once.
    const balanceIntervalMs = config.channelBalanceIntervalMs;
    if (balanceIntervalMs !== undefined) {
      let firstTurn = true;
      const balanceJob = runOnOnePod(
        cluster,
        { name: 'channel-balance-refresh', intervalMs: balanceIntervalMs, ttlMs: balanceIntervalMs * 2 },
        async (signal) => {
          if (firstTurn) {
            firstTurn = false;
            return;
          }
          const { updated, skipped, failed } = await services.channels.refreshAllBalances(signal);
          logger.info(
            { updated, skipped, failed: failed.map(({ id, error }) => ({ id, code: error.code })) },
            'channel balances refreshed',
          );
        },
      );
      opened.push({ name: 'channel balance refresh', run: () => balanceJob.stop() });
    }

    const metrics = createMetrics({ version: config.version, node: config.nodeName });
    const relay = await startRelay(config, logger, services, metrics.registry, opened);

    let draining = false;
    const app = await buildApp({
      config,
      logger,
      metrics,
      relay,
      readiness: [
        { name: 'database', check: () => store.ping() },
        { name: cluster.kind === 'redis' ? 'redis' : 'cluster', check: () => cluster.ping() },
      ],
      isDraining: () => draining,
      services,
    });
    const url = await app.listen({ port: config.port, host: config.host });
    logger.info({ url, version: config.version }, 'gateway listening');

    const stop = shutdownOnce({
      app,
      logger,
      drainTimeoutMs: config.shutdownTimeoutMs,
      onDrainStart: () => {
        draining = true;
      },
      // Pools close last, after everything that may still write to them.
      steps: [...opened].reverse(),
    });
    return { app, url, store, cluster, options, stop };
  } catch (error) {
    await closeOpened();
    throw error;
  }
}
