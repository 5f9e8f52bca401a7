import type { Kysely } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** New tables and a nullable column: older gateways neither read nor need them. */
export const compatibility = 'expand';

/**
 * Two-factor sign-in (issue 19): a user's TOTP secret (encrypted by the keyring) with the last time
 * step used (no replay) and the wrong-code lockout; one-time backup codes stored as digests; pending
 * sign-ins between password and code; and when a session (or, for access-token callers, the user)
 * last passed a step-up verification.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('two_factor')
    .addColumn('user_id', 'integer', (c) => c.primaryKey())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('last_step', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('locked_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('token_verified_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('two_factor_backup_codes')
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addPrimaryKeyConstraint('two_factor_backup_codes_pkey', ['user_id', 'code_hash'])
    .execute();
  await db.schema
    .createTable('two_factor_challenges')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('sessions')
    .addColumn('verified_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('verified_until').execute();
  await db.schema.dropTable('two_factor_challenges').ifExists().execute();
  await db.schema.dropTable('two_factor_backup_codes').ifExists().execute();
  await db.schema.dropTable('two_factor').ifExists().execute();
}
