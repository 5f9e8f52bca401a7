import {
  ApiException,
  type ConfigurationOptions,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  Observable,
  type ObservableMiddleware,
  PatchStrategy,
  setHeaderOptions,
  type V1Secret,
} from '@kubernetes/client-node';

import { GROUP, VERSION } from '../types/generated.ts';

/** The field manager the operator writes with. */
export const FIELD_MANAGER = 'tollgate-operator';

/** Metadata as the operator reads it (raw JSON from the API server). */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  /** A string in raw JSON (typed as client-node types it); only its presence is used. */
  deletionTimestamp?: Date;
  finalizers?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** A custom resource: spec as declared, status as the operator last wrote it. */
export interface Resource<Spec = unknown> extends KubernetesObject {
  metadata: ObjectMeta;
  spec?: Spec;
  status?: Record<string, unknown>;
}

/** A Secret as the operator reads it: `data` values are base64. */
export interface Secret extends KubernetesObject {
  metadata: ObjectMeta;
  type?: string;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** The HTTP status of a failed API call, if it was one. */
export function httpStatus(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  const code = (error as { code?: unknown; statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** A short, secret-free description of a failed call for logs and status messages. */
export function describeError(error: unknown): string {
  if (error instanceof ApiException) {
    const body = error.body as { message?: unknown; reason?: unknown } | string | undefined;
    const parsed = typeof body === 'string' ? safeJson(body) : body;
    const message = typeof parsed?.message === 'string' ? parsed.message : '';
    return `Kubernetes API answered ${error.code}${message ? `: ${message}` : ''}`;
  }
  return error instanceof Error ? error.message : String(error);
}

function safeJson(text: string): { message?: unknown } | undefined {
  try {
    return JSON.parse(text) as { message?: unknown };
  } catch {
    return undefined;
  }
}

const mergePatch = () => setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Request options that abort the call when `signal` fires (a hung API call must not outlive its deadline). */
function withSignal(signal: AbortSignal | undefined): ConfigurationOptions<ObservableMiddleware> | undefined {
  if (!signal) return undefined;
  return {
    middleware: [
      {
        pre: (context) => {
          context.setSignal(signal);
          return new Observable(Promise.resolve(context));
        },
        post: (response) => new Observable(Promise.resolve(response)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

/**
 * The few calls the operator makes, over client-node's generated clients: custom resources, Leases
 * and Events through the generic custom-objects client (raw JSON both ways), Secrets through CoreV1.
 * Every method is listed with its API group, resource and verb in `api-calls.ts`, from which the
 * chart's RBAC is checked: a method without an entry does not compile.
 */
export class KubeClient {
  readonly #custom: CustomObjectsApi;
  readonly #core: CoreV1Api;

  constructor(kubeConfig: KubeConfig) {
    this.#custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.#core = kubeConfig.makeApiClient(CoreV1Api);
  }

  /** Every object of a Tollgate kind, in one namespace or all. */
  listResources(plural: string, namespace?: string): Promise<KubernetesListObject<Resource>> {
    return namespace
      ? this.#custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural })
      : this.#custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural });
  }

  /** One object of a Tollgate kind read straight from the API server; undefined when there is none. */
  async getResource(plural: string, namespace: string, name: string): Promise<Resource | undefined> {
    try {
      return (await this.#custom.getNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural,
        name,
      })) as Resource;
    } catch (error) {
      if (httpStatus(error) === 404) return undefined;
      throw error;
    }
  }

  /** Merge-patches `.status` (the status subresource): send the whole `conditions` list, arrays are replaced. */
  patchStatus(plural: string, namespace: string, name: string, status: Record<string, unknown>): Promise<Resource> {
    return this.#custom.patchNamespacedCustomObjectStatus(
      { group: GROUP, version: VERSION, namespace, plural, name, body: { status }, fieldManager: FIELD_MANAGER },
      mergePatch(),
    );
  }

  /**
   * Merge-patches metadata (finalizers, annotations). With `resourceVersion`, the write only happens if
   * the object did not change since it was read (409 otherwise), so a finalizer list is never lost.
   */
  patchMetadata(
    plural: string,
    namespace: string,
    name: string,
    metadata: { resourceVersion?: string; finalizers?: string[]; annotations?: Record<string, string | null> },
  ): Promise<Resource> {
    return this.#custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace, plural, name, body: { metadata }, fieldManager: FIELD_MANAGER },
      mergePatch(),
    );
  }

  /** Every Secret with the label selector, in one namespace or all. */
  async listSecrets(labelSelector: string, namespace?: string): Promise<KubernetesListObject<Secret>> {
    const list = namespace
      ? await this.#core.listNamespacedSecret({ namespace, labelSelector })
      : await this.#core.listSecretForAllNamespaces({ labelSelector });
    return list as unknown as KubernetesListObject<Secret>;
  }

  /** A Secret read straight from the API server (not the cache); undefined when there is none. */
  async readSecret(namespace: string, name: string): Promise<Secret | undefined> {
    try {
      return (await this.#core.readNamespacedSecret({ namespace, name })) as unknown as Secret;
    } catch (error) {
      if (httpStatus(error) === 404) return undefined;
      throw error;
    }
  }

  createSecret(namespace: string, secret: Secret): Promise<V1Secret> {
    return this.#core.createNamespacedSecret({ namespace, body: secret as V1Secret, fieldManager: FIELD_MANAGER });
  }

  /** Replaces a Secret; `secret.metadata.resourceVersion` makes it conditional. */
  replaceSecret(namespace: string, secret: Secret): Promise<V1Secret> {
    return this.#core.replaceNamespacedSecret({
      namespace,
      name: secret.metadata.name,
      body: secret as V1Secret,
      fieldManager: FIELD_MANAGER,
    });
  }

  /** Deletes a Secret; one that is already gone is fine. */
  async deleteSecret(namespace: string, name: string): Promise<void> {
    try {
      await this.#core.deleteNamespacedSecret({ namespace, name });
    } catch (error) {
      if (httpStatus(error) !== 404) throw error;
    }
  }

  // --- Leases (coordination.k8s.io/v1), as raw JSON ---

  async readLease(namespace: string, name: string, signal?: AbortSignal): Promise<LeaseObject | undefined> {
    try {
      return (await this.#custom.getNamespacedCustomObject(
        { ...LEASES, namespace, name },
        withSignal(signal),
      )) as LeaseObject;
    } catch (error) {
      if (httpStatus(error) === 404) return undefined;
      throw error;
    }
  }

  async createLease(namespace: string, lease: LeaseObject, signal?: AbortSignal): Promise<LeaseObject> {
    return (await this.#custom.createNamespacedCustomObject(
      { ...LEASES, namespace, body: lease, fieldManager: FIELD_MANAGER },
      withSignal(signal),
    )) as LeaseObject;
  }

  /** Replaces the Lease if its resourceVersion still matches (409 otherwise). */
  async replaceLease(namespace: string, lease: LeaseObject, signal?: AbortSignal): Promise<LeaseObject> {
    return (await this.#custom.replaceNamespacedCustomObject(
      { ...LEASES, namespace, name: lease.metadata.name, body: lease, fieldManager: FIELD_MANAGER },
      withSignal(signal),
    )) as LeaseObject;
  }

  // --- Events (events.k8s.io/v1), as raw JSON ---

  async createEvent(namespace: string, event: EventObject): Promise<EventObject> {
    return (await this.#custom.createNamespacedCustomObject({
      ...EVENTS,
      namespace,
      body: event,
      fieldManager: FIELD_MANAGER,
    })) as EventObject;
  }

  /** Merge-patches an Event (its series: count and last observed time). */
  async patchEvent(namespace: string, name: string, patch: Record<string, unknown>): Promise<EventObject> {
    return (await this.#custom.patchNamespacedCustomObject(
      { ...EVENTS, namespace, name, body: patch, fieldManager: FIELD_MANAGER },
      mergePatch(),
    )) as EventObject;
  }
}

const LEASES = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases' } as const;
const EVENTS = { group: 'events.k8s.io', version: 'v1', plural: 'events' } as const;

/** The names of KubeClient's methods: every one is an API call listed in api-calls.ts. */
export type KubeClientMethod = {
  [K in keyof KubeClient]: KubeClient[K] extends (...args: never[]) => unknown ? K : never;
}[keyof KubeClient];

/** An events.k8s.io/v1 Event. */
export interface EventObject extends KubernetesObject {
  metadata: ObjectMeta;
  eventTime: string;
  series?: { count: number; lastObservedTime: string };
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  regarding: { apiVersion: string; kind: string; namespace?: string; name: string; uid?: string };
  note?: string;
  type: 'Normal' | 'Warning';
}

export interface LeaseObject extends KubernetesObject {
  metadata: ObjectMeta;
  spec?: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number;
  };
}
