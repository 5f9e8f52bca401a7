import { type Insertable, type Kysely, type Selectable, sql, type Transaction, type Updateable } from 'kysely';
import type { Database, RedemptionsTable } from '../database.ts';
import { containsPattern } from './like.ts';

type Db = Kysely<Database> | Transaction<Database>;

export type RedemptionRow = Selectable<RedemptionsTable>;

export const REDEMPTION_STATUS = { unused: 1, disabled: 2, used: 3 } as const;

export function insertRedemptions(db: Db, rows: Insertable<RedemptionsTable>[]): Promise<RedemptionRow[]> {
  return db.insertInto('redemptions').values(rows).returningAll().execute();
}

export function findRedemption(db: Db, id: number): Promise<RedemptionRow | undefined> {
  return db
    .selectFrom('redemptions')
    .selectAll()
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** A code by its key (unique index), deleted ones included so a redeem can say why it failed. */
export function findRedemptionByKey(db: Db, key: string): Promise<RedemptionRow | undefined> {
  return db.selectFrom('redemptions').selectAll().where('key', '=', key).executeTakeFirst();
}

export const REDEMPTION_SORT_FIELDS = ['id', 'name', 'status', 'quota', 'created_time', 'redeemed_time'] as const;
export type RedemptionSortField = (typeof REDEMPTION_SORT_FIELDS)[number];

export interface RedemptionSearch {
  /** An id (when it is a number) or part of the name. */
  keyword?: string | undefined;
  name?: string | undefined;
  status?: number | undefined;
  usedUserId?: number | undefined;
  ids?: readonly number[] | undefined;
  sort: { field: RedemptionSortField; order: 'asc' | 'desc' };
  offset: number;
  limit: number;
}

export async function searchRedemptions(
  db: Db,
  search: RedemptionSearch,
): Promise<{ items: RedemptionRow[]; total: number }> {
  let query = db.selectFrom('redemptions').where('deleted_at', 'is', null);
  const keyword = search.keyword?.trim();
  if (keyword) {
    query = query.where((eb) =>
      eb.or([
        ...(/^\d{1,9}$/.test(keyword) ? [eb('id', '=', Number(keyword))] : []),
        eb('name', 'ilike', containsPattern(keyword)),
      ]),
    );
  }
  if (search.name !== undefined) query = query.where('name', '=', search.name);
  if (search.status !== undefined) query = query.where('status', '=', search.status);
  if (search.usedUserId !== undefined) query = query.where('used_user_id', '=', search.usedUserId);
  if (search.ids !== undefined) {
    query = search.ids.length ? query.where('id', 'in', search.ids) : query.where(sql<boolean>`false`);
  }
  const { field, order } = search.sort;
  let page = query.selectAll().orderBy(field, order);
  if (field !== 'id') page = page.orderBy('id', 'desc');
  const [items, count] = await Promise.all([
    page.offset(search.offset).limit(search.limit).execute(),
    query.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items, total: count.n };
}

/** Changes a live code, only while it is in one of `statuses` (so a code redeemed meanwhile stays as it is). */
export function updateRedemption(
  db: Db,
  id: number,
  changes: Updateable<RedemptionsTable>,
  statuses: readonly number[],
): Promise<RedemptionRow | undefined> {
  return db
    .updateTable('redemptions')
    .set(changes)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .where('status', 'in', statuses)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteRedemption(db: Db, id: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('redemptions')
    .set({ deleted_at: now })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Deletes every used, disabled or expired code; answers how many. */
export async function deleteInvalidRedemptions(db: Db, now: number): Promise<number> {
  const result = await db
    .updateTable('redemptions')
    .set({ deleted_at: now })
    .where('deleted_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb('status', 'in', [REDEMPTION_STATUS.used, REDEMPTION_STATUS.disabled]),
        eb.and([eb('expired_time', '<>', 0), eb('expired_time', '<=', now)]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Marks an unused, live, unexpired code as used by `userId`, in one conditional UPDATE: of any number
 * of concurrent redeemers exactly one gets the row back (the others see status 3 after the row lock).
 */
export function claimRedemption(
  db: Db,
  key: string,
  userId: number,
  now: number,
): Promise<Pick<RedemptionRow, 'id' | 'quota'> | undefined> {
  return db
    .updateTable('redemptions')
    .set({ status: REDEMPTION_STATUS.used, used_user_id: userId, redeemed_time: now })
    .where('key', '=', key)
    .where('status', '=', REDEMPTION_STATUS.unused)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('expired_time', '=', 0), eb('expired_time', '>', now)]))
    .returning(['id', 'quota'])
    .executeTakeFirst();
}
