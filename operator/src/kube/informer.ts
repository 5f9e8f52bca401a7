import {
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  makeInformer,
  type ObjectCache,
} from '@kubernetes/client-node';

export type InformerEvent = 'add' | 'update' | 'delete';

export interface SupervisedInformerOptions<T extends KubernetesObject> {
  /** Metric label and log field, e.g. `Channel` or `Secret`. */
  kind: string;
  kubeConfig: KubeConfig;
  /** Watch path, e.g. `/apis/tollgate.dev/v1alpha1/channels`. */
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  onEvent: (event: InformerEvent, object: T) => void;
  /** Called on every restart after an error (metrics). */
  onRestart?: () => void;
  /** Called on every event and every finished list (metrics: last event age). */
  onActivity?: () => void;
  /** Called with every list or watch failure. */
  onError?: (error: unknown) => void;
  logger?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  restartBaseMs?: number;
  restartMaxMs?: number;
}

/**
 * client-node's informer (list, then watch from the list's resourceVersion; relist on 410) under a
 * supervisor: that informer stops for good on any other error (a dropped connection, a failed list,
 * an API server restart), so this one restarts it after a jittered exponential backoff, resuming from
 * the last resourceVersion it saw (and relisting when that is too old). Handlers must be idempotent:
 * a restart may replay events.
 */
export class SupervisedInformer<T extends KubernetesObject> {
  readonly kind: string;
  readonly #options: SupervisedInformerOptions<T>;
  readonly #informer: Informer<T> & ObjectCache<T> & { latestResourceVersion(): string };
  #failures = 0;
  #errored = false;
  #synced = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #restarting = false;
  readonly #syncWaiters: Array<() => void> = [];

  constructor(options: SupervisedInformerOptions<T>) {
    this.kind = options.kind;
    this.#options = options;
    this.#informer = makeInformer(
      options.kubeConfig,
      options.path,
      options.list,
      options.labelSelector,
    ) as Informer<T> & ObjectCache<T> & { latestResourceVersion(): string };
    for (const event of ['add', 'update', 'delete'] as const) {
      this.#informer.on(event, (object: T) => {
        try {
          this.#options.onActivity?.();
          this.#options.onEvent(event, object);
        } catch (error) {
          // A handler must never break the informer's own bookkeeping.
          this.#options.logger?.warn({ kind: this.kind, err: String(error) }, 'Informer event handler failed');
        }
      });
    }
    this.#informer.on('error', (error: unknown) => this.#onError(error));
  }

  /** Whether a list has completed since start (the cache holds the whole collection). */
  get synced(): boolean {
    return this.#synced;
  }

  /** Synced and not waiting to restart: the cache can be trusted to be complete and current. */
  get healthy(): boolean {
    return this.#synced && !this.#restarting;
  }

  /** Starts the informer; resolves once its first list has completed (retrying until it does). */
  start(): Promise<void> {
    const synced = new Promise<void>((resolve) => {
      if (this.#synced) resolve();
      else this.#syncWaiters.push(resolve);
    });
    void this.#run();
    return synced;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#informer.stop();
  }

  get(name: string, namespace?: string): T | undefined {
    return this.#informer.get(name, namespace);
  }

  list(namespace?: string): readonly T[] {
    return this.#informer.list(namespace);
  }

  async #run(): Promise<void> {
    if (this.#stopped) return;
    this.#errored = false;
    this.#restarting = false;
    try {
      await this.#informer.start();
    } catch (error) {
      this.#onError(error);
      return;
    }
    if (this.#errored || this.#stopped) return;
    if (this.#failures > 0) {
      this.#options.logger?.info(
        { kind: this.kind, resourceVersion: this.#informer.latestResourceVersion() },
        'Informer restarted',
      );
    }
    this.#failures = 0;
    this.#options.onActivity?.();
    if (!this.#synced) {
      this.#synced = true;
      for (const resolve of this.#syncWaiters.splice(0)) resolve();
    }
  }

  #onError(error: unknown): void {
    this.#errored = true;
    if (this.#stopped || this.#restarting) return;
    this.#options.onError?.(error);
    this.#restarting = true;
    const base = this.#options.restartBaseMs ?? 500;
    const max = this.#options.restartMaxMs ?? 30_000;
    const delay = Math.min(base * 2 ** Math.min(this.#failures, 20), max) * (0.8 + Math.random() * 0.4);
    this.#failures++;
    this.#options.onRestart?.();
    this.#options.logger?.warn(
      { kind: this.kind, err: error instanceof Error ? error.message : String(error), retryInMs: Math.round(delay) },
      'Informer stopped on an error; restarting',
    );
    this.#timer = setTimeout(() => {
      this.#informer
        .stop()
        .catch(() => {})
        .then(() => this.#run())
        .catch(() => {});
    }, delay);
  }
}
