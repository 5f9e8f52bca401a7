import { setTimeout as sleep } from 'node:timers/promises';
import type { OperatorScope } from './config.ts';
import { describeError, httpStatus, type KubeClient, type LeaseObject, type Resource } from './kube/client.ts';
import { microTime } from './kube/leader.ts';
import { Ownership } from './reconcile/ownership.ts';
import type { Logger } from './reconcile/types.ts';
import { KINDS, PLURALS } from './types/generated.ts';

export interface RemoveFinalizersOptions {
  kube: Pick<
    KubeClient,
    'listResources' | 'getResource' | 'patchMetadata' | 'readLease' | 'createLease' | 'replaceLease'
  >;
  scope: OperatorScope;
  /** The operator's Lease: taken first, so that a running leader stops before finalizers go. */
  lease: { namespace: string; name: string; identity: string };
  /** How long the Lease is held (the operator does not resume before that). Default 120 s. */
  holdSeconds?: number;
  /** Waits until a leader that held the Lease has noticed and stopped its running reconciles. Default: 5 s. */
  settle?: () => Promise<void>;
  logger: Pick<Logger, 'info' | 'warn'>;
}

/**
 * For the chart's pre-delete hook: takes the operator's Lease (a running leader sees another holder
 * at its next renewal and stops reconciling, so it cannot put finalizers back), then removes this
 * instance's finalizer from every tollgate.dev resource it watches and owns. Records in the gateway's
 * database are left as they are. Answers how many finalizers were removed.
 */
export async function removeFinalizers(options: RemoveFinalizersOptions): Promise<number> {
  const { kube, scope, logger } = options;
  const previous = await takeLease(options);
  if (previous) await (options.settle ?? (() => sleep(5_000)))();
  const ownership = new Ownership(scope);
  const namespaces: (string | undefined)[] = scope.watchNamespaces.length > 0 ? scope.watchNamespaces : [undefined];
  let removed = 0;
  for (const kind of KINDS) {
    const plural = PLURALS[kind];
    for (const namespace of namespaces) {
      const list = await kube.listResources(plural, namespace);
      for (const listed of list.items) {
        if (await release(kube, ownership, plural, listed)) {
          removed++;
          logger.info({ kind, resource: `${listed.metadata.namespace}/${listed.metadata.name}` }, 'Finalizer removed');
        }
      }
    }
  }
  logger.info({ removed }, 'Finalizers removed');
  return removed;
}

/** Removes the finalizer from one resource; on a conflict reads it again and retries. */
async function release(
  kube: RemoveFinalizersOptions['kube'],
  ownership: Ownership,
  plural: string,
  listed: Resource,
): Promise<boolean> {
  let resource: Resource | undefined = listed;
  for (let attempt = 0; attempt < 5 && resource; attempt++) {
    if (!ownership.holds(resource)) return false;
    const { namespace = '', name, resourceVersion } = resource.metadata;
    try {
      await kube.patchMetadata(plural, namespace, name, { resourceVersion, finalizers: ownership.without(resource) });
      return true;
    } catch (error) {
      const status = httpStatus(error);
      if (status === 404) return false;
      if (status !== 409) throw error;
      resource = await kube.getResource(plural, namespace, name);
    }
  }
  if (resource) throw new Error(`${plural} ${listed.metadata.namespace}/${listed.metadata.name} kept changing`);
  return false;
}

/** Takes the Lease whoever holds it; answers the holder it took it from ('' for none). */
async function takeLease(options: RemoveFinalizersOptions): Promise<string> {
  const { kube, lease, logger } = options;
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = microTime(Date.now());
    const current = await kube.readLease(lease.namespace, lease.name);
    const spec = {
      holderIdentity: lease.identity,
      leaseDurationSeconds: options.holdSeconds ?? 120,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: (current?.spec?.leaseTransitions ?? 0) + 1,
    };
    try {
      if (current) await kube.replaceLease(lease.namespace, { ...current, spec });
      else {
        const created: LeaseObject = {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: lease.name, namespace: lease.namespace },
          spec,
        };
        await kube.createLease(lease.namespace, created);
      }
      logger.info(
        { lease: `${lease.namespace}/${lease.name}` },
        'Took the operator Lease: the operator stops reconciling',
      );
      return current?.spec?.holderIdentity || '';
    } catch (error) {
      if (httpStatus(error) !== 409) throw error;
      logger.warn({ err: describeError(error) }, 'The Lease changed meanwhile; trying again');
    }
  }
  throw new Error(`could not take the Lease ${lease.namespace}/${lease.name}`);
}
