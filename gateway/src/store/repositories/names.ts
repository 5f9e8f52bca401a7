import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** Current names of channels, by id: a log or task keeps only the id, and a channel may be renamed. */
export async function channelNames(db: Db, ids: Iterable<number>): Promise<Map<number, string>> {
  const unique = [...new Set(ids)].filter((id) => id > 0);
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('channels').select(['id', 'name']).where('id', 'in', unique).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** Usernames by id, for administrator views of rows that keep only a user id. */
export async function usernames(db: Db, ids: Iterable<number>): Promise<Map<number, string>> {
  const unique = [...new Set(ids)].filter((id) => id > 0);
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'username']).where('id', 'in', unique).execute();
  return new Map(rows.map((r) => [r.id, r.username]));
}
