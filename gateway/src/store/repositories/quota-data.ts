import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Database, QuotaDataTable } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type QuotaDataRow = Selectable<QuotaDataTable>;

/** The hour bucket (Unix seconds) a time falls in. */
export const hourOf = (seconds: number) => seconds - (seconds % 3600);

/** Adds usage to the user's (model, hour) bucket, creating it on first use; safe under concurrent writers. */
export async function addQuotaData(
  db: Db,
  usage: {
    userId: number;
    username: string;
    modelName: string;
    at: number;
    quota: number;
    tokens: number;
    count?: number;
  },
): Promise<void> {
  const count = usage.count ?? 1;
  await db
    .insertInto('quota_data')
    .values({
      user_id: usage.userId,
      username: usage.username,
      model_name: usage.modelName,
      created_at: hourOf(usage.at),
      quota: usage.quota,
      token_used: usage.tokens,
      count,
    })
    .onConflict((oc) =>
      oc.columns(['user_id', 'model_name', 'created_at']).doUpdateSet((eb) => ({
        quota: eb('quota_data.quota', '+', usage.quota),
        token_used: eb('quota_data.token_used', '+', usage.tokens),
        count: eb('quota_data.count', '+', count),
        username: usage.username,
      })),
    )
    .execute();
}

export interface QuotaDataQuery {
  userId?: number | undefined;
  username?: string | undefined;
  /** created_at >= start (seconds) */
  start: number;
  /** created_at <= end (seconds) */
  end: number;
}

/** The buckets of one user (by id or username) in a time range, oldest first. */
export function userQuotaData(db: Db, q: QuotaDataQuery): Promise<QuotaDataRow[]> {
  return db
    .selectFrom('quota_data')
    .selectAll()
    .$if(q.userId !== undefined, (qb) => qb.where('user_id', '=', q.userId!))
    .$if(Boolean(q.username), (qb) => qb.where('username', '=', q.username!))
    .where('created_at', '>=', q.start)
    .where('created_at', '<=', q.end)
    .orderBy('created_at')
    .orderBy('model_name')
    .orderBy('id')
    .execute();
}

export interface QuotaDataSum {
  model_name: string;
  created_at: number;
  count: number;
  quota: number;
  token_used: number;
}

/** Every user's buckets in a time range, summed per (model, hour), oldest first. */
export async function allQuotaData(db: Db, q: { start: number; end: number }): Promise<QuotaDataSum[]> {
  const rows = await db
    .selectFrom('quota_data')
    .select([
      'model_name',
      'created_at',
      sql<number>`sum(count)`.as('count'),
      sql<number>`sum(quota)`.as('quota'),
      sql<number>`sum(token_used)`.as('token_used'),
    ])
    .where('created_at', '>=', q.start)
    .where('created_at', '<=', q.end)
    .groupBy(['model_name', 'created_at'])
    .orderBy('created_at')
    .orderBy('model_name')
    .execute();
  return rows.map((r) => ({ ...r, count: Number(r.count), quota: Number(r.quota), token_used: Number(r.token_used) }));
}
