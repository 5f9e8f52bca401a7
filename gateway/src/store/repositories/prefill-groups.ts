import type { Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { Database, PrefillGroupsTable } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type PrefillGroupRow = Selectable<PrefillGroupsTable>;

/** Every group, or those of one type, by id. */
export function listPrefillGroups(db: Db, type?: string): Promise<PrefillGroupRow[]> {
  return db
    .selectFrom('prefill_groups')
    .selectAll()
    .$if(Boolean(type), (qb) => qb.where('type', '=', type!))
    .orderBy('id')
    .execute();
}

export function findPrefillGroup(db: Db, id: number): Promise<PrefillGroupRow | undefined> {
  return db.selectFrom('prefill_groups').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Inserts a group; undefined when its name is taken (the unique name decides, also under races). */
export function insertPrefillGroup(db: Db, row: Insertable<PrefillGroupsTable>): Promise<PrefillGroupRow | undefined> {
  return db
    .insertInto('prefill_groups')
    .values(row)
    .onConflict((oc) => oc.column('name').doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function updatePrefillGroup(
  db: Db,
  id: number,
  changes: Updateable<PrefillGroupsTable>,
): Promise<PrefillGroupRow | undefined> {
  return db.updateTable('prefill_groups').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Whether another group (not `exceptId`) already has this name. */
export async function prefillGroupNameTaken(db: Db, name: string, exceptId: number): Promise<boolean> {
  const row = await db
    .selectFrom('prefill_groups')
    .select('id')
    .where('name', '=', name)
    .where('id', '<>', exceptId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function deletePrefillGroup(db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom('prefill_groups').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
