import { type Insertable, type Kysely, sql, type Transaction, type Updateable } from 'kysely';
import type { Database, MidjourneysTable, TasksTable } from '../database.ts';
import { LOG_TYPE } from './logs.ts';
import type { MidjourneyRow, TaskRow } from './tasks.ts';

export type { MidjourneyRow } from './tasks.ts';

/** Statuses after which a task never changes again. */
export const FINAL_TASK_STATUSES = ['SUCCESS', 'FAILURE'] as const;

export async function insertMidjourney(
  db: Kysely<Database> | Transaction<Database>,
  row: Insertable<MidjourneysTable>,
): Promise<number> {
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

/** Who paid for a task and how much: what a refund gives back and what its log names. */
export interface TaskCharge {
  userId: number;
  tokenId: number;
  channelId: number;
  group: string;
  modelName: string;
  quota: number;
  /** The task id the client knows. */
  taskId: string;
  platform: string;
}

type Trx = Transaction<Database>;

/**
 * Moves `amount` of a task's charge between its payer and the books: positive gives it back (wallet and
 * limited token balance up, used quota of user, token and channel down), negative takes more. Answers
 * the names its log carries.
 */
async function shiftTaskCharge(
  trx: Trx,
  charge: TaskCharge,
  amount: number,
): Promise<{ username: string; tokenName: string; channelName: string }> {
  const user = await trx
    .updateTable('users')
    .set({ quota: sql`quota + ${amount}`, used_quota: sql`used_quota - ${amount}` })
    .where('id', '=', charge.userId)
    .returning('username')
    .executeTakeFirst();
  let tokenName = '';
  if (charge.tokenId > 0) {
    const token = await trx
      .updateTable('tokens')
      .set({
        // An unlimited token's balance is never moved: only its used quota.
        remain_quota: sql`case when unlimited_quota then remain_quota else remain_quota + ${amount} end`,
        used_quota: sql`used_quota - ${amount}`,
      })
      .where('id', '=', charge.tokenId)
      .returning('name')
      .executeTakeFirst();
    tokenName = token?.name ?? '';
  }
  const channel = await trx
    .updateTable('channels')
    .set({ used_quota: sql`used_quota - ${amount}` })
    .where('id', '=', charge.channelId)
    .returning('name')
    .executeTakeFirst();
  return { username: user?.username ?? '', tokenName, channelName: channel?.name ?? '' };
}

/** A task's billing log (a refund or a settlement's difference), carrying the task id in `other`. */
async function insertTaskLog(
  trx: Trx,
  charge: TaskCharge,
  names: { username: string; tokenName: string; channelName: string },
  log: { type: number; quota: number; content: string; atSeconds: number; other: Record<string, unknown> },
): Promise<void> {
  await trx
    .insertInto('logs')
    .values({
      user_id: charge.userId,
      created_at: log.atSeconds,
      type: log.type,
      content: log.content,
      username: names.username,
      token_name: names.tokenName,
      token_id: charge.tokenId,
      model_name: charge.modelName,
      quota: log.quota,
      channel_id: charge.channelId,
      channel_name: names.channelName,
      group: charge.group,
      other: JSON.stringify({ task_id: charge.taskId, ...log.other, platform: charge.platform }),
    })
    .execute();
}

/**
 * Gives a failed task's whole charge back inside the caller's transaction: the wallet and (limited)
 * token balances up, the used quota of user, token and channel down, and a type-6 refund log carrying
 * the task id and reason. Callers run it only after their compare-and-set to FAILURE succeeded, so
 * it happens once per task whatever the platform.
 */
export async function refundTaskCharge(
  trx: Trx,
  charge: TaskCharge,
  reason: string,
  atSeconds: number,
): Promise<number> {
  const { quota } = charge;
  if (quota <= 0) return 0;
  const names = await shiftTaskCharge(trx, charge, quota);
  await insertTaskLog(trx, charge, names, {
    type: LOG_TYPE.refund,
    quota,
    content: `任务失败退款 (task ${charge.taskId}): ${reason}`,
    atSeconds,
    other: { reason },
  });
  return quota;
}

/**
 * Moves a drawing task from `previous` to FAILURE and refunds it in the same transaction. The
 * compare-and-set on the status makes this happen once however many pods try; undefined when another
 * got there first.
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
    const charge: TaskCharge = {
      userId: row.user_id,
      tokenId: row.token_id,
      channelId: row.channel_id,
      group: row.group,
      modelName: row.model_name,
      quota: Number(row.quota),
      taskId: row.mj_id,
      platform: 'midjourney',
    };
    return { row, refunded: await refundTaskCharge(trx, charge, input.reason, input.atSeconds) };
  });
}

/** What `tasks.private_data` keeps of a task's billing (never shown to users). */
export interface TaskBillingContext {
  /** The id the upstream gave the task (clients only ever see the public `task_id`). */
  upstream_task_id: string;
  model_name: string;
  upstream_model: string;
  model_price: number;
  group_ratio: number;
  /** Which of the channel's keys submitted it: the upstream task belongs to that key's account. */
  key_index?: number;
  /**
   * Set when the task was priced by a configured model ratio (not a per-call price): the ratio it was
   * priced at, by which it is settled once the upstream reports the tokens it used.
   */
  model_ratio?: number;
  /** The task's own ratios it was priced with (seconds, size, video input), named as the consume log names them. */
  other_ratios?: Record<string, number>;
}

export function taskBillingContext(row: Pick<TaskRow, 'private_data'>): TaskBillingContext | undefined {
  try {
    const parsed = JSON.parse(row.private_data) as TaskBillingContext;
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** `quota` of a task row's charge: who paid it, through which channel, for what model. */
function taskChargeOf(row: TaskRow, quota: number): TaskCharge {
  return {
    userId: row.user_id,
    tokenId: row.token_id,
    channelId: row.channel_id,
    group: row.group,
    modelName: taskBillingContext(row)?.model_name ?? '',
    quota,
    taskId: row.task_id,
    platform: row.platform,
  };
}

export async function insertTask(
  db: Kysely<Database> | Transaction<Database>,
  row: Insertable<TasksTable>,
): Promise<number> {
  const inserted = await db.insertInto('tasks').values(row).returning('id').executeTakeFirstOrThrow();
  return inserted.id;
}

/** The user's tasks of a platform with these public ids (fetches never see another user's). */
export async function findUserTasks(
  db: Kysely<Database>,
  platform: string,
  userId: number,
  taskIds: string[],
): Promise<TaskRow[]> {
  if (taskIds.length === 0) return [];
  return db
    .selectFrom('tasks')
    .selectAll()
    .where('platform', '=', platform)
    .where('user_id', '=', userId)
    .where('task_id', 'in', taskIds)
    .orderBy('id', 'desc')
    .execute();
}

/** A page of the user's tasks of a platform by id order, those after `afterId` in that order. */
export async function listUserTasks(
  db: Kysely<Database>,
  platform: string,
  userId: number,
  page: { afterId: number | undefined; order: 'asc' | 'desc'; limit: number },
): Promise<TaskRow[]> {
  let query = db.selectFrom('tasks').selectAll().where('platform', '=', platform).where('user_id', '=', userId);
  if (page.afterId !== undefined) query = query.where('id', page.order === 'desc' ? '<' : '>', page.afterId);
  return query.orderBy('id', page.order).limit(page.limit).execute();
}

/** A platform's tasks still running upstream, oldest first. */
export async function unfinishedTasks(db: Kysely<Database>, platform: string, limit: number): Promise<TaskRow[]> {
  return db
    .selectFrom('tasks')
    .selectAll()
    .where('platform', '=', platform)
    .where('status', 'not in', [...FINAL_TASK_STATUSES])
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Writes a task's new state only if its status is still `previous` (compare-and-set). */
export async function updateTaskIf(
  db: Kysely<Database>,
  id: number,
  previous: string,
  changes: Updateable<TasksTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set(changes)
    .where('id', '=', id)
    .where('status', '=', previous)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The `tasks` twin of failMidjourneyAndRefund: FAILURE and the refund in one transaction, once. */
export async function failTaskAndRefund(
  db: Kysely<Database>,
  input: { id: number; previous: string; reason: string; atSeconds: number },
): Promise<{ row: TaskRow; refunded: number } | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('tasks')
      .set({
        status: 'FAILURE',
        fail_reason: input.reason,
        finish_time: input.atSeconds,
        updated_at: input.atSeconds,
      })
      .where('id', '=', input.id)
      .where('status', '=', input.previous)
      .returningAll()
      .executeTakeFirst();
    if (!row) return undefined;
    const charge = taskChargeOf(row, Number(row.quota));
    return { row, refunded: await refundTaskCharge(trx, charge, input.reason, input.atSeconds) };
  });
}

/** A finished task's charge set to what it used: the new total and why, for its log. */
export interface TaskSettlement {
  actual: number;
  /** The log's content (the figures the total came from). */
  reason: string;
  /** Fields for the log's `other` (tokens, ratios). */
  other: Record<string, unknown>;
}

/**
 * Moves a task from `previous` to SUCCESS with `changes` (compare-and-set) and settles its charge to
 * the actual quota in the same transaction: more is taken with a consume log of the difference, an
 * overcharge given back with a refund log, both carrying the task id, so the books stay balanced and
 * it happens once however many pods try. Answers the difference, undefined when another got there first.
 */
export async function succeedTaskAndSettle(
  db: Kysely<Database>,
  input: {
    id: number;
    previous: string;
    changes: Updateable<TasksTable>;
    settlement: TaskSettlement;
    atSeconds: number;
  },
): Promise<{ delta: number } | undefined> {
  return db.transaction().execute(async (trx) => {
    const before = await trx
      .selectFrom('tasks')
      .selectAll()
      .where('id', '=', input.id)
      .where('status', '=', input.previous)
      .forUpdate()
      .executeTakeFirst();
    if (!before) return undefined;
    const { actual } = input.settlement;
    const charged = Number(before.quota);
    await trx
      .updateTable('tasks')
      .set({ ...input.changes, status: 'SUCCESS', quota: actual })
      .where('id', '=', input.id)
      .execute();
    const delta = actual - charged;
    if (delta === 0) return { delta };
    const charge = taskChargeOf(before, Math.abs(delta));
    const names = await shiftTaskCharge(trx, charge, -delta);
    await insertTaskLog(trx, charge, names, {
      type: delta > 0 ? LOG_TYPE.consume : LOG_TYPE.refund,
      quota: Math.abs(delta),
      content: `任务差额结算 (task ${before.task_id}): ${input.settlement.reason}`,
      atSeconds: input.atSeconds,
      other: { ...input.settlement.other, pre_consumed_quota: charged, actual_quota: actual },
    });
    return { delta };
  });
}
