import type { Kysely } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** A new table: older gateways never read it. */
export const compatibility = 'expand';

/** Secrets the install generates for itself (when SECRET_KEY is not configured), shared by every pod. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('instance_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('instance_secrets').ifExists().execute();
}
