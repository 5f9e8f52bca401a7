import { managedOwners } from '@tollgate/gateway/domain/managed-resource';
import { applyManagedPrice, deleteManagedPrices } from '@tollgate/gateway/domain/pricing/managed';
import type { ModelPriceSpec, ModelPriceStatus } from '../types/generated.ts';
import { applied, notApplied, type Outcome, type Reconciler, resourceRef } from './types.ts';

/** Which price the spec declares, for the Mode printer column. */
export function priceMode(spec: ModelPriceSpec | undefined): ModelPriceStatus['mode'] {
  const declared = (['perToken', 'perCall', 'tiered'] as const).filter((mode) => spec?.[mode] !== undefined);
  return declared.length === 1 ? declared[0] : undefined;
}

/** ModelPrice -> one model_prices row (ratios as crds/README.md says), announced to every PricingService. */
export const modelPriceReconciler: Reconciler<ModelPriceSpec> = {
  kind: 'ModelPrice',
  conditionTypes: ['Ready', 'Synced'],

  async reconcile(resource, ctx): Promise<Outcome> {
    const spec = resource.spec!;
    const status = { mode: priceMode(spec) };
    const result = await applyManagedPrice({ db: ctx.db, bus: ctx.bus }, resourceRef(resource), spec);
    if (!result.ok) {
      const reason = result.code === 'MODEL_PRICE_CONFLICT' ? 'Conflict' : 'InvalidSpec';
      return { conditions: notApplied(reason, result.message), status, retry: true };
    }
    return { conditions: applied(`The price of ${spec.model.trim()} is in the store`), status };
  },

  async finalize(resource, ctx) {
    await deleteManagedPrices({ db: ctx.db, bus: ctx.bus }, resource.metadata.uid ?? '');
  },

  owners: (ctx) => managedOwners(ctx.db, 'model_prices'),

  async removeOrphan(owner, ctx) {
    await deleteManagedPrices({ db: ctx.db, bus: ctx.bus }, owner.uid);
  },
};
