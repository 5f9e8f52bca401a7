import type { Kysely } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** A new table: older gateways neither read nor need it. */
export const compatibility = 'expand';

/**
 * Passkeys (issue 19): one WebAuthn credential per user, as new-api keeps it. The credential id is unique
 * across users (an authenticator answers for one account); the signature counter is kept so that a
 * counter going backwards (a cloned authenticator) is refused.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('passkey_credentials')
    .addColumn('user_id', 'integer', (c) => c.primaryKey())
    .addColumn('credential_id', 'text', (c) => c.notNull().unique())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('sign_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('transports', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('attachment', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('backup_eligible', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('backup_state', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('passkey_credentials').ifExists().execute();
}
