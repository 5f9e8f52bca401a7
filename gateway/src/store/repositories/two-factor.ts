import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.ts';

type Db = Kysely<Database>;

export async function findTwoFactor(db: Db, userId: number) {
  return db.selectFrom('two_factor').selectAll().where('user_id', '=', userId).executeTakeFirst();
}

/**
 * A fresh, not yet enabled setup with its backup codes, replacing an earlier pending one (one transaction);
 * false, changing nothing, when an enabled factor (or a setup racing this one) holds the row.
 */
export async function savePendingTwoFactor(
  db: Db,
  userId: number,
  encryptedSecret: string,
  codeHashes: string[],
  now: number,
): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    await tx.deleteFrom('two_factor').where('user_id', '=', userId).where('enabled', '=', false).execute();
    const inserted = await tx
      .insertInto('two_factor')
      .values({ user_id: userId, secret: encryptedSecret, created_at: now })
      .onConflict((oc) => oc.column('user_id').doNothing())
      .returning('user_id')
      .executeTakeFirst();
    if (!inserted) return false;
    await replaceCodes(tx, userId, codeHashes);
    return true;
  });
}

export async function replaceBackupCodes(db: Db, userId: number, codeHashes: string[]): Promise<void> {
  await db.transaction().execute((tx) => replaceCodes(tx, userId, codeHashes));
}

async function replaceCodes(tx: Db, userId: number, codeHashes: string[]) {
  await tx.deleteFrom('two_factor_backup_codes').where('user_id', '=', userId).execute();
  await tx
    .insertInto('two_factor_backup_codes')
    .values(codeHashes.map((code_hash) => ({ user_id: userId, code_hash })))
    .execute();
}

/**
 * Accepts a TOTP time step only if it is after the last one accepted, atomically: of two requests
 * racing with the same code, one wins. Clears the wrong-code count. `enable` also switches the factor on.
 */
export async function acceptStep(db: Db, userId: number, step: number, enable = false): Promise<boolean> {
  const row = await db
    .updateTable('two_factor')
    .set({ last_step: step, failed_attempts: 0, ...(enable ? { enabled: true } : {}) })
    .where('user_id', '=', userId)
    .where('last_step', '<', step)
    .returning('user_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Marks an unused backup code used; false when it is unknown or was used already. */
export async function useBackupCode(db: Db, userId: number, codeHash: string, now: number): Promise<boolean> {
  const used = await db
    .updateTable('two_factor_backup_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .returning('user_id')
    .executeTakeFirst();
  if (used) await db.updateTable('two_factor').set({ failed_attempts: 0 }).where('user_id', '=', userId).execute();
  return used !== undefined;
}

/** Counts a wrong code; the `max`-th in a row locks the factor until `lockUntil` and starts the count again. */
export async function recordWrongCode(db: Db, userId: number, max: number, lockUntil: number): Promise<void> {
  await db
    .updateTable('two_factor')
    .set({
      failed_attempts: sql`case when failed_attempts + 1 >= ${max} then 0 else failed_attempts + 1 end`,
      locked_until: sql`case when failed_attempts + 1 >= ${max} then ${lockUntil} else locked_until end`,
    })
    .where('user_id', '=', userId)
    .execute();
}

export async function unusedBackupCodeCount(db: Db, userId: number): Promise<number> {
  const row = await db
    .selectFrom('two_factor_backup_codes')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return row.n;
}

/** Removes the factor and its codes; false when the user had none enabled. */
export async function deleteTwoFactor(db: Db, userId: number): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const gone = await tx
      .deleteFrom('two_factor')
      .where('user_id', '=', userId)
      .returning('enabled')
      .executeTakeFirst();
    await tx.deleteFrom('two_factor_backup_codes').where('user_id', '=', userId).execute();
    await tx.deleteFrom('two_factor_challenges').where('user_id', '=', userId).execute();
    return gone?.enabled === true;
  });
}

export async function countEnabledTwoFactor(db: Db): Promise<{ users: number; enabled: number }> {
  const users = await db
    .selectFrom('users')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  const enabled = await db
    .selectFrom('two_factor')
    .innerJoin('users', 'users.id', 'two_factor.user_id')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('two_factor.enabled', '=', true)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { users: users.n, enabled: enabled.n };
}

// --- pending sign-ins ---

export async function insertChallenge(db: Db, idHash: string, userId: number, expiresAt: number, now: number) {
  // Expired ones are swept here: a pending sign-in is written only at a password sign-in.
  await db.deleteFrom('two_factor_challenges').where('expires_at', '<=', now).execute();
  await db
    .insertInto('two_factor_challenges')
    .values({ id_hash: idHash, user_id: userId, expires_at: expiresAt })
    .execute();
}

/** Takes one attempt of a live pending sign-in: its user, or undefined when unknown, expired or out of attempts. */
export async function takeChallengeAttempt(db: Db, idHash: string, now: number, maxAttempts: number) {
  return db
    .updateTable('two_factor_challenges')
    .set({ attempts: sql`attempts + 1` })
    .where('id_hash', '=', idHash)
    .where('expires_at', '>', now)
    .where('attempts', '<', maxAttempts)
    .returning(['user_id', 'attempts'])
    .executeTakeFirst();
}

export async function deleteChallenge(db: Db, idHash: string): Promise<void> {
  await db.deleteFrom('two_factor_challenges').where('id_hash', '=', idHash).execute();
}

// --- step-up verification ---

export async function markSessionVerified(db: Db, sessionIdHash: string, until: number): Promise<void> {
  await db.updateTable('sessions').set({ verified_until: until }).where('id_hash', '=', sessionIdHash).execute();
}

export async function sessionVerifiedUntil(db: Db, sessionIdHash: string): Promise<number> {
  const row = await db
    .selectFrom('sessions')
    .select('verified_until')
    .where('id_hash', '=', sessionIdHash)
    .executeTakeFirst();
  return row?.verified_until ?? 0;
}

export async function markTokenVerified(db: Db, userId: number, until: number): Promise<void> {
  await db.updateTable('two_factor').set({ token_verified_until: until }).where('user_id', '=', userId).execute();
}
