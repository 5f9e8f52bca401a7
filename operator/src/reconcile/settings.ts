import { managedOwners } from '@tollgate/gateway/domain/managed-resource';
import { applyManagedOptions, deleteManagedOptions } from '@tollgate/gateway/domain/options/managed';
import type { ConditionInput } from '../kube/status.ts';
import type { GatewaySettingsSpec, GatewaySettingsStatus } from '../types/generated.ts';
import { type Outcome, type Reconciler, resourceRef } from './types.ts';

/** The conditions for what the option table accepted and refused. */
export function settingsConditions(
  status: Required<Pick<GatewaySettingsStatus, 'applied' | 'rejected'>>,
): ConditionInput[] {
  const synced: ConditionInput = {
    type: 'Synced',
    status: 'True',
    reason: 'Synced',
    message: `${status.applied.length} setting(s) held as declared`,
  };
  if (status.rejected.length === 0) {
    return [{ type: 'Ready', status: 'True', reason: 'Reconciled', message: 'Every setting is applied' }, synced];
  }
  const listed = status.rejected
    .slice(0, 10)
    .map((r) => `${r.key}: ${r.reason}`)
    .join('; ');
  const more = status.rejected.length > 10 ? `; and ${status.rejected.length - 10} more` : '';
  return [
    {
      type: 'Ready',
      status: 'False',
      reason: 'InvalidSettings',
      message: `${status.rejected.length} setting(s) rejected: ${listed}${more}`,
    },
    synced,
  ];
}

/**
 * GatewaySettings -> options rows, each validated by the gateway's option table and marked as the
 * resource's (read-only in the API). Rejected keys are listed in status.rejected and keep what they held.
 */
export const settingsReconciler: Reconciler<GatewaySettingsSpec> = {
  kind: 'GatewaySettings',
  conditionTypes: ['Ready', 'Synced'],

  async reconcile(resource, ctx): Promise<Outcome> {
    const settings = resource.spec?.settings ?? {};
    const result = await applyManagedOptions({ db: ctx.db, bus: ctx.bus }, resourceRef(resource), settings);
    // Bounded as the CRD's status schema bounds them, so the status write is never refused.
    const status = {
      applied: result.applied.map((key) => key.slice(0, 128)),
      rejected: result.rejected.map((r) => ({ key: r.key.slice(0, 128), reason: r.reason.slice(0, 1024) })),
    };
    if (result.changed.length > 0) {
      ctx.logger.info(
        {
          kind: 'GatewaySettings',
          resource: `${resource.metadata.namespace}/${resource.metadata.name}`,
          keys: result.changed,
        },
        'Options written to the store',
      );
    }
    return { conditions: settingsConditions(status), status, retry: result.rejected.length > 0 };
  },

  async finalize(resource, ctx) {
    await deleteManagedOptions({ db: ctx.db, bus: ctx.bus }, resource.metadata.uid ?? '');
  },

  owners: (ctx) => managedOwners(ctx.db, 'options'),

  async removeOrphan(owner, ctx) {
    await deleteManagedOptions({ db: ctx.db, bus: ctx.bus }, owner.uid);
  },
};
