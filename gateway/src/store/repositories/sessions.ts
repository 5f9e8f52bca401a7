import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, SessionsTable, UserRow } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;

export type SessionRow = Selectable<SessionsTable>;

export async function insertSession(db: Db, session: SessionRow): Promise<void> {
  await db.insertInto('sessions').values(session).execute();
}

/** The session and its live user, if the session is neither revoked nor expired. */
export async function findActiveSession(
  db: Db,
  idHash: string,
  now: number,
): Promise<{ session: SessionRow; user: UserRow } | undefined> {
  const session = await db
    .selectFrom('sessions')
    .selectAll()
    .where('id_hash', '=', idHash)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (!session) return undefined;
  const user = await db
    .selectFrom('users')
    .selectAll()
    .where('id', '=', session.user_id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return user ? { session, user } : undefined;
}

/** Marks the session as used now, from `ip` (where the user was last seen). */
export async function touchSession(db: Db, idHash: string, now: number, ip?: string): Promise<void> {
  await db
    .updateTable('sessions')
    .set(ip ? { last_seen_at: now, ip } : { last_seen_at: now })
    .where('id_hash', '=', idHash)
    .execute();
}

/** The user's sessions that still sign them in, most recently used first. */
export async function listActiveSessions(db: Db, userId: number, now: number): Promise<SessionRow[]> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('last_seen_at', 'desc')
    .orderBy('created_at', 'desc')
    .execute();
}

/** Revokes one live session of the user; false when the user has no such live session. */
export async function revokeUserSession(db: Db, userId: number, idHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({ revoked_at: now })
    .where('id_hash', '=', idHash)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function revokeSession(db: Db, idHash: string, now: number): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ revoked_at: now })
    .where('id_hash', '=', idHash)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revokes every session of the user, except `keep` (the one that asked, on a password change). */
export async function revokeUserSessions(db: Db, userId: number, now: number, keep?: string): Promise<void> {
  let query = db
    .updateTable('sessions')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null);
  if (keep) query = query.where('id_hash', '!=', keep);
  await query.execute();
}

export async function deleteExpiredSessions(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
