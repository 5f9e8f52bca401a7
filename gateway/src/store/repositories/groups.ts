import type { Kysely } from 'kysely';
import type { Database } from '../database.ts';

/** Every groups row (declared by Group custom resources), by name. */
export function listGroups(db: Kysely<Database>) {
  return db
    .selectFrom('groups')
    .select(['name', 'ratio', 'description', 'selectable', 'user_group_ratios', 'rate_limits'])
    .orderBy('name')
    .execute();
}
