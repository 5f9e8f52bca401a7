import type { Kysely } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** A new table: older gateways never read it. */
export const compatibility = 'expand';

/**
 * Prefill groups (new-api's /api/prefill_group): named lists the channel editor offers to fill a
 * channel's models or tags from, or an endpoint map. `items` is JSON text (an array of strings, or the
 * endpoint map's text).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('prefill_groups')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('items', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_time', 'bigint', (c) => c.notNull())
    .addColumn('updated_time', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('prefill_groups').execute();
}
