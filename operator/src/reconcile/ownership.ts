import type { OperatorScope } from '../config.ts';
import type { Resource } from '../kube/client.ts';
import { FINALIZER } from './types.ts';

/** The label that says which operator instance owns a resource. */
export const INSTANCE_LABEL = 'tollgate.dev/instance';

/**
 * Which resources are this instance's and which finalizer it puts on them. Every reconcile, finalizer,
 * status write and Event goes through `owns`, so two releases in one cluster never touch each
 * other's resources. The finalizer names the instance, so one instance can tell its own finalizer
 * from another's; `tollgate.dev/finalizer` (written before instances existed) counts as this
 * instance's on resources it owns.
 */
export class Ownership {
  readonly instance: string;
  readonly finalizer: string;
  readonly #claimUnlabelled: boolean;

  constructor(scope: Pick<OperatorScope, 'instance' | 'claimUnlabelled'>) {
    this.instance = scope.instance;
    this.#claimUnlabelled = scope.claimUnlabelled;
    this.finalizer = `${FINALIZER}-${scope.instance}`;
  }

  owns(resource: Resource): boolean {
    const label = resource.metadata.labels?.[INSTANCE_LABEL];
    return label === undefined ? this.#claimUnlabelled : label === this.instance;
  }

  /** Whether the resource carries this instance's finalizer (the legacy one counts when it owns it). */
  holds(resource: Resource): boolean {
    const finalizers = resource.metadata.finalizers ?? [];
    return finalizers.includes(this.finalizer) || (this.owns(resource) && finalizers.includes(FINALIZER));
  }

  /** The finalizer list with this instance's finalizer (and the legacy one on owned resources) removed. */
  without(resource: Resource): string[] {
    const owned = this.owns(resource);
    return (resource.metadata.finalizers ?? []).filter((f) => f !== this.finalizer && !(owned && f === FINALIZER));
  }
}
