import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';

export interface Counted {
  total: number;
  /** True when more than the exact-count limit matched and `total` is the planner's estimate. */
  estimated: boolean;
}

/**
 * Counts the rows a filtered query matches, exactly up to `exactLimit` and estimated beyond it.
 *
 * An exact count(*) reads every matching index entry: over a million log rows that is 100–400 ms, on
 * the embedded database more, and it grows with the table. Counting at most `exactLimit + 1` rows stays
 * a few tens of milliseconds; past that, the answer is the row estimate of the query's plan, which
 * Postgres derives from the table's statistics (most-common values and histograms, refreshed by
 * autovacuum, and on the embedded database by the hourly log maintenance). A list of more than
 * `exactLimit` rows shows "about N", never fewer than `exactLimit + 1`.
 */
export async function countCapped(
  db: Kysely<any>,
  filtered: SelectQueryBuilder<any, any, any>,
  exactLimit: number,
): Promise<Counted> {
  const probe = filtered.clearSelect().select(sql`1`.as('one'));
  const counted = await db
    .selectFrom(probe.limit(exactLimit + 1).as('capped'))
    .select(sql<number>`count(*)::int`.as('n'))
    .executeTakeFirstOrThrow();
  if (counted.n <= exactLimit) return { total: counted.n, estimated: false };
  const estimate = planRows(await probe.explain('json'));
  return { total: Math.max(estimate, exactLimit + 1), estimated: true };
}

/** The top node's row estimate from `EXPLAIN (FORMAT JSON)`; drivers answer the plan as JSON or text. */
function planRows(rows: Array<Record<string, unknown>>): number {
  const raw = rows[0]?.['QUERY PLAN'];
  const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ Plan?: { 'Plan Rows'?: number } }>;
  const estimate = plan?.[0]?.Plan?.['Plan Rows'];
  return typeof estimate === 'number' && Number.isFinite(estimate) ? Math.round(estimate) : 0;
}
