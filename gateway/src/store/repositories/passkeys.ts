import type { Insertable, Kysely } from 'kysely';
import type { Database, PasskeyCredentialsTable } from '../database.ts';

type Db = Kysely<Database>;
export type NewPasskey = Insertable<PasskeyCredentialsTable>;

export function findPasskeyOfUser(db: Db, userId: number) {
  return db.selectFrom('passkey_credentials').selectAll().where('user_id', '=', userId).executeTakeFirst();
}

export function findPasskeyByCredentialId(db: Db, credentialId: string) {
  return db.selectFrom('passkey_credentials').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
}

/**
 * Saves the user's passkey, replacing their earlier one (one per user). False, changing nothing, when the
 * credential id already belongs to another user.
 */
export async function savePasskey(db: Db, passkey: NewPasskey): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const owner = await tx
      .selectFrom('passkey_credentials')
      .select('user_id')
      .where('credential_id', '=', passkey.credential_id)
      .forUpdate()
      .executeTakeFirst();
    if (owner && owner.user_id !== passkey.user_id) return false;
    await tx.deleteFrom('passkey_credentials').where('user_id', '=', passkey.user_id).execute();
    await tx.insertInto('passkey_credentials').values(passkey).execute();
    return true;
  });
}

/**
 * Records a sign-in: the new counter and the time. Only when the stored counter is still the one the
 * check saw, so two sign-ins racing with the same assertion cannot both pass.
 */
export async function recordPasskeyUse(
  db: Db,
  userId: number,
  seenCount: number,
  newCount: number,
  backupState: boolean,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('passkey_credentials')
    .set({ sign_count: newCount, backup_state: backupState, last_used_at: now })
    .where('user_id', '=', userId)
    .where('sign_count', '=', seenCount)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deletePasskeyOfUser(db: Db, userId: number): Promise<boolean> {
  const result = await db.deleteFrom('passkey_credentials').where('user_id', '=', userId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
