import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../../store/database.ts';
import { findLiveUserBy } from '../../../store/repositories/users.ts';
import { USERNAME_MAX_LENGTH } from '../rules.ts';
import type { IdentityColumn } from './types.ts';

/** Whether a deregistered account holds this provider id (then it may not sign up again for new grants). */
export async function heldByDeregistered(
  db: Kysely<Database>,
  column: IdentityColumn,
  value: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where(column, '=', value)
    .where('deleted_at', 'is not', null)
    .executeTakeFirst();
  return row !== undefined;
}

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
