import { type ExpressionBuilder, type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Database, MidjourneysTable, TasksTable } from '../database.ts';
import { type Counted, countCapped } from './count.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type MidjourneyRow = Selectable<MidjourneysTable>;
export type TaskRow = Selectable<TasksTable>;

export const TASK_SORT_FIELDS = ['id', 'submit_time', 'finish_time', 'quota'] as const;
export type TaskSortField = (typeof TASK_SORT_FIELDS)[number];
export interface TaskSort {
  field: TaskSortField;
  order: 'asc' | 'desc';
}

/** Drawing (Midjourney) tasks to read. Times are Unix milliseconds, like the rows' submit_time. */
export interface MidjourneyQuery {
  ids?: number[] | undefined;
  userId?: number | undefined;
  channelId?: number | undefined;
  mjId?: string | undefined;
  startMs?: number | undefined;
  endMs?: number | undefined;
}

/** Creative (Suno, video) tasks to read. Times are Unix seconds, like the rows' submit_time. */
export interface TaskQuery {
  ids?: number[] | undefined;
  userId?: number | undefined;
  channelId?: number | undefined;
  taskId?: string | undefined;
  platform?: string | undefined;
  action?: string | undefined;
  status?: string | undefined;
  start?: number | undefined;
  end?: number | undefined;
}

interface Page<S> {
  sort: S;
  offset: number;
  limit: number;
}

function midjourneyWhere(eb: ExpressionBuilder<Database, 'midjourneys'>, q: MidjourneyQuery) {
  const and = [];
  if (q.ids) and.push(q.ids.length > 0 ? eb('id', 'in', q.ids) : sql<boolean>`false`);
  if (q.userId !== undefined) and.push(eb('user_id', '=', q.userId));
  if (q.channelId) and.push(eb('channel_id', '=', q.channelId));
  if (q.mjId) and.push(eb('mj_id', '=', q.mjId));
  if (q.startMs) and.push(eb('submit_time', '>=', q.startMs));
  if (q.endMs) and.push(eb('submit_time', '<=', q.endMs));
  return eb.and(and);
}

function taskWhere(eb: ExpressionBuilder<Database, 'tasks'>, q: TaskQuery) {
  const and = [];
  if (q.ids) and.push(q.ids.length > 0 ? eb('id', 'in', q.ids) : sql<boolean>`false`);
  if (q.userId !== undefined) and.push(eb('user_id', '=', q.userId));
  if (q.channelId) and.push(eb('channel_id', '=', q.channelId));
  if (q.taskId) and.push(eb('task_id', '=', q.taskId));
  if (q.platform) and.push(eb('platform', '=', q.platform));
  if (q.action) and.push(eb('action', '=', q.action));
  if (q.status) and.push(eb('status', '=', q.status));
  if (q.start) and.push(eb('submit_time', '>=', q.start));
  if (q.end) and.push(eb('submit_time', '<=', q.end));
  return eb.and(and);
}

const midjourneys = (db: Db, q: MidjourneyQuery) => db.selectFrom('midjourneys').where((eb) => midjourneyWhere(eb, q));
const tasks = (db: Db, q: TaskQuery) => db.selectFrom('tasks').where((eb) => taskWhere(eb, q));

/** Newest submitted first by default; ties (and the id sort) by id, so pages never overlap. */
export function listMidjourneys(db: Db, q: MidjourneyQuery, page: Page<TaskSort>): Promise<MidjourneyRow[]> {
  let query = midjourneys(db, q).selectAll();
  if (page.sort.field !== 'id') query = query.orderBy(page.sort.field, page.sort.order);
  return query.orderBy('id', page.sort.order).offset(page.offset).limit(page.limit).execute();
}

export function countMidjourneys(db: Kysely<Database>, q: MidjourneyQuery, exactLimit: number): Promise<Counted> {
  return countCapped(db, midjourneys(db, q), exactLimit);
}

export function listTasks(db: Db, q: TaskQuery, page: Page<TaskSort>): Promise<TaskRow[]> {
  let query = tasks(db, q).selectAll();
  if (page.sort.field !== 'id') query = query.orderBy(page.sort.field, page.sort.order);
  return query.orderBy('id', page.sort.order).offset(page.offset).limit(page.limit).execute();
}

export function countTasks(db: Kysely<Database>, q: TaskQuery, exactLimit: number): Promise<Counted> {
  return countCapped(db, tasks(db, q), exactLimit);
}
