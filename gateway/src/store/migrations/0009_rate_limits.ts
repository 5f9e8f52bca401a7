import type { Kysely } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** New columns with defaults: older gateways neither read nor need them. */
export const compatibility = 'expand';

/**
 * Requests- and tokens-per-minute limits (JSON: model or "*" -> { rpm, tpm }) of a token, of a user,
 * and of a group declared by a Group custom resource. '{}' is no limit.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['tokens', 'users', 'groups']) {
    await db.schema
      .alterTable(table)
      .addColumn('rate_limits', 'text', (c) => c.notNull().defaultTo('{}'))
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['tokens', 'users', 'groups']) {
    await db.schema.alterTable(table).dropColumn('rate_limits').execute();
  }
}
