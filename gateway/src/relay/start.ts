import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config.ts';
import { QuotaLedger } from '../domain/ledger/ledger.ts';
import { startTaskEngine } from '../domain/tasks/index.ts';
import { databaseUsageWriter, UsageRecorder, usageSettings } from '../domain/usage/index.ts';
import type { Services } from '../services.ts';
import type { ShutdownStep } from '../shutdown.ts';
import { findUserById } from '../store/repositories/users.ts';
import { ChannelAffinity } from './affinity/channel-affinity.ts';
import { createAffinityMetrics } from './affinity/metrics.ts';
import { KeyCache } from './auth/key-cache.ts';
import { StreamDrain } from './exchange/stream-drain.ts';
import { ChannelHealth } from './health/channel-health.ts';
import { ChannelTester } from './health/channel-test.ts';
import { createCircuitMetrics } from './health/circuit-metrics.ts';
import { Circuits } from './health/circuits.ts';
import { startHealthJobs } from './health/jobs.ts';
import type { RelayPluginDeps } from './index.ts';
import { ModelRequestLimit } from './limits.ts';
import { createRelayMetrics, registerStateGauges } from './metrics.ts';
import { protocolModelLister } from './protocols/model-listing.ts';
import { QuotaAlerts } from './quota-alerts.ts';
import { RateLimiter } from './rate-limits.ts';
import { RoutingIndex } from './routing/index-cache.ts';
import { SecretScrubber } from './secrets/scrubber.ts';
import { SensitiveWords } from './sensitive/screen.ts';
import { midjourneyPlatform } from './tasks/midjourney/platform.ts';
import { sunoPlatform } from './tasks/suno/platform.ts';
import { videoPlatform } from './tasks/video/platform.ts';
import { Transport } from './transport.ts';

/**
 * Starts what the relay keeps in memory (key cache, routing index, quota leases, the usage queue and
 * upstream connections) and registers their shutdown in `opened`, so a stop drains them in reverse:
 * leases given back once open reservations are settled, alerts sent and usage written, then connections closed.
 */
export async function startRelay(
  config: Config,
  logger: Logger,
  services: Services,
  registry: Registry,
  opened: ShutdownStep[],
  /** Tests move the rate limits' minute with it (gateway.ts StartOptions). */
  rateLimitClock?: () => number,
): Promise<RelayPluginDeps> {
  const { store, cluster, options, keyring, pricing } = services;
  const db = store.db;
  const transport = new Transport({
    headersTimeoutMs: config.relay.headersTimeoutMs,
    bodyTimeoutMs: config.relay.idleTimeoutMs,
    connectionsPerOrigin: config.relay.connectionsPerOrigin,
  });
  opened.push({ name: 'upstream connections', run: () => transport.close() });
  // Model lists that need a protocol's own auth (Bedrock's SigV4, Vertex's OAuth) go through the relay.
  services.channels.useProtocolModelLister(protocolModelLister(transport));
  const keys = await KeyCache.start({ db, keyring, bus: cluster.bus });
  opened.push({ name: 'key cache', run: () => keys.close() });
  const routing = await RoutingIndex.start({
    db,
    keyring,
    bus: cluster.bus,
    syncIntervalMs: config.syncIntervalMs,
    logger,
  });
  opened.push({ name: 'routing index', run: () => routing.close() });
  // Read-your-writes: a channel change made on this pod is routed by before the change's answer goes out.
  const unfollow = services.channels.followLocally((ids) => routing.reload(ids));
  opened.push({ name: 'channel changes', run: async () => unfollow() });
  const secrets = new SecretScrubber({
    options,
    masterSecret: keyring.masterSecret(),
    channel: (id) => routing.channel(id),
  });
  opened.push({ name: 'secret scrubber', run: async () => secrets.close() });
  // Started before the recorder, whose batches charge the spending they log through it (closed below, before it).
  const ledger = await QuotaLedger.start({
    db,
    holder: `${config.nodeName}:${process.pid}:${randomBytes(3).toString('hex')}`,
    cluster,
    logger,
    periods: services.periods,
    leaseTtlMs: config.quotaLeases.ttlMs,
    sweepIntervalMs: config.quotaLeases.sweepIntervalMs,
    sweepGraceMs: config.quotaLeases.sweepGraceMs,
  });
  const recorder = new UsageRecorder({
    writer: databaseUsageWriter(db, ledger),
    settings: usageSettings(options, config.relay.errorLogEnabled),
    logger,
  });
  opened.push({ name: 'usage logs', run: () => recorder.close() });
  const metrics = createRelayMetrics(registry);
  const affinity = new ChannelAffinity({
    maps: cluster.capped,
    kv: cluster.kv,
    options,
    metrics: createAffinityMetrics(registry),
    backend: cluster.kind,
    logger,
  });
  const health = new ChannelHealth({
    channels: services.channels,
    options,
    metrics,
    logger,
    db,
    notifier: services.notifier,
  });
  opened.push({ name: 'channel health', run: () => health.close() });
  const circuits: Circuits = new Circuits({
    cluster,
    options,
    onTransition: (transition) => circuitMetrics.transition(transition),
  });
  const circuitMetrics = createCircuitMetrics(registry, () => circuits.openCounts());
  await circuits.start();
  opened.push({ name: 'circuits', run: () => circuits.close() });
  const tester = new ChannelTester({
    channels: services.channels,
    routing,
    transport,
    options,
    pricing,
    recorder,
    health,
    metrics,
    logger,
    timeoutMs: config.channelHealth.testTimeoutMs,
    usernameOf: async (id) => (await findUserById(db, id))?.username ?? '',
    secrets,
  });
  opened.push({ name: 'channel tests', run: () => tester.close() });
  startHealthJobs(config, logger, services, tester, opened);
  const alerts = new QuotaAlerts({ db, notifier: services.notifier, options, logger });
  opened.push({ name: 'quota alerts', run: () => alerts.close() });
  // Closed before the recorder and the alerts: an answered request may still be settling (a charge
  // above its reservation waits for the database) after HTTP has drained, and records its usage and
  // alerts only then. The ledger waits for open reservations, so those close after the last record.
  opened.push({ name: 'quota ledger', run: () => ledger.close(() => recorder.flush()) });
  // Unfinished drawing and music tasks, polled by one pod at a time; stopped before the pools it uses close.
  const tasks = startTaskEngine({
    cluster,
    intervalMs: config.tasks.pollIntervalMs,
    logger,
    scrubReason: (reason, channelId) => secrets.scrub(reason, channelId),
    platforms: [
      midjourneyPlatform({
        db,
        routing,
        transport,
        timeoutMs: config.tasks.midjourneyTimeoutMs,
        notifyEnabled: () => options.getBoolean('MjNotifyEnabled'),
        outbound: services.outbound,
        logger,
        scrub: (text, channelId) => secrets.scrub(text, channelId),
      }),
      sunoPlatform({ db, routing, transport, timeoutMs: config.tasks.taskTimeoutMs }),
      videoPlatform({ db, routing, transport, timeoutMs: config.tasks.taskTimeoutMs }),
    ],
  });
  opened.push({ name: 'task polling', run: () => tasks.stop() });
  const sensitive = new SensitiveWords(options);
  opened.push({ name: 'sensitive words', run: async () => sensitive.close() });
  registerStateGauges(registry, { ledger: () => ledger.stats(), usage: () => recorder.stats() });
  return {
    db,
    keys,
    options,
    pricing,
    routing,
    ledger,
    recorder,
    limits: new ModelRequestLimit(cluster.counters, options),
    rateLimits: new RateLimiter({ budgets: cluster.budgets, options, metrics, clock: rateLimitClock }),
    transport,
    outbound: services.outbound,
    metrics,
    alerts,
    health,
    circuits,
    affinity,
    sensitive,
    secrets,
    streamDrain: new StreamDrain(),
    tester,
    bodyLimitBytes: config.relay.bodyLimitBytes,
  };
}
