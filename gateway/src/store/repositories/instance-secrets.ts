import type { Kysely } from 'kysely';
import type { Database } from '../database.ts';

/** The named secret, created with `generate()` if absent; every pod racing here gets the same value. */
export async function getOrCreateInstanceSecret(
  db: Kysely<Database>,
  name: string,
  generate: () => string,
): Promise<string> {
  await db
    .insertInto('instance_secrets')
    .values({ name, value: generate(), created_at: Math.floor(Date.now() / 1000) })
    .onConflict((c) => c.column('name').doNothing())
    .execute();
  const row = await db
    .selectFrom('instance_secrets')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return row.value;
}
