import type { Kysely } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** An index no gateway ever read: older gateways keep working without it. */
export const compatibility = 'expand';

/**
 * Drops logs (token_id, created_at, id). No log query filters by token id (the log screens filter by token
 * name), yet every usage log written paid for it: one of ten indexes on the table the relay writes a row
 * to per request, about a tenth of a row's cost on the embedded database.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('logs_token_id_created').ifExists().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('logs_token_id_created')
    .ifNotExists()
    .on('logs')
    .columns(['token_id', 'created_at', 'id'])
    .execute();
}
