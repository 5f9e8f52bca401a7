import type { Kysely } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** A new nullable column: older gateways neither read nor need it. */
export const compatibility = 'expand';

/**
 * Which of its channel's keys a drawing task was submitted with: its polls and follow-ups must reach that
 * key's upstream account. Null for tasks from before keys were chosen (they used the first key).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('midjourneys').addColumn('key_index', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('midjourneys').dropColumn('key_index').execute();
}
