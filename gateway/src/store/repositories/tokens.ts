import {
  type Expression,
  type ExpressionBuilder,
  type Insertable,
  type Kysely,
  type Selectable,
  sql,
  type Transaction,
  type Updateable,
} from 'kysely';
import type { Database, TokensTable } from '../database.ts';
import { containsPattern } from './like.ts';

type Db = Kysely<Database> | Transaction<Database>;

export type TokenRow = Selectable<TokensTable>;

export const TOKEN_STATUS = { enabled: 1, disabled: 2, expired: 3, exhausted: 4 } as const;

/**
 * The status a token shows (SQL twin of `effectiveTokenStatus`): an enabled token whose expiry has
 * passed is expired, one with no quota left (and not unlimited) is exhausted.
 */
export function effectiveStatusSql(eb: ExpressionBuilder<Database, 'tokens'>, now: number): Expression<number> {
  return sql<number>`case
    when ${eb.ref('status')} = ${TOKEN_STATUS.enabled} and ${eb.ref('expired_time')} <> -1 and ${eb.ref('expired_time')} <= ${now} then ${TOKEN_STATUS.expired}
    when ${eb.ref('status')} = ${TOKEN_STATUS.enabled} and not ${eb.ref('unlimited_quota')} and ${eb.ref('remain_quota')} <= 0 then ${TOKEN_STATUS.exhausted}
    else ${eb.ref('status')} end`;
}

export function insertTokens(db: Db, rows: Insertable<TokensTable>[]): Promise<TokenRow[]> {
  return db.insertInto('tokens').values(rows).returningAll().execute();
}

/** One live token of one user: another user's id is as absent as a missing one. */
export function findUserToken(db: Db, userId: number, id: number): Promise<TokenRow | undefined> {
  return db
    .selectFrom('tokens')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export function findUserTokens(db: Db, userId: number, ids: readonly number[]): Promise<TokenRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('tokens')
    .selectAll()
    .where('id', 'in', ids)
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .execute();
}

/** A live token by the HMAC of its key (unique index): the only way a key is ever looked up. */
export function findTokenByKeyHmac(db: Db, keyHmac: string): Promise<TokenRow | undefined> {
  return db
    .selectFrom('tokens')
    .selectAll()
    .where('key_hmac', '=', keyHmac)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function countUserTokens(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('tokens')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return row.n;
}

export const TOKEN_SORT_FIELDS = [
  'id',
  'name',
  'status',
  'created_time',
  'accessed_time',
  'expired_time',
  'remain_quota',
  'used_quota',
] as const;
export type TokenSortField = (typeof TOKEN_SORT_FIELDS)[number];

export interface TokenSearch {
  userId: number;
  /** Part of the name. */
  keyword?: string | undefined;
  /** The exact name. */
  name?: string | undefined;
  keyHmac?: string | undefined;
  status?: number | undefined;
  group?: string | undefined;
  ids?: readonly number[] | undefined;
  sort: { field: TokenSortField; order: 'asc' | 'desc' };
  offset: number;
  limit: number;
  now: number;
}

/** A page of one user's live tokens; status filters and sorts by the status the token shows. */
export async function searchUserTokens(db: Db, search: TokenSearch): Promise<{ items: TokenRow[]; total: number }> {
  let query = db.selectFrom('tokens').where('user_id', '=', search.userId).where('deleted_at', 'is', null);
  if (search.keyword) query = query.where('name', 'ilike', containsPattern(search.keyword));
  if (search.name !== undefined) query = query.where('name', '=', search.name);
  if (search.keyHmac !== undefined) query = query.where('key_hmac', '=', search.keyHmac);
  if (search.group !== undefined) query = query.where('group', '=', search.group);
  if (search.ids !== undefined)
    query = search.ids.length ? query.where('id', 'in', search.ids) : query.where(sql<boolean>`false`);
  if (search.status !== undefined) {
    const status = search.status;
    query = query.where((eb) => eb(effectiveStatusSql(eb, search.now), '=', status));
  }
  const { field, order } = search.sort;
  let page = query.selectAll();
  page =
    field === 'status' ? page.orderBy((eb) => effectiveStatusSql(eb, search.now), order) : page.orderBy(field, order);
  if (field !== 'id') page = page.orderBy('id', 'desc');
  const [items, count] = await Promise.all([
    page.offset(search.offset).limit(search.limit).execute(),
    query.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items, total: count.n };
}

export function updateUserToken(
  db: Db,
  userId: number,
  id: number,
  changes: Updateable<TokensTable>,
): Promise<TokenRow | undefined> {
  const { remain_quota: remain, ...rest } = changes;
  // Pods hold parts of a token's quota as leases and give them back later: store the wanted quota
  // minus what is leased right now, so the returned leases are not counted twice.
  const set =
    typeof remain === 'number'
      ? {
          ...rest,
          remain_quota: sql<number>`${remain} - coalesce((select sum(amount) from quota_leases where account_type = 'token' and account_id = ${id}), 0)`,
        }
      : changes;
  return db
    .updateTable('tokens')
    .set(set)
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Soft-deletes the user's live tokens among `ids`; answers how many were deleted. */
export async function deleteUserTokens(db: Db, userId: number, ids: readonly number[], now: number): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db
    .updateTable('tokens')
    .set({ deleted_at: now })
    .where('id', 'in', ids)
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
