import type { Bus } from '@tollgate/gateway/cluster';
import type { Keyring } from '@tollgate/gateway/domain/keyring';
import type { ManagedRecordOwner, ResourceRef } from '@tollgate/gateway/domain/managed-resource';
import type { Store } from '@tollgate/gateway/store';
import type { AccessTokenUsers } from '../config.ts';
import type { KubeClient, Resource, Secret } from '../kube/client.ts';
import type { EventInput } from '../kube/events.ts';
import type { ConditionInput } from '../kube/status.ts';
import type { Kind } from '../types/generated.ts';

/** The finalizer prefix: each instance's is `tollgate.dev/finalizer-<instance>` (see ownership.ts). */
export const FINALIZER = 'tollgate.dev/finalizer';

/** Secrets the operator reads or writes carry this label; its Secret informer sees only those. */
export const WATCH_LABEL = 'tollgate.dev/watch';

export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/** What a reconcile may use: the gateway's store and bus, the Kubernetes API and the Secret cache. */
export interface ReconcileContext {
  db: Store['db'];
  keyring: Keyring;
  bus: Bus;
  kube: KubeClient;
  /** A Secret from the informer's cache (only labelled Secrets are there). */
  secret(namespace: string, name: string): Secret | undefined;
  /** Every cached Secret of a namespace. */
  secrets(namespace: string): readonly Secret[];
  gatewayBaseUrl: string;
  /** Which users AccessTokens of each namespace may mint keys for. */
  accessTokenUsers: AccessTokenUsers;
  logger: Logger;
}

/** What one pass decided: the conditions, the kind's own status fields, and when to come back. */
export interface Outcome {
  /** Every condition the kind owns, in order (Ready first). */
  conditions: ConditionInput[];
  /** Status fields besides observedGeneration and conditions; an absent field is removed. */
  status: object;
  /** A spec problem (or a missing dependency): try again after the key's backoff. */
  retry?: boolean;
  /** Come back sooner than the periodic resync (e.g. when a token expires). */
  requeueAfterMs?: number;
  /** Annotations to set on the resource (null removes one). */
  annotations?: Record<string, string | null>;
  /** Transitions worth an Event besides Ready=False (which the controller reports itself). */
  events?: EventInput[];
}

/** One controller per kind: converge the store to the resource, and clean up after it. */
export interface Reconciler<Spec = unknown> {
  kind: Kind;
  /** The condition types it owns, in order. */
  conditionTypes: readonly string[];
  /** Names of Secrets (in the resource's namespace) it reads or writes. */
  secretNames?(resource: Resource<Spec>): string[];
  /** Idempotent; spec problems are answered as an Outcome with `retry`, never thrown. */
  reconcile(resource: Resource<Spec>, ctx: ReconcileContext): Promise<Outcome>;
  /** Removes the records (and Secrets) the resource owns; idempotent. */
  finalize(resource: Resource<Spec>, ctx: ReconcileContext): Promise<void>;
  /** The resources that own records in the store, to find records whose resource is gone. */
  owners(ctx: ReconcileContext): Promise<ManagedRecordOwner[]>;
  /** Removes the records a resource that no longer exists owned. */
  removeOrphan(owner: ManagedRecordOwner, ctx: ReconcileContext): Promise<void>;
}

export function resourceRef(resource: Resource): ResourceRef {
  return {
    namespace: resource.metadata.namespace ?? '',
    name: resource.metadata.name,
    uid: resource.metadata.uid ?? '',
  };
}

/** Ready and Synced both false for the same reason: the spec cannot be written as it stands. */
export function notApplied(reason: string, message: string): ConditionInput[] {
  return [
    { type: 'Ready', status: 'False', reason, message },
    { type: 'Synced', status: 'False', reason, message },
  ];
}

/** Ready and Synced both true. */
export function applied(message: string): ConditionInput[] {
  return [
    { type: 'Ready', status: 'True', reason: 'Reconciled', message },
    { type: 'Synced', status: 'True', reason: 'Synced', message: 'The last reconcile wrote what the spec asks for' },
  ];
}
