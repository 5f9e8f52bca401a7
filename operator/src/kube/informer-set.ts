import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { SupervisedInformer, type SupervisedInformerOptions } from './informer.ts';

/** A SupervisedInformer's options, with the path and list of each watched namespace. */
export interface InformerSetOptions<T extends KubernetesObject>
  extends Omit<SupervisedInformerOptions<T>, 'path' | 'list'> {
  /** Namespaces to watch, one informer each; empty: one informer for every namespace. */
  namespaces: readonly string[];
  /** The collection's path in a namespace, or cluster-wide when `namespace` is undefined. */
  path: (namespace: string | undefined) => string;
  list: (namespace: string | undefined) => Promise<KubernetesListObject<T>>;
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
    const { namespaces: _namespaces, path, list, ...rest } = options;
    const scopes: (string | undefined)[] = options.namespaces.length > 0 ? [...options.namespaces] : [undefined];
    for (const namespace of scopes) {
      this.#byNamespace.set(
        namespace,
        new SupervisedInformer<T>({
          ...rest,
          path: path(namespace),
          list: () => list(namespace),
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
