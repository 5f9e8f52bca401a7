import type { Kysely } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** New columns with defaults: older gateways neither read nor need them. */
export const compatibility = 'expand';

/**
 * What a drawing task needs for its refund and its callback: the token and group it was billed in,
 * the model name it was priced as, and the client's notifyHook (kept only when MjNotifyEnabled).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('midjourneys')
    .addColumn('token_id', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('group', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('model_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('notify_hook', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('midjourneys')
    .dropColumn('token_id')
    .dropColumn('group')
    .dropColumn('model_name')
    .dropColumn('notify_hook')
    .execute();
}
