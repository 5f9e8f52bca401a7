import type { Kysely } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** A new table and columns with defaults: older gateways neither read nor need them. */
export const compatibility = 'expand';

/**
 * Periodic quotas (issue 17): each token and user may carry daily, weekly and monthly limits (JSON in
 * `period_limits`, '' for none), and `period_usage` counts what each holder used in each calendar
 * period. A period is a row keyed by its start in the configured zone (`d:2026-11-26`, `w:2026-W48`,
 * `m:2026-11`): a new period is a new row starting at zero, so nothing is ever reset.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('tokens')
    .addColumn('period_limits', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .alterTable('users')
    .addColumn('period_limits', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .createTable('period_usage')
    .addColumn('holder_kind', 'text', (c) => c.notNull())
    .addColumn('holder_id', 'integer', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('quota', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('requests', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('period_usage_pkey', ['holder_kind', 'holder_id', 'period'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('period_usage').ifExists().execute();
  await db.schema.alterTable('users').dropColumn('period_limits').execute();
  await db.schema.alterTable('tokens').dropColumn('period_limits').execute();
}
