import type { Kysely } from 'kysely';
import type { Bus } from '../../cluster/types.ts';
import type { Database } from '../../store/database.ts';
import {
  managedColumns,
  OPERATOR_MANAGER,
  type ResourceRef,
  resourceName,
  type SpecRejection,
} from '../managed-resource.ts';
import { checkRateLimits, type RateLimits } from '../rate-limits.ts';

/** Bus channel naming the groups rows that changed, so every pod can re-read them. */
export const GROUPS_CHANNEL = 'groups';

/** A group as a Group custom resource declares it (crds/README.md). */
export interface GroupSpec {
  name: string;
  ratio: number;
  description?: string | undefined;
  selectable?: boolean | undefined;
  /** User group -> ratio when a user of that group uses this group. */
  userGroupRatios?: Record<string, number> | undefined;
  /** Requests and tokens per minute of the whole group: model or "*" -> { rpm, tpm } (domain/rate-limits.ts). */
  rateLimits?: RateLimits | undefined;
}

export type ManagedGroupResult = { ok: true; changed: boolean } | SpecRejection;

const ratioOk = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** The groups row a spec stands for, or why the gateway refuses it. */
export function groupColumns(spec: GroupSpec) {
  const name = spec.name.trim();
  if (name === '' || /[\s,]/.test(name)) {
    return invalid(`group name "${spec.name}" must be non-empty, without spaces or commas`);
  }
  if (!ratioOk(spec.ratio)) return invalid('ratio must be a number ≥ 0');
  const ratios = spec.userGroupRatios ?? {};
  for (const [group, ratio] of Object.entries(ratios)) {
    if (!ratioOk(ratio)) return invalid(`userGroupRatios.${group} must be a number ≥ 0`);
  }
  const sorted = Object.fromEntries(Object.entries(ratios).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const limits = checkRateLimits(spec.rateLimits ?? {}, 'rateLimits');
  if (!limits.ok) return invalid(limits.message.en);
  return {
    ok: true as const,
    columns: {
      name,
      ratio: spec.ratio,
      description: spec.description ?? '',
      selectable: spec.selectable ?? false,
      user_group_ratios: JSON.stringify(sorted),
      rate_limits: JSON.stringify(limits.limits),
    },
  };
}

/**
 * Makes the groups table hold `spec` for `owner`: one row under its name (a name another resource
 * declares is refused, naming it), and none under a name it used before.
 */
export async function applyManagedGroup(
  deps: { db: Kysely<Database>; bus?: Bus | undefined },
  owner: ResourceRef,
  spec: GroupSpec,
): Promise<ManagedGroupResult> {
  const computed = groupColumns(spec);
  if (!computed.ok) return computed;
  const { columns } = computed;
  const result = await deps.db
    .transaction()
    .execute(async (trx) => {
      const rows = await trx
        .selectFrom('groups')
        .selectAll()
        .where((eb) => eb.or([eb('name', '=', columns.name), eb('managed_uid', '=', owner.uid)]))
        .forUpdate()
        .execute();
      const current = rows.find((row) => row.name === columns.name);
      if (current?.managed_by && current.managed_uid !== owner.uid) {
        return {
          ok: false as const,
          code: 'GROUP_CONFLICT',
          message: `group ${columns.name} is already declared by Group ${resourceName(current)}`,
        };
      }
      const stale = rows.filter((row) => row.name !== columns.name && row.managed_uid === owner.uid).map((r) => r.name);
      if (stale.length > 0) await trx.deleteFrom('groups').where('name', 'in', stale).execute();
      const ownership = managedColumns(owner);
      const same =
        current !== undefined &&
        current.ratio === columns.ratio &&
        current.description === columns.description &&
        current.selectable === columns.selectable &&
        current.user_group_ratios === columns.user_group_ratios &&
        current.rate_limits === columns.rate_limits &&
        current.managed_by === ownership.managed_by &&
        current.managed_namespace === ownership.managed_namespace &&
        current.managed_name === ownership.managed_name;
      if (!same) {
        const { name, ...rest } = columns;
        const values = { ...rest, ...ownership, updated_at: Math.floor(Date.now() / 1000) };
        // Only a row nobody owns or this resource owns is overwritten (another may have inserted it meanwhile).
        const written = await trx
          .insertInto('groups')
          .values({ name, ...values })
          .onConflict((conflict) =>
            conflict
              .column('name')
              .doUpdateSet(values)
              .where((eb) => eb.or([eb('groups.managed_by', 'is', null), eb('groups.managed_uid', '=', owner.uid)])),
          )
          .returning('name')
          .execute();
        if (written.length === 0) throw new OwnedElsewhere();
      }
      return { ok: true as const, changed: !same || stale.length > 0, names: [columns.name, ...stale] };
    })
    .catch((error: unknown) => {
      if (!(error instanceof OwnedElsewhere)) throw error;
      return {
        ok: false as const,
        code: 'GROUP_CONFLICT',
        message: `group ${columns.name} is already declared by another Group`,
      };
    });
  if (!result.ok) return result;
  if (result.changed) announce(deps.bus, result.names);
  return { ok: true, changed: result.changed };
}

/** Deletes the groups `uid` declares; answers how many. */
export async function deleteManagedGroups(deps: { db: Kysely<Database>; bus?: Bus | undefined }, uid: string) {
  const deleted = await deps.db
    .deleteFrom('groups')
    .where('managed_by', '=', OPERATOR_MANAGER)
    .where('managed_uid', '=', uid)
    .returning('name')
    .execute();
  if (deleted.length > 0) {
    announce(
      deps.bus,
      deleted.map((r) => r.name),
    );
  }
  return deleted.length;
}

function invalid(message: string): SpecRejection {
  return { ok: false, code: 'GROUP_INVALID', message };
}

/** Rolls the transaction back: the row was taken by another resource meanwhile. */
class OwnedElsewhere extends Error {}

function announce(bus: Bus | undefined, names: string[]): void {
  bus?.publish(GROUPS_CHANNEL, JSON.stringify({ names })).catch(() => {});
}
