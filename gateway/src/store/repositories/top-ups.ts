import { type Insertable, type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Database, TopUpsTable } from '../database.ts';
import { containsPattern } from './like.ts';

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

export type TopUpRow = Selectable<TopUpsTable>;

export interface TopUpQuery {
  userId?: number | undefined;
  /** Part of the order number. */
  keyword?: string | undefined;
}

const matching = (db: Db, q: TopUpQuery) =>
  db
    .selectFrom('top_ups')
    .$if(q.userId !== undefined, (qb) => qb.where('user_id', '=', q.userId!))
    .$if(Boolean(q.keyword), (qb) => qb.where('trade_no', 'like', containsPattern(q.keyword!)));

/** A page of orders, newest first, and how many match. */
export async function listTopUps(
  db: Db,
  q: TopUpQuery,
  page: { offset: number; limit: number },
): Promise<{ rows: TopUpRow[]; total: number }> {
  const [rows, counted] = await Promise.all([
    matching(db, q).selectAll().orderBy('id', 'desc').offset(page.offset).limit(page.limit).execute(),
    matching(db, q).select(sql<number>`count(*)`.as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(counted.total) };
}

export function findTopUp(db: Db, tradeNo: string) {
  return db.selectFrom('top_ups').selectAll().where('trade_no', '=', tradeNo).executeTakeFirst();
}
