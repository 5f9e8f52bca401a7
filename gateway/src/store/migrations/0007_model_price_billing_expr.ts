import type { Kysely } from 'kysely';

// Frozen in time: this file must not import the application's current types.

/** A new nullable column: older gateways neither read nor need it. */
export const compatibility = 'expand';

/** The billing expression a ModelPrice resource prices its model by (`tiered_expr` mode), or null. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('model_prices').addColumn('billing_expr', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('model_prices').dropColumn('billing_expr').execute();
}
