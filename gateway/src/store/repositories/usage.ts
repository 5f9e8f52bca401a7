import { type Insertable, type Kysely, sql, type Transaction } from 'kysely';
import type { Database, LogsTable } from '../database.ts';
import { booleanArrayLiteral, integerArrayLiteral, textArrayLiteral } from './array-literal.ts';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Batched writes of usage (DESIGN.md §3 step 7): many log rows per INSERT, one UPDATE per table for the
 * counters. Callers pass counter rows distinct and sorted by id, so that two pods updating the same rows
 * tend to lock them in the same order; a deadlock that still happens aborts one transaction, which its
 * caller retries whole.
 */

/** Rows per statement: 1,000 log rows are 20,000 bind parameters, well under Postgres' 65,535. */
const CHUNK = 1000;

function chunks<T>(rows: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

const integers = (type: 'int4[]' | 'int8[]', fallback?: number) =>
  ({ type, fallback, literal: integerArrayLiteral }) as const;
const texts = { type: 'text[]', fallback: '', literal: textArrayLiteral } as const;
const booleans = { type: 'bool[]', fallback: false, literal: booleanArrayLiteral } as const;

/**
 * The columns a usage log row is written with: their SQL array type, the value a row without it gets (the
 * column's default in the schema, so that leaving a column out means what it means in an INSERT) and how a
 * column of values becomes an array literal.
 */
const LOG_COLUMNS = {
  user_id: integers('int4[]'),
  created_at: integers('int8[]'),
  type: integers('int4[]'),
  content: texts,
  username: texts,
  token_name: texts,
  model_name: texts,
  quota: integers('int8[]', 0),
  prompt_tokens: integers('int4[]', 0),
  completion_tokens: integers('int4[]', 0),
  use_time: integers('int4[]', 0),
  is_stream: booleans,
  channel_id: integers('int4[]', 0),
  channel_name: texts,
  token_id: integers('int4[]', 0),
  group: texts,
  ip: texts,
  request_id: texts,
  other: texts,
} as const satisfies {
  [K in keyof Required<Omit<Insertable<LogsTable>, 'id'>>]: {
    type: string;
    fallback: Insertable<LogsTable>[K] | undefined;
    literal: (values: never[]) => string;
  };
};

const LOG_COLUMN_NAMES = Object.keys(LOG_COLUMNS) as Array<keyof typeof LOG_COLUMNS>;

/**
 * Log rows per INSERT. A row costs the embedded database about 35 µs (nine indexes), so 100 rows hold its
 * single connection for a few milliseconds at a time (README, "Memory of the embedded database"); on
 * Postgres it is a round trip per 100 rows.
 */
const LOG_ROWS_PER_STATEMENT = 100;

/**
 * Inserts log rows, 100 per statement, as one array per column (`INSERT … SELECT FROM unnest(…)`): 19
 * parameters whatever the rows, where a multi-row VALUES list has 19 per row for Kysely to compile, the
 * driver to serialise and the database to parse and plan (measured: about 40% less time per row on PGlite).
 * Each array goes as its literal, built here (array-literal.ts).
 */
export async function insertLogRows(db: Db, rows: readonly Insertable<LogsTable>[]): Promise<void> {
  for (const part of chunks(rows, LOG_ROWS_PER_STATEMENT)) {
    const arrays = LOG_COLUMN_NAMES.map((name) => {
      const { type, fallback, literal } = LOG_COLUMNS[name];
      const values = part.map((row) => row[name] ?? fallback);
      if (values.includes(undefined)) throw new TypeError(`usage log row without ${name}`);
      return sql`${(literal as (values: unknown[]) => string)(values)}::${sql.raw(type)}`;
    });
    await sql`insert into logs (${sql.join(LOG_COLUMN_NAMES.map((name) => sql.ref(name)))})
      select * from unnest(${sql.join(arrays)})`.execute(db);
  }
}

/** One (user, model, hour) bucket of the usage dashboard, already summed in memory. */
export interface QuotaBucket {
  userId: number;
  username: string;
  modelName: string;
  /** Start of the hour, Unix seconds. */
  hour: number;
  quota: number;
  tokens: number;
  count: number;
}

/**
 * Adds buckets to quota_data, creating missing ones. Buckets must be distinct by (user, model, hour):
 * one INSERT … ON CONFLICT cannot touch the same row twice.
 */
export async function addQuotaBuckets(db: Db, buckets: readonly QuotaBucket[]): Promise<void> {
  for (const part of chunks(buckets)) {
    await db
      .insertInto('quota_data')
      .values(
        part.map((b) => ({
          user_id: b.userId,
          username: b.username,
          model_name: b.modelName,
          created_at: b.hour,
          quota: b.quota,
          token_used: b.tokens,
          count: b.count,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['user_id', 'model_name', 'created_at']).doUpdateSet((eb) => ({
          quota: eb('quota_data.quota', '+', eb.ref('excluded.quota')),
          token_used: eb('quota_data.token_used', '+', eb.ref('excluded.token_used')),
          count: eb('quota_data.count', '+', eb.ref('excluded.count')),
          username: eb.ref('excluded.username'),
        })),
      )
      .execute();
  }
}

export interface UserUsage {
  id: number;
  quota: number;
  requests: number;
}

/** Adds used quota and request counts to users; `quota` (the balance) belongs to the ledger and is not touched. */
export async function addUserUsage(db: Db, rows: readonly UserUsage[]): Promise<void> {
  for (const part of chunks(rows)) {
    const values = sql.join(part.map((r) => sql`(${r.id}::int, ${r.quota}::bigint, ${r.requests}::int)`));
    await sql`update users as u
      set used_quota = u.used_quota + v.quota, request_count = u.request_count + v.requests
      from (values ${values}) as v(id, quota, requests)
      where u.id = v.id`.execute(db);
  }
}

export interface TokenUsage {
  id: number;
  quota: number;
  /** Latest use, Unix seconds. */
  accessedAt: number;
}

/** Adds used quota to tokens and moves accessed_time forward; remain_quota belongs to the ledger. */
export async function addTokenUsage(db: Db, rows: readonly TokenUsage[]): Promise<void> {
  for (const part of chunks(rows)) {
    const values = sql.join(part.map((r) => sql`(${r.id}::int, ${r.quota}::bigint, ${r.accessedAt}::bigint)`));
    await sql`update tokens as t
      set used_quota = t.used_quota + v.quota, accessed_time = greatest(t.accessed_time, v.accessed_at)
      from (values ${values}) as v(id, quota, accessed_at)
      where t.id = v.id`.execute(db);
  }
}

export interface ChannelUsage {
  id: number;
  quota: number;
}

export async function addChannelUsage(db: Db, rows: readonly ChannelUsage[]): Promise<void> {
  for (const part of chunks(rows)) {
    const values = sql.join(part.map((r) => sql`(${r.id}::int, ${r.quota}::bigint)`));
    await sql`update channels as c
      set used_quota = c.used_quota + v.quota
      from (values ${values}) as v(id, quota)
      where c.id = v.id`.execute(db);
  }
}

/** Requests of one client type in one group on one channel, summed in memory (upstream detection). */
export interface ChannelObservation {
  channelId: number;
  group: string;
  clientType: string;
  count: number;
  /** Unix seconds. */
  firstSeen: number;
  lastSeen: number;
}

/**
 * Adds observations to channel_observations, creating missing rows: counts add up, first_seen takes
 * the earliest and last_seen the latest. Rows must be distinct by (channel, group, client type).
 *
 * Only channels that still exist are written, and they are held (KEY SHARE) until the transaction ends:
 * a channel deleted meanwhile either is gone before this batch reads it, and its observations are
 * dropped, or its deletion waits for this batch and then removes what the batch wrote.
 */
export async function addChannelObservations(db: Db, rows: readonly ChannelObservation[]): Promise<void> {
  const ids = [...new Set(rows.map((r) => r.channelId))].sort((a, b) => a - b);
  const live = new Set<number>();
  for (const part of chunks(ids)) {
    const found = await db
      .selectFrom('channels')
      .select('id')
      .where('id', 'in', part)
      .orderBy('id')
      .forKeyShare()
      .execute();
    for (const { id } of found) live.add(id);
  }
  const kept = rows.filter((r) => live.has(r.channelId));
  for (const part of chunks(kept)) {
    await db
      .insertInto('channel_observations')
      .values(
        part.map((r) => ({
          channel_id: r.channelId,
          group: r.group,
          client_type: r.clientType,
          count: r.count,
          first_seen: r.firstSeen,
          last_seen: r.lastSeen,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['channel_id', 'group', 'client_type']).doUpdateSet((eb) => ({
          count: eb('channel_observations.count', '+', eb.ref('excluded.count')),
          first_seen: eb.fn('least', [eb.ref('channel_observations.first_seen'), eb.ref('excluded.first_seen')]),
          last_seen: eb.fn('greatest', [eb.ref('channel_observations.last_seen'), eb.ref('excluded.last_seen')]),
        })),
      )
      .execute();
  }
}
