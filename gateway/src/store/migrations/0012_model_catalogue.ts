import { type Kysely, sql } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** New tables only: older gateways never read them. */
export const compatibility = 'expand';

/**
 * The model catalogue (issue 19): vendors, and the metadata of models (new-api's `models` and `vendors`
 * tables). A model's `name_rule` says how `model_name` matches served names: 0 exact, 1 prefix, 2 contains,
 * 3 suffix. `sync_official` 0 keeps a model out of upstream catalogue syncs.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('vendors')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('name', 'varchar(128)', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('icon', 'varchar(128)', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_time', 'bigint', (c) => c.notNull())
    .addColumn('updated_time', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('models')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('model_name', 'varchar(128)', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('icon', 'varchar(128)', (c) => c.notNull().defaultTo(''))
    .addColumn('tags', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    // A vendor's deletion leaves its models without one (new-api shows them as "unknown vendor").
    .addColumn('vendor_id', 'integer', (c) => c.references('vendors.id').onDelete('set null'))
    .addColumn('endpoints', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('sync_official', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('name_rule', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_time', 'bigint', (c) => c.notNull())
    .addColumn('updated_time', 'bigint', (c) => c.notNull())
    .execute();
  await sql`create index models_vendor_id_index on models (vendor_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('models').execute();
  await db.schema.dropTable('vendors').execute();
}
