import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../database.ts';
import { LOG_TYPE } from './logs.ts';

type Db = Kysely<Database> | Transaction<Database>;

export interface UserHourSum {
  username: string;
  created_at: number;
  count: number;
  quota: number;
  token_used: number;
}

/** Every user's hourly buckets in a time range, summed per (username, hour), oldest first. */
export async function quotaDataByUser(db: Db, q: { start: number; end: number }): Promise<UserHourSum[]> {
  const rows = await db
    .selectFrom('quota_data')
    .select([
      'username',
      'created_at',
      sql<number>`sum(count)`.as('count'),
      sql<number>`sum(quota)`.as('quota'),
      sql<number>`sum(token_used)`.as('token_used'),
    ])
    .where('created_at', '>=', q.start)
    .where('created_at', '<=', q.end)
    .groupBy(['username', 'created_at'])
    .orderBy('created_at')
    .orderBy('username')
    .execute();
  return rows.map((r) => ({
    username: r.username,
    created_at: Number(r.created_at),
    count: Number(r.count),
    quota: Number(r.quota),
    token_used: Number(r.token_used),
  }));
}

interface FlowSums {
  count: number;
  quota: number;
  token_used: number;
}

export interface AdminFlowSum extends FlowSums {
  user_id: number;
  username: string;
  use_group: string;
  model_name: string;
  channel_id: number;
}

export interface SelfFlowSum extends FlowSums {
  token_id: number;
  use_group: string;
  model_name: string;
}

/** Consume logs in [start, end] — the rows every flow sum reads. */
const consumeLogs = (db: Db, q: { start: number; end: number }) =>
  db
    .selectFrom('logs')
    .where('type', '=', LOG_TYPE.consume)
    .where('created_at', '>=', q.start)
    .where('created_at', '<=', q.end);

const sums = [
  sql<number>`count(*)`.as('count'),
  sql<number>`coalesce(sum(quota), 0)`.as('quota'),
  sql<number>`coalesce(sum(prompt_tokens + completion_tokens), 0)`.as('token_used'),
] as const;

const numbers = <T extends FlowSums>(r: T): T => ({
  ...r,
  count: Number(r.count),
  quota: Number(r.quota),
  token_used: Number(r.token_used),
});

/** Consumption per (user, group, model, channel), largest first; optionally one user's. */
export async function adminFlow(
  db: Db,
  q: { start: number; end: number; username?: string | undefined },
): Promise<AdminFlowSum[]> {
  const rows = await consumeLogs(db, q)
    .$if(Boolean(q.username), (qb) => qb.where('username', '=', q.username!))
    .select(['user_id', 'username', 'group as use_group', 'model_name', 'channel_id', ...sums])
    .groupBy(['user_id', 'username', 'group', 'model_name', 'channel_id'])
    .orderBy('quota', 'desc')
    .orderBy('user_id')
    .orderBy('model_name')
    .execute();
  return rows.map(numbers);
}

/** One user's consumption per (token, group, model), largest first. */
export async function selfFlow(db: Db, q: { start: number; end: number; userId: number }): Promise<SelfFlowSum[]> {
  const rows = await consumeLogs(db, q)
    .where('user_id', '=', q.userId)
    .select(['token_id', 'group as use_group', 'model_name', ...sums])
    .groupBy(['token_id', 'group', 'model_name'])
    .orderBy('quota', 'desc')
    .orderBy('token_id')
    .orderBy('model_name')
    .execute();
  return rows.map(numbers);
}

/** Current names of tokens, by id (a deleted token has none). */
export async function tokenNames(db: Db, ids: Iterable<number>): Promise<Map<number, string>> {
  const unique = [...new Set(ids)].filter((id) => id > 0);
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('tokens').select(['id', 'name']).where('id', 'in', unique).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}
