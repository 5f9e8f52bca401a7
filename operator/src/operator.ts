import type { KubeConfig } from '@kubernetes/client-node';
import { type ClusterState, createClusterState } from '@tollgate/gateway/cluster';
import { Keyring } from '@tollgate/gateway/domain/keyring';
import { openStore, type Store } from '@tollgate/gateway/store';
import type { OperatorConfig } from './config.ts';
import { Controller } from './controller.ts';
import { startHealthServer } from './health.ts';
import { KubeClient } from './kube/client.ts';
import { loadClusterConfig } from './kube/cluster-config.ts';
import { EventRecorder } from './kube/events.ts';
import { LeaderElector } from './kube/leader.ts';
import { createMetrics, type OperatorMetrics } from './metrics.ts';
import { accessTokenReconciler } from './reconcile/access-token.ts';
import { channelReconciler } from './reconcile/channel.ts';
import { groupReconciler } from './reconcile/group.ts';
import { modelPriceReconciler } from './reconcile/model-price.ts';
import { Ownership } from './reconcile/ownership.ts';
import { settingsReconciler } from './reconcile/settings.ts';
import type { Logger } from './reconcile/types.ts';

export interface Operator {
  /** Where /healthz and /metrics answer. */
  healthUrl: string;
  metrics: OperatorMetrics;
  store: Store;
  cluster: ClusterState;
  readonly isLeader: boolean;
  /** Resolves once every informer has listed its collection once (reconciling starts only then). */
  synced: Promise<void>;
  /** Graceful stop: stop reconciling, release the Lease, stop informers, close the store. Idempotent. */
  stop(): Promise<void>;
}

export interface OperatorDeps {
  /** Default: KUBECONFIG, ~/.kube/config or the in-cluster service account (KubeConfig.loadFromDefault). */
  kubeConfig?: KubeConfig;
  /** Test hooks: backoff of failing keys, informers' restart backoff. */
  retryBaseMs?: number;
  /** Lease timings (tests only; the defaults are controller-runtime's 15 s / 10 s / 2 s). */
  lease?: { durationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
  defaultMetrics?: boolean;
}

export const RECONCILERS = [
  channelReconciler,
  modelPriceReconciler,
  groupReconciler,
  settingsReconciler,
  accessTokenReconciler,
] as const;

/** Opens the store, bus and Kubernetes clients, starts informers, leader election and the health server. */
export async function startOperator(
  config: OperatorConfig,
  logger: Logger,
  deps: OperatorDeps = {},
): Promise<Operator> {
  const cleanups: Array<() => Promise<void>> = [];
  const closeAll = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  };
  try {
    const metrics = createMetrics({ defaultMetrics: deps.defaultMetrics ?? true });
    let stopping = false;
    let controller: Controller | undefined;
    let elector: LeaderElector | undefined;
    const health = await startHealthServer({
      host: config.metricsHost,
      port: config.metricsPort,
      registry: metrics.registry,
      healthy: () => !stopping,
      details: () => ({
        leader: controller?.leading ?? false,
        informers: controller?.informersHealthy ? 'synced' : 'syncing',
      }),
    });
    cleanups.push(() => health.close());
    logger.info({ url: health.url }, 'Health and metrics server listening');

    const store = await openStore({ databaseUrl: config.databaseUrl, poolMax: config.databasePoolMax });
    cleanups.push(() => store.close());
    const cluster = await createClusterState({
      redisUrl: config.redisUrl,
      namespace: config.redisNamespace,
      onError: (err) => logger.warn({ err: err.message }, 'Redis connection error'),
    });
    cleanups.push(() => cluster.close());
    if (cluster.kind === 'memory') {
      logger.warn({}, 'REDIS_URL is not set: gateway pods will only see changes at their periodic resync');
    }
    const { keyring } = await Keyring.load(store.db, config.secretKey);

    const kubeConfig = deps.kubeConfig ?? loadClusterConfig();
    const kube = new KubeClient(kubeConfig);
    controller = new Controller({
      kubeConfig,
      kube,
      reconcilers: RECONCILERS,
      context: {
        db: store.db,
        keyring,
        bus: cluster.bus,
        kube,
        gatewayBaseUrl: config.gatewayBaseUrl,
        accessTokenUsers: config.accessTokenUsers,
        logger,
      },
      metrics,
      logger,
      namespaces: config.watchNamespaces,
      ownership: new Ownership(config),
      events: new EventRecorder({ kube, instance: config.identity, logger }),
      resyncMs: config.resyncMs,
      workers: config.workers,
      ...(deps.retryBaseMs !== undefined ? { retryBaseMs: deps.retryBaseMs } : {}),
    });
    const running = controller;
    cleanups.push(() => running.stop());
    const synced = controller.startInformers().then(() => logger.info({}, 'Informer caches synced'));

    if (config.leaderElection) {
      elector = new LeaderElector({
        api: kube,
        namespace: config.leaseNamespace,
        name: config.leaseName,
        identity: config.identity,
        leaseDurationMs: deps.lease?.durationMs ?? 15_000,
        renewDeadlineMs: deps.lease?.renewDeadlineMs ?? 10_000,
        retryPeriodMs: deps.lease?.retryPeriodMs ?? 2_000,
        onStartedLeading: () => running.startLeading(),
        onStoppedLeading: () => running.stopLeading(),
        logger,
      });
      const leaderElector = elector;
      cleanups.push(() => leaderElector.stop());
      elector.start();
      logger.info(
        { identity: config.identity, lease: `${config.leaseNamespace}/${config.leaseName}` },
        'Leader election started',
      );
    } else {
      running.startLeading();
      logger.info({}, 'Leader election disabled: reconciling');
    }

    let stopped: Promise<void> | undefined;
    return {
      healthUrl: health.url,
      metrics,
      store,
      cluster,
      synced,
      get isLeader() {
        return running.leading;
      },
      stop() {
        stopped ??= (async () => {
          stopping = true;
          logger.info({}, 'Stopping');
          await closeAll();
          logger.info({}, 'Stopped');
        })();
        return stopped;
      },
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
