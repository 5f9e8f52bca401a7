import { type Insertable, type Kysely, sql, type Updateable } from 'kysely';
import type { Database, MidjourneysTable } from '../database.ts';
import { LOG_TYPE } from './logs.ts';
import type { MidjourneyRow } from './tasks.ts';

export type { MidjourneyRow } from './tasks.ts';

/** Statuses after which a task never changes again. */
export const FINAL_TASK_STATUSES = ['SUCCESS', 'FAILURE'] as const;

export async function insertMidjourney(db: Kysely<Database>, row: Insertable<MidjourneysTable>): Promise<number> {
  const inserted = await db.insertInto('midjourneys').values(row).returning('id').executeTakeFirstOrThrow();
  return inserted.id;
}

/** The user's task with this upstream id (fetch endpoints and follow-up actions never see another user's). */
export async function findUserMidjourney(
  db: Kysely<Database>,
  userId: number,
  mjId: string,
): Promise<MidjourneyRow | undefined> {
  return db
    .selectFrom('midjourneys')
    .selectAll()
    .where('user_id', '=', userId)
    .where('mj_id', '=', mjId)
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

export async function findUserMidjourneys(db: Kysely<Database>, userId: number, mjIds: string[]) {
  if (mjIds.length === 0) return [];
  return db
    .selectFrom('midjourneys')
    .selectAll()
    .where('user_id', '=', userId)
    .where('mj_id', 'in', mjIds)
    .orderBy('id', 'desc')
    .execute();
}

/** Any task with this upstream id: the image proxy is public, as new-api's is. */
export async function findMidjourneyByMjId(db: Kysely<Database>, mjId: string): Promise<MidjourneyRow | undefined> {
  return db.selectFrom('midjourneys').selectAll().where('mj_id', '=', mjId).orderBy('id', 'desc').executeTakeFirst();
}

/** Tasks still running upstream, oldest first. */
export async function unfinishedMidjourneys(db: Kysely<Database>, limit: number): Promise<MidjourneyRow[]> {
  return db
    .selectFrom('midjourneys')
    .selectAll()
    .where('status', 'not in', [...FINAL_TASK_STATUSES])
    .where('mj_id', '!=', '')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Writes a task's new state only if its status is still `previous` (compare-and-set): of two pods
 * seeing the same change, one writes it. Answers whether this call wrote it.
 */
export async function updateMidjourneyIf(
  db: Kysely<Database>,
  id: number,
  previous: string,
  changes: Updateable<MidjourneysTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('midjourneys')
    .set(changes)
    .where('id', '=', id)
    .where('status', '=', previous)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export interface FailedTask {
  row: MidjourneyRow;
  /** The quota given back (0 when the task cost nothing). */
  refunded: number;
}

/**
 * Moves a task from `previous` to FAILURE and, in the same transaction, gives its whole charge back:
 * the wallet and (limited) token balances up, the used quota of user, token and channel down, and a
 * type-6 refund log carrying the task id and reason. The compare-and-set on the status makes this
 * happen once however many pods try; undefined when another got there first.
 */
export async function failMidjourneyAndRefund(
  db: Kysely<Database>,
  input: { id: number; previous: string; reason: string; progress: string; finishTime: number; atSeconds: number },
): Promise<FailedTask | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('midjourneys')
      .set({ status: 'FAILURE', fail_reason: input.reason, progress: input.progress, finish_time: input.finishTime })
      .where('id', '=', input.id)
      .where('status', '=', input.previous)
      .returningAll()
      .executeTakeFirst();
    if (!row) return undefined;
    const quota = Number(row.quota);
    if (quota <= 0) return { row, refunded: 0 };
    const user = await trx
      .updateTable('users')
      .set({ quota: sql`quota + ${quota}`, used_quota: sql`used_quota - ${quota}` })
      .where('id', '=', row.user_id)
      .returning('username')
      .executeTakeFirst();
    let tokenName = '';
    if (row.token_id > 0) {
      const token = await trx
        .updateTable('tokens')
        .set({
          // An unlimited token was never debited: only its used quota goes down.
          remain_quota: sql`case when unlimited_quota then remain_quota else remain_quota + ${quota} end`,
          used_quota: sql`used_quota - ${quota}`,
        })
        .where('id', '=', row.token_id)
        .returning('name')
        .executeTakeFirst();
      tokenName = token?.name ?? '';
    }
    const channel = await trx
      .updateTable('channels')
      .set({ used_quota: sql`used_quota - ${quota}` })
      .where('id', '=', row.channel_id)
      .returning('name')
      .executeTakeFirst();
    await trx
      .insertInto('logs')
      .values({
        user_id: row.user_id,
        created_at: input.atSeconds,
        type: LOG_TYPE.refund,
        content: `任务失败退款 (task ${row.mj_id}): ${input.reason}`,
        username: user?.username ?? '',
        token_name: tokenName,
        token_id: row.token_id,
        model_name: row.model_name,
        quota,
        channel_id: row.channel_id,
        channel_name: channel?.name ?? '',
        group: row.group,
        other: JSON.stringify({ task_id: row.mj_id, reason: input.reason, platform: 'midjourney' }),
      })
      .execute();
    return { row, refunded: quota };
  });
}
