import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;

export async function isSetupDone(db: Db): Promise<boolean> {
  const row = await db.selectFrom('setups').select('id').executeTakeFirst();
  return row !== undefined;
}

/** Records that setup is done; false if it already was (the single row exists). */
export async function markSetupDone(db: Db, version: string, now: number): Promise<boolean> {
  const inserted = await db
    .insertInto('setups')
    .values({ id: 1, version, initialized_at: now })
    .onConflict((c) => c.column('id').doNothing())
    .executeTakeFirst();
  return inserted.numInsertedOrUpdatedRows === 1n;
}
