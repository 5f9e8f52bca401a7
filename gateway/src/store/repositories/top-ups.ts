import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, TopUpsTable } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;

export function insertTopUp(db: Db, row: Insertable<TopUpsTable>) {
  return db.insertInto('top_ups').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Marks a pending order paid; answers it, or undefined when it is unknown or was already completed. */
export function completeTopUp(db: Db, tradeNo: string, at: number) {
  return db
    .updateTable('top_ups')
    .set({ status: 'success', complete_time: at })
    .where('trade_no', '=', tradeNo)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}
