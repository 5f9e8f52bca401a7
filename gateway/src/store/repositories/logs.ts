import { type ExpressionBuilder, type Insertable, type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Database, LogsTable } from '../database.ts';
import { type Counted, countCapped } from './count.ts';
import { containsPattern } from './like.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type LogRow = Selectable<LogsTable>;

export const LOG_TYPE = { unknown: 0, topup: 1, consume: 2, manage: 3, system: 4, error: 5, refund: 6 } as const;

/** Whether a management log (type 3) of this user records `idempotency_key: key` in its `other`. */
export async function hasManageLogWithKey(db: Db, userId: number, key: string): Promise<boolean> {
  const found = await db
    .selectFrom('logs')
    .select('id')
    .where('user_id', '=', userId)
    .where('type', '=', LOG_TYPE.manage)
    .where('other', 'like', containsPattern(JSON.stringify({ idempotency_key: key }).slice(1, -1)))
    .limit(1)
    .executeTakeFirst();
  return found !== undefined;
}

export async function insertLog(db: Db, log: Insertable<LogsTable>): Promise<void> {
  await db.insertInto('logs').values(log).execute();
}

/** Which logs to read; every field is optional and fields combine with AND. Times are Unix seconds. */
export interface LogQuery {
  ids?: number[] | undefined;
  /** 0 or unset: every type. */
  type?: number | undefined;
  userId?: number | undefined;
  username?: string | undefined;
  tokenName?: string | undefined;
  /** Exact, or a LIKE pattern when it contains `%` (`_` and `\` stay literal). */
  modelName?: string | undefined;
  channelId?: number | undefined;
  group?: string | undefined;
  /** created_at >= start */
  start?: number | undefined;
  /** created_at <= end */
  end?: number | undefined;
}

export const LOG_SORT_FIELDS = ['id', 'created_at', 'quota', 'use_time', 'prompt_tokens', 'completion_tokens'] as const;
export type LogSortField = (typeof LOG_SORT_FIELDS)[number];
export interface LogSort {
  field: LogSortField;
  order: 'asc' | 'desc';
}

/** The filters as one condition. Each filter column has an index (column, created_at, id): see migration 0001. */
function logWhere(eb: ExpressionBuilder<Database, 'logs'>, q: LogQuery) {
  const and = [];
  if (q.ids) and.push(q.ids.length > 0 ? eb('id', 'in', q.ids) : sql<boolean>`false`);
  if (q.type) and.push(eb('type', '=', q.type));
  if (q.userId !== undefined) and.push(eb('user_id', '=', q.userId));
  if (q.username) and.push(eb('username', '=', q.username));
  if (q.tokenName) and.push(eb('token_name', '=', q.tokenName));
  if (q.modelName) {
    // new-api matches model_name with LIKE; an exact match keeps the index usable when there is no wildcard.
    and.push(
      q.modelName.includes('%')
        ? eb(
            'model_name',
            'like',
            q.modelName.replace(/[\\_]/g, (c) => `\\${c}`),
          )
        : eb('model_name', '=', q.modelName),
    );
  }
  if (q.channelId) and.push(eb('channel_id', '=', q.channelId));
  if (q.group) and.push(eb('group', '=', q.group));
  if (q.start) and.push(eb('created_at', '>=', q.start));
  if (q.end) and.push(eb('created_at', '<=', q.end));
  return eb.and(and);
}

const filtered = (db: Db, q: LogQuery) => db.selectFrom('logs').where((eb) => logWhere(eb, q));

/**
 * One page of logs. The page's ids are picked first from the narrow index (an index-only scan that
 * skips `offset` entries cheaply), then only those rows are read: a deep page costs index entries, not rows.
 */
export async function listLogs(
  db: Db,
  q: LogQuery,
  page: { sort: LogSort; offset: number; limit: number },
): Promise<LogRow[]> {
  const { field, order } = page.sort;
  let ids = filtered(db, q).select(['id', 'created_at']);
  if (field !== 'id' && field !== 'created_at') ids = ids.select(field).orderBy(field, order);
  if (field !== 'id') ids = ids.orderBy('created_at', order);
  ids = ids.orderBy('id', order).offset(page.offset).limit(page.limit);
  let rows = db.selectFrom(ids.as('p')).innerJoin('logs as l', 'l.id', 'p.id').selectAll('l').$castTo<LogRow>();
  if (field !== 'id' && field !== 'created_at') rows = rows.orderBy(sql.ref(`p.${field}`), order);
  if (field !== 'id') rows = rows.orderBy('p.created_at', order);
  return rows.orderBy('p.id', order).execute();
}

export function countLogs(db: Kysely<Database>, q: LogQuery, exactLimit: number): Promise<Counted> {
  return countCapped(db, filtered(db, q), exactLimit);
}

export function findLog(db: Db, id: number, q: LogQuery = {}): Promise<LogRow | undefined> {
  return filtered(db, q).selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Every matching log, newest first, in batches: each batch continues after the last row of the previous
 * one (keyset), so the cost per batch stays flat however far the export has gone, and nothing is held open
 * between batches.
 */
export async function* logBatches(db: Db, q: LogQuery, batchSize: number): AsyncGenerator<LogRow[]> {
  let after: { created_at: number; id: number } | undefined;
  for (;;) {
    const cursor = after;
    const rows = await filtered(db, q)
      .selectAll()
      .$if(cursor !== undefined, (qb) =>
        qb.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(cursor?.created_at ?? 0, cursor?.id ?? 0))),
      )
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(batchSize)
      .execute();
    if (rows.length > 0) yield rows;
    if (rows.length < batchSize) return;
    const last = rows[rows.length - 1]!;
    after = { created_at: last.created_at, id: last.id };
  }
}

export interface LogSums {
  /** Sum of quota of consume logs. */
  quota: number;
  /** Prompt plus completion tokens of consume logs. */
  token: number;
}

/** Quota and tokens of the consume logs among the matches (the type filter does not apply: only consumption counts). */
export async function sumConsumption(db: Db, q: LogQuery): Promise<LogSums> {
  const row = await filtered(db, { ...q, type: LOG_TYPE.consume })
    .select([
      sql<number>`coalesce(sum(quota), 0)`.as('quota'),
      sql<number>`coalesce(sum(prompt_tokens + completion_tokens), 0)`.as('token'),
    ])
    .executeTakeFirstOrThrow();
  return { quota: Number(row.quota), token: Number(row.token) };
}

/** Requests and tokens of consume logs since `since` (seconds), ignoring the query's own time range. */
export async function recentConsumption(db: Db, q: LogQuery, since: number): Promise<{ rpm: number; tpm: number }> {
  const row = await filtered(db, { ...q, type: LOG_TYPE.consume, start: since, end: undefined })
    .select([
      sql<number>`count(*)::int`.as('rpm'),
      sql<number>`coalesce(sum(prompt_tokens + completion_tokens), 0)`.as('tpm'),
    ])
    .executeTakeFirstOrThrow();
  return { rpm: Number(row.rpm), tpm: Number(row.tpm) };
}

/**
 * Deletes logs created before `before` (seconds), `batchSize` rows per statement so that no statement
 * locks or rewrites much at once; stops early when `signal` aborts. Answers how many were deleted.
 */
export async function deleteLogsBefore(
  db: Db,
  before: number,
  batchSize: number,
  signal?: AbortSignal,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    if (signal?.aborted) return deleted;
    const result = await db
      .deleteFrom('logs')
      .where('id', 'in', (eb) => eb.selectFrom('logs').select('id').where('created_at', '<', before).limit(batchSize))
      .executeTakeFirst();
    const count = Number(result.numDeletedRows);
    deleted += count;
    if (count < batchSize) return deleted;
  }
}
