import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database, NewUser, UserRow, UserUpdate } from '../database.ts';
import { containsPattern } from './like.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** The live (not deregistered) user with the highest role at or above `role`, oldest first. */
export function findUserWithRoleAtLeast(db: Db, role: number): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('role', '>=', role)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .executeTakeFirst();
}

export function insertUser(db: Db, user: NewUser): Promise<UserRow> {
  return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
}

/** Any user by id, deregistered ones included (they are listed as such). */
export function findUserById(db: Db, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findLiveUserById(db: Db, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

/** A live user by username, or by email when the text contains an @. */
export function findLiveUserByLogin(db: Db, login: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('deleted_at', 'is', null)
    .where((eb) =>
      login.includes('@') ? eb.or([eb('username', '=', login), eb('email', '=', login)]) : eb('username', '=', login),
    )
    .orderBy('id')
    .executeTakeFirst();
}

export function findLiveUserBy(
  db: Db,
  column:
    | 'username'
    | 'email'
    | 'aff_code'
    | 'access_token_hmac'
    | 'github_id'
    | 'oidc_id'
    | 'wechat_id'
    | 'telegram_id'
    | 'linux_do_id'
    | 'discord_id',
  value: string,
): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(column, '=', value)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function updateUser(db: Db, id: number, changes: UserUpdate): Promise<UserRow | undefined> {
  return db.updateTable('users').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Adds (or with a negative amount, takes) quota atomically. */
export async function addQuota(db: Db, id: number, amount: number): Promise<void> {
  await db
    .updateTable('users')
    .set((eb) => ({ quota: eb('quota', '+', amount) }))
    .where('id', '=', id)
    .execute();
}

export interface UserSearch {
  keyword?: string | undefined;
  group?: string | undefined;
  ids?: number[] | undefined;
  role?: number | undefined;
  status?: number | undefined;
  sort?: { field: UserSortField; order: 'asc' | 'desc' } | undefined;
  offset: number;
  limit: number;
}

export const USER_SORT_FIELDS = [
  'id',
  'username',
  'display_name',
  'role',
  'status',
  'quota',
  'used_quota',
  'request_count',
  'group',
  'created_at',
] as const;
export type UserSortField = (typeof USER_SORT_FIELDS)[number];

/** A page of users, newest first, deregistered ones included; keyword matches id, names and email. */
export async function searchUsers(db: Db, search: UserSearch): Promise<{ items: UserRow[]; total: number }> {
  let query = db.selectFrom('users');
  const keyword = search.keyword?.trim();
  if (keyword) {
    const pattern = containsPattern(keyword);
    query = query.where((eb) =>
      eb.or([
        ...(/^\d{1,9}$/.test(keyword) ? [eb('id', '=', Number(keyword))] : []),
        eb('username', 'ilike', pattern),
        eb('display_name', 'ilike', pattern),
        eb('email', 'ilike', pattern),
      ]),
    );
  }
  if (search.group) query = query.where('group', '=', search.group);
  if (search.ids)
    query = search.ids.length > 0 ? query.where('id', 'in', search.ids) : query.where(sql<boolean>`false`);
  if (search.role !== undefined) query = query.where('role', '=', search.role);
  if (search.status !== undefined) query = query.where('status', '=', search.status);
  const sort = search.sort ?? { field: 'id', order: 'desc' };
  const [items, count] = await Promise.all([
    query
      .selectAll()
      .orderBy(sort.field, sort.order)
      .orderBy('id', sort.order)
      .offset(search.offset)
      .limit(search.limit)
      .execute(),
    query.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { items, total: count.n };
}

/** What the user may spend: the stored balance plus what pods hold of it as leases (see setSpendableQuota). */
export async function spendableQuota(db: Db, id: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('users')
    .select(
      sql<number>`quota + coalesce((select sum(amount) from quota_leases where account_type = 'user' and account_id = ${id}), 0)`.as(
        'spendable',
      ),
    )
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.spendable);
}

/**
 * Sets what the user may spend to `desired`. Pods hold parts of the balance as leases (quota_leases)
 * that they give back later, so the stored balance is `desired` minus what is leased right now.
 */
export async function setSpendableQuota(db: Db, id: number, desired: number): Promise<void> {
  await db
    .updateTable('users')
    .set({
      quota: sql<number>`${desired} - coalesce((select sum(amount) from quota_leases where account_type = 'user' and account_id = ${id}), 0)`,
    })
    .where('id', '=', id)
    .execute();
}
