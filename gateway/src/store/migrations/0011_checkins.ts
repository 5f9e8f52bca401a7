import type { Kysely } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** A new table: older gateways never read it. */
export const compatibility = 'expand';

/**
 * Daily check-ins: one row per user and calendar day. The primary key (user_id, checkin_date) is
 * what makes a second check-in on the same day impossible, even from two pods at once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('checkins')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('checkin_date', 'varchar(10)', (c) => c.notNull())
    .addColumn('quota_awarded', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('checkins_pkey', ['user_id', 'checkin_date'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('checkins').execute();
}
