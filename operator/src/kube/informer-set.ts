import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { type InformerEvent, SupervisedInformer } from './informer.ts';

export interface InformerSetOptions<T extends KubernetesObject> {
  /** Metric label and log field, e.g. `Channel` or `Secret`. */
  kind: string;
  kubeConfig: KubeConfig;
  /** Namespaces to watch, one informer each; empty: one informer for every namespace. */
  namespaces: readonly string[];
  /** The collection's path in a namespace, or cluster-wide when `namespace` is undefined. */
  path: (namespace: string | undefined) => string;
  list: (namespace: string | undefined) => Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  onEvent: (event: InformerEvent, object: T) => void;
  onRestart?: () => void;
  onActivity?: () => void;
  /** A list or watch failed (metrics: tollgate_operator_list_errors_total). */
  onError?: (error: unknown) => void;
  logger?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  restartBaseMs?: number;
}

/**
 * The informers of one kind: one per watched namespace (what a namespaced Role allows), or a single
 * cluster-wide one. Reads go to the informer of the object's namespace.
 */
export class InformerSet<T extends KubernetesObject> {
  readonly kind: string;
  readonly #byNamespace = new Map<string | undefined, SupervisedInformer<T>>();

  constructor(options: InformerSetOptions<T>) {
    this.kind = options.kind;
    const scopes: (string | undefined)[] = options.namespaces.length > 0 ? [...options.namespaces] : [undefined];
    for (const namespace of scopes) {
      this.#byNamespace.set(
        namespace,
        new SupervisedInformer<T>({
          kind: options.kind,
          kubeConfig: options.kubeConfig,
          path: options.path(namespace),
          list: () => options.list(namespace),
          ...(options.labelSelector !== undefined ? { labelSelector: options.labelSelector } : {}),
          onEvent: options.onEvent,
          ...(options.onRestart ? { onRestart: options.onRestart } : {}),
          ...(options.onActivity ? { onActivity: options.onActivity } : {}),
          ...(options.onError ? { onError: options.onError } : {}),
          ...(options.logger ? { logger: options.logger } : {}),
          ...(options.restartBaseMs !== undefined ? { restartBaseMs: options.restartBaseMs } : {}),
        }),
      );
    }
  }

  /** Resolves once every informer has listed its collection once. */
  async start(): Promise<void> {
    await Promise.all([...this.#byNamespace.values()].map((informer) => informer.start()));
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#byNamespace.values()].map((informer) => informer.stop()));
  }

  /** Every informer's cache is complete and current. */
  get healthy(): boolean {
    return [...this.#byNamespace.values()].every((informer) => informer.healthy);
  }

  /** Whether `namespace` is one this set watches. */
  watches(namespace: string): boolean {
    return this.#byNamespace.has(undefined) || this.#byNamespace.has(namespace);
  }

  get(name: string, namespace: string): T | undefined {
    return (this.#byNamespace.get(namespace) ?? this.#byNamespace.get(undefined))?.get(name, namespace);
  }

  list(namespace?: string): T[] {
    if (namespace !== undefined) {
      return [...((this.#byNamespace.get(namespace) ?? this.#byNamespace.get(undefined))?.list(namespace) ?? [])];
    }
    return [...this.#byNamespace.values()].flatMap((informer) => [...informer.list()]);
  }
}
