import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.ts';
import { type ClusterState, createClusterState, runOnOnePod } from './cluster/index.ts';
import type { Config } from './config.ts';
import { GroupsOverlay } from './domain/groups/overlay.ts';
import { Keyring } from './domain/keyring.ts';
import { PeriodBudget } from './domain/ledger/periods/budget.ts';
import { OptionsService } from './domain/options/index.ts';
import { PricingService } from './domain/pricing/service.ts';
import { PodHealth } from './health.ts';
import { buildPrivateServer } from './http/private-server.ts';
import { buildWaitingServer } from './http/waiting-server.ts';
import { createMetrics } from './metrics.ts';
import { startRelay } from './relay/start.ts';
import { prepareSchema } from './schema-gate.ts';
import { createServices } from './services.ts';
import { type ShutdownStep, shutdownOnce } from './shutdown.ts';
import { openStore, type Store } from './store/index.ts';

export interface Gateway {
  app: FastifyInstance;
  /** Where it listens, e.g. http://127.0.0.1:3000. */
  url: string;
  /** The private listener (METRICS_PORT): /metrics, /health/details and the probes. */
  metricsUrl: string;
  health: PodHealth;
  store: Store;
  cluster: ClusterState;
  options: OptionsService;
  /** Graceful stop: drain, flush, close. Safe to call more than once. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** How often a gateway waiting for the migration job looks at the schema again (default 5 s). */
  schemaRecheckMs?: number;
  /** Unix ms for period quotas (default Date.now): tests move it across a midnight. */
  clock?: () => number;
  /** The clock of the relay's rate limits, in milliseconds (tests move it); unset: the cluster's. */
  rateLimitClock?: () => number;
}

/** Opens every dependency, builds the app and starts listening. Used by main.ts and by tests. */
export async function startGateway(config: Config, logger: Logger, start: StartOptions = {}): Promise<Gateway> {
  const opened: ShutdownStep[] = [];
  const closeOpened = async () => {
    for (const step of opened.reverse()) await step.run().catch(() => {});
  };
  try {
    // The private listener first (and closed last): probes and metrics answer while starting and draining.
    const metrics = createMetrics({ version: config.version, node: config.nodeName });
    const health = new PodHealth(metrics.dependencyUp);
    const privateServer = buildPrivateServer({ logger, metrics, health });
    opened.push({ name: 'private listener', run: () => privateServer.close() });
    const metricsUrl = await privateServer
      .listen({ port: config.metricsPort, host: config.metricsHost })
      .catch((error: NodeJS.ErrnoException) => {
        // 9090 is also Prometheus's own default port: say which setting to change.
        if (error.code !== 'EADDRINUSE') throw error;
        throw new Error(
          `METRICS_PORT ${config.metricsPort} on ${config.metricsHost} is already in use: set METRICS_PORT to a free port (0 for any)`,
          { cause: error },
        );
      });
    logger.info({ metricsUrl }, 'private listener for /metrics and /health/details started');

    const store = await openStore(
      config.databaseUrl
        ? { databaseUrl: config.databaseUrl, poolMax: config.databasePoolMax }
        : { dataDir: config.dataDir },
    );
    opened.push({ name: 'database', run: () => store.close() });
    health.addDependency({ name: 'database', check: () => store.ping() });
    logger.info({ database: store.kind }, 'database opened');

    // While waiting for the migration job, the main port answers the probes and 503 for the rest.
    let waiting: { server: FastifyInstance; port: number } | undefined;
    opened.push({ name: 'waiting listener', run: async () => waiting?.server.close() });
    await prepareSchema({
      db: store.db,
      logger,
      health,
      migrate: config.migrateOnStart,
      recheckMs: start.schemaRecheckMs ?? 5000,
      onWait: async () => {
        const server = buildWaitingServer({ logger, health });
        const url = await server.listen({ port: config.port, host: config.host });
        waiting = { server, port: Number(new URL(url).port) };
        logger.info({ url, metricsUrl }, 'listening, not ready: waiting for the database schema');
      },
    });

    const cluster = await createClusterState({
      redisUrl: config.redisUrl,
      namespace: config.redisNamespace,
      onError: (err) => logger.warn({ err }, 'redis connection error'),
    });
    opened.push({ name: 'cluster state', run: () => cluster.close() });
    health.addDependency({ name: cluster.kind === 'redis' ? 'redis' : 'cluster', check: () => cluster.ping() });
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
    const periods = new PeriodBudget({
      db: store.db,
      zone: () => options.get('quota_setting.period_timezone'),
      clock: start.clock,
      logger,
    });
    const services = createServices(config, { store, cluster, options, keyring, pricing, periods });
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
    // Rows of periods long over (periodic quotas), deleted by one pod.
    const periodJob = runOnOnePod(
      cluster,
      { name: 'period-usage-prune', intervalMs: 3_600_000, ttlMs: 7_200_000 },
      async () => {
        const deleted = await periods.prune();
        if (deleted > 0) logger.info({ deleted }, 'usage rows of past quota periods deleted');
      },
    );
    opened.push({ name: 'period usage pruning', run: () => periodJob.stop() });
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

    const relay = await startRelay(config, logger, services, metrics.registry, opened, start.rateLimitClock);

    const app = await buildApp({ config, logger, metrics, relay, health, services });
    // The stand-in hands the port over: probes may miss for the few milliseconds in between.
    const port = waiting?.port ?? config.port;
    await waiting?.server.close();
    waiting = undefined;
    const url = await app.listen({ port, host: config.host });
    health.serving();
    logger.info({ url, metricsUrl, version: config.version }, 'gateway listening');

    const stop = shutdownOnce({
      app,
      logger,
      drainTimeoutMs: config.shutdownTimeoutMs,
      onDrainStart: () => health.draining(),
      onDrainTimeout: () => relay.streamDrain?.end(),
      // Pools close last, after everything that may still write to them; the private listener after them.
      steps: [...opened].reverse(),
    });
    return { app, url, metricsUrl, health, store, cluster, options, stop };
  } catch (error) {
    await closeOpened();
    throw error;
  }
}
