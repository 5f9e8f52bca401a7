import type { Kysely, Selectable } from 'kysely';
import type { Database, ModelPricesTable } from '../database.ts';

export type ModelPriceRow = Selectable<ModelPricesTable>;

export function listModelPrices(db: Kysely<Database>): Promise<ModelPriceRow[]> {
  return db.selectFrom('model_prices').selectAll().orderBy('model').execute();
}

/** Models served by at least one enabled channel, with the groups that reach them. */
export async function enabledModelGroups(db: Kysely<Database>): Promise<Map<string, string[]>> {
  const rows = await db
    .selectFrom('abilities')
    .select(['model', 'group'])
    .distinct()
    .where('enabled', '=', true)
    .orderBy('model')
    .orderBy('group')
    .execute();
  const byModel = new Map<string, string[]>();
  for (const { model, group } of rows) byModel.set(model, [...(byModel.get(model) ?? []), group]);
  return byModel;
}
