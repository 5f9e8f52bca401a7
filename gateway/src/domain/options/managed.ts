import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Bus } from '../../cluster/types.ts';
import type { Database } from '../../store/database.ts';
import { managedColumns, OPERATOR_MANAGER, type ResourceRef, resourceName } from '../managed-resource.ts';
import { OPTIONS_CHANNEL } from './service.ts';
import { validateOption } from './validate.ts';

/**
 * Options declared by GatewaySettings custom resources. Each value is checked by the one option
 * table (validateOption); a managed row carries its resource, which makes the key read-only in the
 * API (OptionsService.setMany refuses it, naming the resource). Other pods hear of every change on
 * the options bus channel, as if another pod had written it.
 */

export interface ManagedOptionsResult {
  /** Keys now held as the resource says, in the order given. */
  applied: string[];
  /** Keys the option table or another resource refused, with why. */
  rejected: Array<{ key: string; reason: string }>;
  /** Keys written or removed by this call (empty when the store already matched). */
  changed: string[];
}

/** Origin of the operator's bus messages: never a gateway pod's own, so every pod re-reads. */
const ORIGIN = `${OPERATOR_MANAGER}:${randomUUID()}`;

/**
 * Makes the options `owner` declares hold `settings`: valid keys are written and marked as the
 * resource's, keys it declared before and dropped since are deleted (back to their defaults).
 * A key that fails validation keeps whatever it held before, like a bad rollout keeps the old pods.
 */
export async function applyManagedOptions(
  deps: { db: Kysely<Database>; bus?: Bus | undefined },
  owner: ResourceRef,
  settings: Readonly<Record<string, string>>,
): Promise<ManagedOptionsResult> {
  const valid = new Map<string, string>();
  const rejected: ManagedOptionsResult['rejected'] = [];
  for (const [key, value] of Object.entries(settings)) {
    try {
      valid.set(key, validateOption(key, value));
    } catch (error) {
      rejected.push({ key, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  const declared = new Set(Object.keys(settings));
  const ownership = managedColumns(owner);
  const changed = await deps.db.transaction().execute(async (trx) => {
    const keys = [...declared];
    const rows = await trx
      .selectFrom('options')
      .selectAll()
      .where((eb) => eb.or([...(keys.length > 0 ? [eb('key', 'in', keys)] : []), eb('managed_uid', '=', owner.uid)]))
      .forUpdate()
      .execute();
    const byKey = new Map(rows.map((row) => [row.key, row]));
    const changed: string[] = [];
    const now = Math.floor(Date.now() / 1000);
    for (const [key, value] of valid) {
      const row = byKey.get(key);
      if (row?.managed_by && row.managed_uid !== owner.uid) {
        valid.delete(key);
        rejected.push({ key, reason: `managed by GatewaySettings ${resourceName(row)}` });
        continue;
      }
      if (
        row &&
        row.value === value &&
        row.managed_by === ownership.managed_by &&
        row.managed_namespace === ownership.managed_namespace &&
        row.managed_name === ownership.managed_name
      ) {
        continue;
      }
      const values = { value, updated_at: now, ...ownership };
      // A row another resource inserted since the lock above found none is not taken over.
      const written = await trx
        .insertInto('options')
        .values({ key, ...values })
        .onConflict((conflict) =>
          conflict
            .column('key')
            .doUpdateSet(values)
            .where((eb) => eb.or([eb('options.managed_by', 'is', null), eb('options.managed_uid', '=', owner.uid)])),
        )
        .returning('key')
        .execute();
      if (written.length === 0) {
        valid.delete(key);
        rejected.push({ key, reason: 'managed by another GatewaySettings' });
        continue;
      }
      changed.push(key);
    }
    const dropped = rows.filter((row) => row.managed_uid === owner.uid && !declared.has(row.key)).map((r) => r.key);
    if (dropped.length > 0) {
      await trx.deleteFrom('options').where('key', 'in', dropped).where('managed_uid', '=', owner.uid).execute();
      changed.push(...dropped);
    }
    return changed;
  });
  if (changed.length > 0) await announce(deps.bus, changed);
  const order = [...declared];
  rejected.sort((a, b) => order.indexOf(a.key) - order.indexOf(b.key));
  return { applied: order.filter((key) => valid.has(key)), rejected, changed };
}

/** Deletes every option `uid` declares (they fall back to their defaults); answers the keys. */
export async function deleteManagedOptions(
  deps: { db: Kysely<Database>; bus?: Bus | undefined },
  uid: string,
): Promise<string[]> {
  const deleted = await deps.db
    .deleteFrom('options')
    .where('managed_by', '=', OPERATOR_MANAGER)
    .where('managed_uid', '=', uid)
    .returning('key')
    .execute();
  const keys = deleted.map((r) => r.key);
  if (keys.length > 0) await announce(deps.bus, keys);
  return keys;
}

async function announce(bus: Bus | undefined, keys: string[]): Promise<void> {
  // Values never travel on the bus: each pod re-reads the named keys (a missing row means the default).
  await bus?.publish(OPTIONS_CHANNEL, JSON.stringify({ origin: ORIGIN, keys })).catch(() => {});
}
