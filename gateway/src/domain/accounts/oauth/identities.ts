import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Database, UserRow } from '../../../store/database.ts';
import { findLiveUserBy } from '../../../store/repositories/users.ts';
import { USERNAME_MAX_LENGTH } from '../rules.ts';
import type { IdentityHome } from './types.ts';

type Db = Kysely<Database>;

/** The live user holding this provider account, if any. */
export async function findLiveHolder(db: Db, home: IdentityHome, value: string): Promise<UserRow | undefined> {
  if (home.kind === 'column') return findLiveUserBy(db, home.column, value);
  return db
    .selectFrom('users')
    .innerJoin('user_oauth_bindings as b', 'b.user_id', 'users.id')
    .selectAll('users')
    .where('b.provider_id', '=', home.providerId)
    .where('b.provider_user_id', '=', value)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
}

/** Whether a deregistered account holds this provider id (then it may not sign up again for new grants). */
export async function heldByDeregistered(db: Db, home: IdentityHome, value: string): Promise<boolean> {
  const row =
    home.kind === 'column'
      ? await db
          .selectFrom('users')
          .select('id')
          .where(home.column, '=', value)
          .where('deleted_at', 'is not', null)
          .executeTakeFirst()
      : await db
          .selectFrom('user_oauth_bindings as b')
          .innerJoin('users', 'users.id', 'b.user_id')
          .select('users.id')
          .where('b.provider_id', '=', home.providerId)
          .where('b.provider_user_id', '=', value)
          .where('users.deleted_at', 'is not', null)
          .executeTakeFirst();
  return row !== undefined;
}

/** Records that `userId` holds this provider account (replacing another account of the same provider). */
export async function attachIdentity(db: Db, userId: number, home: IdentityHome, value: string): Promise<void> {
  if (home.kind === 'column') {
    await db
      .updateTable('users')
      .set({ [home.column]: value })
      .where('id', '=', userId)
      .execute();
    return;
  }
  await db
    .insertInto('user_oauth_bindings')
    .values({ user_id: userId, provider_id: home.providerId, provider_user_id: value, created_at: now() })
    .onConflict((oc) => oc.columns(['user_id', 'provider_id']).doUpdateSet({ provider_user_id: value }))
    .execute();
}

/** A name for the provider account, unique across providers: the per-identity lock's key. */
export const identityKey = (home: IdentityHome, value: string) =>
  home.kind === 'column' ? `${home.column}:${value}` : `custom:${home.providerId}:${value}`;

const now = () => Math.floor(Date.now() / 1000);
const length = (text: string) => [...text].length;
/** No spaces or control characters, and no `@`: a username must never look like an email login. */
const USABLE = /^[^\s\p{Cc}@]+$/u;

/**
 * A free username for a new account: the provider's login when it fits (≤ 12 characters, not taken),
 * else `{prefix}{next id}` as new-api names them (github_17), else the prefix and random characters.
 */
export async function pickUsername(
  db: Kysely<Database>,
  preferred: string | undefined,
  prefix: string,
): Promise<string> {
  const next = await db
    .selectFrom('users')
    .select(sql<number>`coalesce(max(id), 0)::int + 1`.as('n'))
    .executeTakeFirstOrThrow();
  const candidates = [preferred?.trim(), `${prefix}${next.n}`];
  for (const candidate of candidates) {
    if (!candidate || length(candidate) > USERNAME_MAX_LENGTH || !USABLE.test(candidate)) continue;
    if (!(await findLiveUserBy(db, 'username', candidate))) return candidate;
  }
  return randomUsername(prefix);
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** The prefix filled up to the length limit with random characters (at least four). */
export function randomUsername(prefix: string): string {
  const stem = prefix.slice(0, USERNAME_MAX_LENGTH - 4);
  const bytes = randomBytes(USERNAME_MAX_LENGTH - stem.length);
  return stem + Array.from(bytes, (b) => ALPHABET[b % ALPHABET.length]).join('');
}
