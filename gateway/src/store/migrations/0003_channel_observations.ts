import type { Kysely } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** A new table: older gateways never read it. */
export const compatibility = 'expand';

/**
 * Upstream detection (GET /api/channel/test_upstream/:id): requests per channel, group and client type,
 * with the first and latest time seen. No foreign key: usage batches write it, and a batch must never
 * fail because a channel was deleted in the meantime; deleting a channel deletes its rows.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('channel_observations')
    .addColumn('channel_id', 'integer', (c) => c.notNull())
    .addColumn('group', 'text', (c) => c.notNull())
    .addColumn('client_type', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addColumn('first_seen', 'bigint', (c) => c.notNull())
    .addColumn('last_seen', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('channel_observations_pkey', ['channel_id', 'group', 'client_type'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('channel_observations').ifExists().execute();
}
