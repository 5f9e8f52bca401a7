import type { KubeConfig } from '@kubernetes/client-node';
import { describeError, httpStatus, type KubeClient, type Resource, type Secret } from './kube/client.ts';
import type { EventInput, EventRecorder } from './kube/events.ts';
import type { InformerEvent } from './kube/informer.ts';
import { InformerSet } from './kube/informer-set.ts';
import { SecretIndex } from './kube/secret-index.ts';
import { type Condition, type ConditionInput, kubeTime, mergeConditions, mergePatchOf } from './kube/status.ts';
import { jitter, WorkQueue } from './kube/workqueue.ts';
import type { OperatorMetrics, ReconcileResult } from './metrics.ts';
import type { Ownership } from './reconcile/ownership.ts';
import { type Logger, type Outcome, type ReconcileContext, type Reconciler, WATCH_LABEL } from './reconcile/types.ts';
import { API_VERSION, GROUP, type Kind, PLURALS, VERSION } from './types/generated.ts';

export interface ControllerOptions {
  kubeConfig: KubeConfig;
  kube: KubeClient;
  reconcilers: readonly Reconciler<any>[];
  /** Everything a reconcile needs but the Secret cache, which the controller provides. */
  context: Omit<ReconcileContext, 'secret' | 'secrets'>;
  metrics: OperatorMetrics;
  logger: Logger;
  /** Namespaces to watch; empty: every namespace. */
  namespaces: readonly string[];
  /** Which resources are this instance's, and its finalizer. */
  ownership: Ownership;
  events: EventRecorder;
  resyncMs: number;
  workers: number;
  /** Backoff of failing keys (tests shorten it). */
  retryBaseMs?: number;
  retryMaxMs?: number;
}

const SECRET_KIND = 'Secret';

/** `Kind/namespace/name`. */
const keyOf = (kind: string, namespace: string, name: string) => `${kind}/${namespace}/${name}`;

function parseKey(key: string): { kind: Kind; namespace: string; name: string } {
  const [kind, namespace, ...rest] = key.split('/');
  return { kind: kind as Kind, namespace: namespace ?? '', name: rest.join('/') };
}

/** A status as compared between passes: conditions without their lastTransitionTime. */
function statusPrint(status: Record<string, unknown>): string {
  const conditions = (status.conditions as Condition[] | undefined)?.map(({ lastTransitionTime: _, ...c }) => c);
  return JSON.stringify({ ...status, conditions });
}

/** What about an object, besides status, makes it worth reconciling again. */
function fingerprint(resource: Resource): string {
  const m = resource.metadata;
  return JSON.stringify([
    m.uid,
    m.generation,
    m.deletionTimestamp ?? null,
    m.finalizers ?? [],
    m.annotations ?? {},
    m.labels ?? {},
  ]);
}

/**
 * The control loop: one informer per kind plus labelled Secrets feed a deduplicating work queue;
 * while this process leads, workers take keys and reconcile each resource from the cache —
 * level-triggered: whatever happened, the resource as it is now is made true in the store.
 *
 * Per pass: a resource being deleted has its records removed, then its finalizer; otherwise the
 * finalizer is added first (before any database write), the kind's reconciler converges the store,
 * and the status (conditions with observedGeneration, runtime state) is patched if it changed. A
 * success comes back after the resync period (drift repair); a spec problem or an error comes back
 * after the key's exponential backoff.
 */
export class Controller {
  readonly #options: ControllerOptions;
  readonly #reconcilers = new Map<Kind, Reconciler<any>>();
  readonly #informers = new Map<Kind, InformerSet<Resource>>();
  readonly #secretInformer: InformerSet<Secret>;
  readonly #secretIndex = new SecretIndex();
  readonly #fingerprints = new Map<string, string>();
  /** The status last written per key, and the resourceVersion it was computed from (see #writeStatus). */
  readonly #written = new Map<string, { basedOn: string | undefined; status: string }>();
  readonly #context: ReconcileContext;
  #queue: WorkQueue | undefined;
  #workers: Promise<void>[] = [];
  #sweepTimer: NodeJS.Timeout | undefined;
  #synced = false;
  readonly #syncWaiters: Array<() => void> = [];
  /** Ends the wait for the caches of a leadership that stopped before they synced. */
  #cancelWait: (() => void) | undefined;

  constructor(options: ControllerOptions) {
    this.#options = options;
    const { kubeConfig, kube, namespaces, metrics, logger, retryBaseMs } = options;
    const common = (kind: string) => ({
      kind,
      kubeConfig,
      namespaces,
      onRestart: () => metrics.informerRestarts.inc({ kind }),
      onActivity: () => metrics.informerEvent(kind),
      onError: (error: unknown) => metrics.listError(kind, httpStatus(error)),
      logger,
      ...(retryBaseMs !== undefined ? { restartBaseMs: Math.max(retryBaseMs, 100) } : {}),
    });
    for (const reconciler of options.reconcilers) {
      const plural = PLURALS[reconciler.kind];
      this.#reconcilers.set(reconciler.kind, reconciler);
      this.#informers.set(
        reconciler.kind,
        new InformerSet<Resource>({
          ...common(reconciler.kind),
          path: (ns) =>
            ns ? `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${plural}` : `/apis/${GROUP}/${VERSION}/${plural}`,
          list: (ns) => kube.listResources(plural, ns),
          onEvent: (event, resource) => this.#onResource(reconciler, event, resource),
        }),
      );
    }
    this.#secretInformer = new InformerSet<Secret>({
      ...common(SECRET_KIND),
      path: (ns) => (ns ? `/api/v1/namespaces/${ns}/secrets` : '/api/v1/secrets'),
      list: (ns) => kube.listSecrets(`${WATCH_LABEL}=true`, ns),
      labelSelector: `${WATCH_LABEL}=true`,
      onEvent: (_event, secret) => this.#onSecret(secret),
    });
    metrics.watchInformers(() => [
      ...[...this.#informers].map(([kind, set]) => [kind, set.healthy] as const),
      [SECRET_KIND, this.#secretInformer.healthy] as const,
    ]);
    this.#context = {
      ...options.context,
      secret: (namespace, name) => this.#secretInformer.get(name, namespace),
      secrets: (namespace) => this.#secretInformer.list(namespace),
    };
  }

  /** Starts every informer; resolves once each has listed its collection once (workers wait for that). */
  async startInformers(): Promise<void> {
    await Promise.all([this.#secretInformer.start(), ...[...this.#informers.values()].map((i) => i.start())]);
    this.#synced = true;
    for (const resolve of this.#syncWaiters.splice(0)) resolve();
  }

  /** Whether every informer's cache is complete and current. */
  get informersHealthy(): boolean {
    return this.#secretInformer.healthy && [...this.#informers.values()].every((i) => i.healthy);
  }

  /** Leading, or still finishing the reconciles it started while it led. */
  get leading(): boolean {
    return this.#queue !== undefined || this.#workers.length > 0;
  }

  /**
   * Leader: once every informer's cache has synced (never before: a partial cache would look like
   * deleted resources), start the workers and reconcile everything this instance owns.
   */
  startLeading(): void {
    if (this.#queue) return;
    const { metrics } = this.#options;
    const queue = new WorkQueue({
      baseDelayMs: this.#options.retryBaseMs ?? 5,
      maxDelayMs: this.#options.retryMaxMs ?? 300_000,
      onDepth: (depth) => metrics.queueDepth.set(depth),
    });
    this.#queue = queue;
    metrics.isLeader.set(1);
    this.#workers = [this.#workWhenSynced(queue)];
  }

  async #workWhenSynced(queue: WorkQueue): Promise<void> {
    if (!this.#synced) {
      const cancelled = await new Promise<boolean>((resolve) => {
        this.#syncWaiters.push(() => resolve(false));
        this.#cancelWait = () => resolve(true);
      });
      if (cancelled) return;
    }
    if (this.#queue !== queue) return;
    for (const [kind, informer] of this.#informers) {
      for (const resource of informer.list()) {
        if (this.#concerns(resource)) queue.add(keyOf(kind, resource.metadata.namespace ?? '', resource.metadata.name));
      }
    }
    this.#scheduleSweep(5_000);
    await Promise.all(Array.from({ length: this.#options.workers }, () => this.#work(queue)));
  }

  /** No longer leader (or stopping): no new reconciles; waits for the running ones. */
  async stopLeading(): Promise<void> {
    const queue = this.#queue;
    if (!queue) return;
    this.#queue = undefined;
    this.#cancelWait?.();
    clearTimeout(this.#sweepTimer);
    queue.shutdown();
    await Promise.all(this.#workers);
    this.#workers = [];
    this.#options.metrics.isLeader.set(0);
    this.#options.metrics.queueDepth.set(0);
  }

  async stop(): Promise<void> {
    await this.stopLeading();
    await Promise.all([this.#secretInformer.stop(), ...[...this.#informers.values()].map((i) => i.stop())]);
  }

  // --- events ---

  #onResource(reconciler: Reconciler<any>, event: InformerEvent, resource: Resource): void {
    const namespace = resource.metadata.namespace ?? '';
    const key = keyOf(reconciler.kind, namespace, resource.metadata.name);
    this.#options.logger.debug({ event, key, resourceVersion: resource.metadata.resourceVersion }, 'Informer event');
    if (event === 'delete') {
      this.#secretIndex.remove(key);
      this.#fingerprints.delete(key);
      this.#written.delete(key);
      if (resource.metadata.uid) this.#options.events.forget(resource.metadata.uid);
      return;
    }
    // A change of status alone (usually our own write) is no reason to reconcile again.
    const print = fingerprint(resource);
    if (event === 'update' && this.#fingerprints.get(key) === print) return;
    this.#fingerprints.set(key, print);
    if (!this.#concerns(resource)) {
      this.#secretIndex.remove(key);
      return;
    }
    this.#secretIndex.set(key, namespace, reconciler.secretNames?.(resource) ?? []);
    this.#queue?.add(key);
  }

  /** Whether this instance has anything to do with the resource: it owns it, or holds a finalizer to release. */
  #concerns(resource: Resource): boolean {
    const { ownership } = this.#options;
    return ownership.owns(resource) || ownership.holds(resource);
  }

  #onSecret(secret: Secret): void {
    const namespace = secret.metadata.namespace ?? '';
    for (const key of this.#secretIndex.lookup(namespace, secret.metadata.name)) this.#queue?.add(key);
    for (const owner of secret.metadata.ownerReferences ?? []) {
      if (owner.kind === 'AccessToken' && owner.apiVersion.startsWith(`${GROUP}/`)) {
        this.#queue?.add(keyOf('AccessToken', namespace, owner.name));
      }
    }
  }

  // --- work ---

  async #work(queue: WorkQueue): Promise<void> {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      try {
        await this.#process(queue, key);
      } catch (error) {
        // #process answers every failure itself; this only keeps a worker alive whatever happens.
        this.#options.logger.error({ key, err: describeError(error) }, 'Worker failed');
        queue.addRateLimited(key);
      } finally {
        queue.done(key);
      }
    }
  }

  async #process(queue: WorkQueue, key: string): Promise<void> {
    const { kind, namespace, name } = parseKey(key);
    const reconciler = this.#reconcilers.get(kind);
    const informer = this.#informers.get(kind);
    if (!reconciler || !informer) return;
    const { metrics, logger, resyncMs } = this.#options;
    const timer = metrics.reconcileDuration.startTimer({ kind });
    let result: ReconcileResult = 'ok';
    const resource = informer.get(name, namespace);
    try {
      if (!resource) {
        // Gone from the cache: its finalizer ran before the API server let it go.
        queue.forget(key);
        return;
      }
      if (!this.#options.ownership.owns(resource)) {
        await this.#release(reconciler, resource);
        queue.forget(key);
        return;
      }
      if (resource.metadata.deletionTimestamp) {
        await this.#finalize(reconciler, resource);
        queue.forget(key);
        return;
      }
      const outcome = await this.#reconcile(reconciler, resource);
      if (outcome.retry) {
        result = 'requeue';
        queue.addRateLimited(key);
      } else {
        queue.forget(key);
        const soon = outcome.requeueAfterMs !== undefined && outcome.requeueAfterMs < resyncMs;
        // Jittered, so that resources created together do not all come back in the same instant.
        queue.addAfter(key, soon ? outcome.requeueAfterMs! : jitter(resyncMs));
      }
    } catch (error) {
      const status = httpStatus(error);
      if (status === 404) {
        queue.forget(key); // deleted meanwhile; its delete event follows
        return;
      }
      if (status === 409) {
        // The cache was behind our last write: try again shortly from the newer copy.
        result = 'requeue';
        queue.addRateLimited(key);
        return;
      }
      result = 'error';
      metrics.reconcileErrors.inc({ kind });
      const delay = queue.addRateLimited(key);
      logger.error(
        { kind, resource: `${namespace}/${name}`, err: describeError(error), retryInMs: delay },
        'Reconcile failed',
      );
      if (resource && !resource.metadata.deletionTimestamp) await this.#reportFailure(reconciler, resource, error);
    } finally {
      metrics.reconciles.inc({ kind, result });
      timer();
    }
  }

  async #finalize(reconciler: Reconciler<any>, resource: Resource): Promise<void> {
    const { ownership, logger } = this.#options;
    if (!ownership.holds(resource)) return;
    await reconciler.finalize(resource, this.#context);
    await this.#removeFinalizer(reconciler, resource);
    logger.info(
      { kind: reconciler.kind, resource: `${resource.metadata.namespace}/${resource.metadata.name}` },
      'Records removed; finalizer released',
    );
    await this.#event(reconciler, resource, {
      type: 'Normal',
      reason: 'RecordsRemoved',
      note: `The gateway's records of this ${reconciler.kind} were removed`,
      action: 'Finalize',
    });
  }

  /**
   * A resource this instance no longer owns (relabelled to another instance, or unlabelled while
   * CLAIM_UNLABELLED is false): its finalizer goes, its records stay as they are — read-only, no
   * longer updated — until the resource comes back or is deleted (then the orphan sweep removes them).
   */
  async #release(reconciler: Reconciler<any>, resource: Resource): Promise<void> {
    if (!this.#options.ownership.holds(resource)) return;
    await this.#removeFinalizer(reconciler, resource);
    this.#options.logger.info(
      { kind: reconciler.kind, resource: `${resource.metadata.namespace}/${resource.metadata.name}` },
      'Resource belongs to another instance now: finalizer released, records kept unchanged',
    );
  }

  async #removeFinalizer(reconciler: Reconciler<any>, resource: Resource): Promise<void> {
    await this.#options.kube.patchMetadata(
      PLURALS[reconciler.kind],
      resource.metadata.namespace ?? '',
      resource.metadata.name,
      { resourceVersion: resource.metadata.resourceVersion, finalizers: this.#options.ownership.without(resource) },
    );
  }

  async #event(reconciler: Reconciler<any>, resource: Resource, event: EventInput): Promise<void> {
    await this.#options.events.record({ ...resource, apiVersion: API_VERSION, kind: reconciler.kind }, event);
  }

  async #reconcile(reconciler: Reconciler<any>, cached: Resource): Promise<Outcome> {
    const { kube, ownership } = this.#options;
    const plural = PLURALS[reconciler.kind];
    const namespace = cached.metadata.namespace ?? '';
    let resource = cached;
    const finalizers = resource.metadata.finalizers ?? [];
    if (!finalizers.includes(ownership.finalizer)) {
      // Before the first database write, so that a delete can never skip the cleanup.
      resource = await kube.patchMetadata(plural, namespace, resource.metadata.name, {
        resourceVersion: resource.metadata.resourceVersion,
        finalizers: [...ownership.without(resource), ownership.finalizer],
      });
    }
    const outcome = await reconciler.reconcile(resource, this.#context);
    if (outcome.annotations) {
      resource = await kube.patchMetadata(plural, namespace, resource.metadata.name, {
        annotations: outcome.annotations,
      });
    }
    await this.#writeStatus(reconciler, resource, outcome.conditions, outcome.status as Record<string, unknown>);
    // A resource that cannot be applied says why in an Event too (secret missing, invalid spec,
    // conflict, user not allowed…); the recorder aggregates repeats.
    const ready = outcome.conditions.find((c) => c.type === 'Ready');
    if (ready?.status === 'False') {
      await this.#event(reconciler, resource, { type: 'Warning', reason: ready.reason, note: ready.message });
    }
    for (const event of outcome.events ?? []) await this.#event(reconciler, resource, event);
    return outcome;
  }

  /** Patches the status if it differs from what the resource shows (conditions keep their transition times). */
  async #writeStatus(
    reconciler: Reconciler<any>,
    resource: Resource,
    conditions: ConditionInput[],
    fields: Record<string, unknown>,
  ): Promise<void> {
    const before = resource.status ?? {};
    const generation = resource.metadata.generation;
    const after: Record<string, unknown> = {
      ...fields,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      conditions: mergeConditions(
        before.conditions as Condition[] | undefined,
        conditions,
        generation,
        kubeTime(new Date()),
      ),
    };
    const patch = mergePatchOf(before, after);
    if (!patch) return;
    // The cache may not show our last write yet (the pass came from an event older than it): the same
    // status computed from the same resourceVersion is not written twice.
    const key = keyOf(reconciler.kind, resource.metadata.namespace ?? '', resource.metadata.name);
    const written = { basedOn: resource.metadata.resourceVersion, status: statusPrint(after) };
    const last = this.#written.get(key);
    if (last && last.basedOn === written.basedOn && last.status === written.status) return;
    await this.#options.kube.patchStatus(
      PLURALS[reconciler.kind],
      resource.metadata.namespace ?? '',
      resource.metadata.name,
      patch,
    );
    this.#written.set(key, written);
  }

  /** After an unexpected failure: Synced=False with what went wrong; Ready stays as it was (or Unknown). */
  async #reportFailure(reconciler: Reconciler<any>, resource: Resource, error: unknown): Promise<void> {
    const previous = (resource.status?.conditions as Condition[] | undefined) ?? [];
    const message = describeError(error);
    const conditions: ConditionInput[] = reconciler.conditionTypes.map((type) => {
      if (type === 'Synced') return { type, status: 'False', reason: 'ReconcileFailed', message };
      const old = previous.find((c) => c.type === type);
      return old
        ? { type, status: old.status, reason: old.reason, message: old.message }
        : { type, status: 'Unknown', reason: 'ReconcileFailed', message };
    });
    const fields = Object.fromEntries(
      Object.entries(resource.status ?? {}).filter(
        ([field]) => field !== 'conditions' && field !== 'observedGeneration',
      ),
    );
    await this.#writeStatus(reconciler, resource, conditions, fields).catch(() => {});
  }

  // --- orphans ---

  #scheduleSweep(delayMs: number): void {
    clearTimeout(this.#sweepTimer);
    this.#sweepTimer = setTimeout(() => {
      this.#sweep()
        .catch((error: unknown) => this.#options.logger.warn({ err: describeError(error) }, 'Orphan sweep failed'))
        .finally(() => {
          if (this.#queue) this.#scheduleSweep(jitter(this.#options.resyncMs));
        });
    }, delayMs);
  }

  /**
   * Records whose resource no longer exists (its finalizer was removed by hand, or it was deleted
   * while no operator ran) are removed. Only with complete caches, and only in the watched namespace.
   */
  async #sweep(): Promise<void> {
    if (!this.#queue) return;
    const { logger } = this.#options;
    for (const [kind, reconciler] of this.#reconcilers) {
      const informer = this.#informers.get(kind)!;
      if (!informer.healthy || !this.#queue) return;
      // Every resource, whichever instance owns it: records of a released resource stay while it exists.
      const known = new Set(informer.list().map((r) => r.metadata.uid));
      for (const owner of await reconciler.owners(this.#context)) {
        if (known.has(owner.uid) || !informer.watches(owner.namespace)) continue;
        // Ask the API server itself: a cache that missed a resource must not cost it its records.
        if (!informer.healthy || informer.list().some((r) => r.metadata.uid === owner.uid)) continue;
        const live = await this.#options.kube.getResource(PLURALS[kind], owner.namespace, owner.name);
        if (live?.metadata.uid === owner.uid || !this.#queue) continue;
        await reconciler.removeOrphan(owner, this.#context);
        logger.warn(
          { kind, resource: `${owner.namespace}/${owner.name}`, uid: owner.uid },
          'Removed records of a resource that no longer exists',
        );
      }
    }
  }
}
