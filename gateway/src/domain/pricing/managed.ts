import type { Insertable, Kysely } from 'kysely';
import type { Bus } from '../../cluster/types.ts';
import type { Database, ModelPricesTable } from '../../store/database.ts';
import { compileExpression, ExprError } from '../billing/expr/index.ts';
import {
  managedColumns,
  OPERATOR_MANAGER,
  type ResourceRef,
  resourceName,
  type SpecRejection,
} from '../managed-resource.ts';
import { PRICES_CHANNEL } from './service.ts';

/**
 * Model prices declared as ModelPrice custom resources (crds/README.md): US dollars in the resource,
 * new-api's ratios in model_prices, which PricingService lays over the option maps on every pod.
 */

/** USD per 1M tokens, USD per call, or a billing expression (`tiered_expr`): exactly one of the three. */
export interface ModelPriceSpec {
  model: string;
  tiered?: { expression: string };
  perToken?: {
    input: number;
    output?: number | undefined;
    cacheRead?: number | undefined;
    cacheWrite?: number | undefined;
  };
  perCall?: { price: number };
}

export type PriceColumns = Pick<
  Insertable<ModelPricesTable>,
  | 'quota_type'
  | 'model_ratio'
  | 'completion_ratio'
  | 'cache_ratio'
  | 'cache_creation_ratio'
  | 'model_price'
  | 'billing_expr'
>;

/** Ratio 1 is $2 per 1M input tokens (new-api's unit). */
const USD_PER_RATIO = 2;

/** Twelve significant digits: 0.6 / 0.15 is 4, not 3.9999999999999996. */
const tidy = (value: number) => Number(value.toPrecision(12));

const usd = (value: number | undefined) => value !== undefined && Number.isFinite(value) && value >= 0;

/**
 * The model_prices columns for a spec: per token, model ratio = input / 2, completion ratio =
 * output / input, cache ratio = cacheRead / input, cache-creation ratio = cacheWrite / input
 * (absent prices leave the gateway's defaults); per call, the model price; tiered, the expression alone
 * (PricingService lays it over billing_setting.billing_mode / billing_expr).
 */
export function priceColumns(spec: ModelPriceSpec): { ok: true; columns: PriceColumns } | SpecRejection {
  const model = spec.model.trim();
  if (model === '') return invalid('model must not be empty');
  if ([spec.perToken, spec.perCall, spec.tiered].filter((price) => price !== undefined).length !== 1) {
    return invalid('exactly one of perToken, perCall and tiered must be set');
  }
  if (spec.tiered) return tieredColumns(spec.tiered.expression);
  if (spec.perCall) {
    if (!usd(spec.perCall.price)) return invalid('perCall.price must be a number ≥ 0');
    return {
      ok: true,
      columns: {
        quota_type: 1,
        model_price: tidy(spec.perCall.price),
        model_ratio: null,
        completion_ratio: null,
        cache_ratio: null,
        cache_creation_ratio: null,
        billing_expr: null,
      },
    };
  }
  const { input, output, cacheRead, cacheWrite } = spec.perToken!;
  if (!usd(input)) return invalid('perToken.input must be a number ≥ 0');
  for (const [field, value] of Object.entries({ output, cacheRead, cacheWrite })) {
    if (value !== undefined && !usd(value)) return invalid(`perToken.${field} must be a number ≥ 0`);
  }
  const relative = (value: number | undefined, field: string): number | null | SpecRejection => {
    if (value === undefined) return null;
    if (input === 0) return value === 0 ? 0 : invalid(`perToken.${field} needs a perToken.input above 0`);
    return tidy(value / input);
  };
  const completion = relative(output, 'output');
  const cache = relative(cacheRead, 'cacheRead');
  const creation = relative(cacheWrite, 'cacheWrite');
  for (const ratio of [completion, cache, creation]) if (typeof ratio === 'object' && ratio !== null) return ratio;
  return {
    ok: true,
    columns: {
      quota_type: 0,
      model_price: null,
      model_ratio: tidy(input / USD_PER_RATIO),
      completion_ratio: completion as number | null,
      cache_ratio: cache as number | null,
      cache_creation_ratio: creation as number | null,
      billing_expr: null,
    },
  };
}

/** An expression that compiles, as `/api/option/` requires of billing_setting.billing_expr. */
function tieredColumns(expression: string): { ok: true; columns: PriceColumns } | SpecRejection {
  if (expression.trim() === '') return invalid('tiered.expression must not be empty');
  try {
    compileExpression(expression);
  } catch (error) {
    if (!(error instanceof ExprError)) throw error;
    return invalid(`tiered.expression is invalid at position ${error.position + 1}: ${error.reason.en}`);
  }
  const none = { model_ratio: null, completion_ratio: null, cache_ratio: null, cache_creation_ratio: null };
  return { ok: true, columns: { quota_type: 0, ...none, model_price: null, billing_expr: expression } };
}

export type ManagedPriceResult = { ok: true; changed: boolean } | SpecRejection;

/**
 * Makes model_prices hold `spec` for `owner`: one row for its model (a model another resource
 * prices is refused, naming it), and none for a model it priced before under another name.
 */
export async function applyManagedPrice(
  deps: { db: Kysely<Database>; bus?: Bus | undefined },
  owner: ResourceRef,
  spec: ModelPriceSpec,
): Promise<ManagedPriceResult> {
  const computed = priceColumns(spec);
  if (!computed.ok) return computed;
  const model = spec.model.trim();
  const { columns } = computed;
  const result = await deps.db
    .transaction()
    .execute(async (trx): Promise<ManagedPriceResult> => {
      const rows = await trx
        .selectFrom('model_prices')
        .selectAll()
        .where((eb) => eb.or([eb('model', '=', model), eb('managed_uid', '=', owner.uid)]))
        .forUpdate()
        .execute();
      const current = rows.find((row) => row.model === model);
      if (current?.managed_by && current.managed_uid !== owner.uid) {
        return {
          ok: false,
          code: 'MODEL_PRICE_CONFLICT',
          message: `model ${model} is already priced by ModelPrice ${resourceName(current)}`,
        };
      }
      const stale = rows.filter((row) => row.model !== model && row.managed_uid === owner.uid).map((row) => row.model);
      if (stale.length > 0) await trx.deleteFrom('model_prices').where('model', 'in', stale).execute();
      const ownership = managedColumns(owner);
      const same =
        current !== undefined &&
        (Object.keys(columns) as Array<keyof PriceColumns>).every((key) => current[key] === columns[key]) &&
        current.managed_by === ownership.managed_by &&
        current.managed_namespace === ownership.managed_namespace &&
        current.managed_name === ownership.managed_name;
      if (!same) {
        const values = { ...columns, ...ownership, updated_at: Math.floor(Date.now() / 1000) };
        // Only a row nobody owns or this resource owns is overwritten: another resource may have
        // inserted the model since the lock above found no row.
        const written = await trx
          .insertInto('model_prices')
          .values({ model, ...values })
          .onConflict((conflict) =>
            conflict
              .column('model')
              .doUpdateSet(values)
              .where((eb) =>
                eb.or([eb('model_prices.managed_by', 'is', null), eb('model_prices.managed_uid', '=', owner.uid)]),
              ),
          )
          .returning('model')
          .execute();
        if (written.length === 0) throw new OwnedElsewhere();
      }
      return { ok: true, changed: !same || stale.length > 0 };
    })
    .catch((error: unknown) => {
      if (!(error instanceof OwnedElsewhere)) throw error;
      return {
        ok: false as const,
        code: 'MODEL_PRICE_CONFLICT',
        message: `model ${model} is already priced by another ModelPrice`,
      };
    });
  if (result.ok && result.changed) announce(deps.bus);
  return result;
}

/** Deletes the prices `uid` owns; answers how many. */
export async function deleteManagedPrices(deps: { db: Kysely<Database>; bus?: Bus | undefined }, uid: string) {
  const deleted = await deps.db
    .deleteFrom('model_prices')
    .where('managed_by', '=', OPERATOR_MANAGER)
    .where('managed_uid', '=', uid)
    .returning('model')
    .execute();
  if (deleted.length > 0) announce(deps.bus);
  return deleted.length;
}

function invalid(message: string): SpecRejection {
  return { ok: false, code: 'MODEL_PRICE_INVALID', message };
}

/** Rolls the transaction back: the row was taken by another resource meanwhile. */
class OwnedElsewhere extends Error {}

/** Every pod's PricingService re-reads model_prices on this message. */
function announce(bus: Bus | undefined): void {
  bus?.publish(PRICES_CHANNEL, '{}').catch(() => {});
}
