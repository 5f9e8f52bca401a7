import {
  applyManagedGroup,
  deleteManagedGroups,
  type GroupSpec as StoredGroup,
} from '@tollgate/gateway/domain/groups/managed';
import { managedOwners } from '@tollgate/gateway/domain/managed-resource';
import type { Resource } from '../kube/client.ts';
import type { GroupSpec } from '../types/generated.ts';
import { applied, notApplied, type Outcome, type Reconciler, resourceRef } from './types.ts';

/** The group as the store keeps it: named by spec.name, else by the resource. */
export function storedGroup(resource: Resource<GroupSpec>): StoredGroup {
  const spec = resource.spec!;
  return {
    name: spec.name?.trim() || resource.metadata.name,
    ratio: spec.ratio,
    description: spec.description ?? '',
    selectable: spec.selectable ?? false,
    userGroupRatios: spec.userGroupRatios ?? {},
    rateLimits: spec.rateLimits ?? {},
  };
}

/** Group -> one groups row, announced on the groups bus channel. */
export const groupReconciler: Reconciler<GroupSpec> = {
  kind: 'Group',
  conditionTypes: ['Ready', 'Synced'],

  async reconcile(resource, ctx): Promise<Outcome> {
    const group = storedGroup(resource);
    const result = await applyManagedGroup({ db: ctx.db, bus: ctx.bus }, resourceRef(resource), group);
    if (!result.ok) {
      const reason = result.code === 'GROUP_CONFLICT' ? 'Conflict' : 'InvalidSpec';
      return { conditions: notApplied(reason, result.message), status: {}, retry: true };
    }
    return { conditions: applied(`Group ${group.name} is in the store`), status: {} };
  },

  async finalize(resource, ctx) {
    await deleteManagedGroups({ db: ctx.db, bus: ctx.bus }, resource.metadata.uid ?? '');
  },

  owners: (ctx) => managedOwners(ctx.db, 'groups'),

  async removeOrphan(owner, ctx) {
    await deleteManagedGroups({ db: ctx.db, bus: ctx.bus }, owner.uid);
  },
};
