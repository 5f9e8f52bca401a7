import type { Kysely } from 'kysely';
import { AppError } from '../../errors.ts';
import type { Database } from '../../store/database.ts';
import { usernames } from '../../store/repositories/names.ts';
import {
  countMidjourneys,
  countTasks,
  listMidjourneys,
  listTasks,
  TASK_SORT_FIELDS,
  type TaskSort,
} from '../../store/repositories/tasks.ts';
import { checkListQuery, type ListQuery, type ListResult } from '../list-query.ts';
import { type Actor, isAdmin } from '../logs/actor.ts';
import { LOG_ERRORS } from '../logs/errors.ts';
import { type MidjourneyFilters, scopeMidjourneyQuery, scopeTaskQuery, type TaskFilters } from './filters.ts';
import { type MidjourneyView, midjourneyView, type TaskView, taskView } from './view.ts';

export interface TaskList<V> extends ListResult<V> {
  /** True when `total` is an estimate (more than `exactCountLimit` rows matched). */
  totalEstimated: boolean;
}

/**
 * The drawing log and the creative task log (spec doc 3 §2, §7): administrators see every task with
 * its owner's username, users only their own. Sortable by TASK_SORT_FIELDS, newest submitted first by default.
 */
export class TaskService {
  readonly #db: Kysely<Database>;
  readonly #exactCountLimit: number;
  readonly #imageBase: () => string | undefined;

  /** `imageBase` answers where drawing images are forwarded from (see midjourneyView), or undefined for none. */
  constructor(config: { db: Kysely<Database>; exactCountLimit?: number; imageBase?: () => string | undefined }) {
    this.#db = config.db;
    this.#exactCountLimit = config.exactCountLimit ?? 100_000;
    this.#imageBase = config.imageBase ?? (() => undefined);
  }

  async listMidjourney(params: ListQuery<MidjourneyFilters>, actor: Actor): Promise<TaskList<MidjourneyView>> {
    const query = scopeMidjourneyQuery(params.filters ?? {}, actor);
    const [rows, counted] = await Promise.all([
      listMidjourneys(this.#db, query, window(params)),
      countMidjourneys(this.#db, query, this.#exactCountLimit),
    ]);
    const names = await this.#owners(rows, actor);
    const imageBase = this.#imageBase();
    return {
      items: rows.map((r) => midjourneyView(r, owner(names, r.user_id), imageBase)),
      total: counted.total,
      totalEstimated: counted.estimated,
    };
  }

  async listTasks(params: ListQuery<TaskFilters>, actor: Actor): Promise<TaskList<TaskView>> {
    const query = scopeTaskQuery(params.filters ?? {}, actor);
    const [rows, counted] = await Promise.all([
      listTasks(this.#db, query, window(params)),
      countTasks(this.#db, query, this.#exactCountLimit),
    ]);
    const names = await this.#owners(rows, actor);
    return {
      items: rows.map((r) => taskView(r, owner(names, r.user_id))),
      total: counted.total,
      totalEstimated: counted.estimated,
    };
  }

  /** One drawing task the actor may see; another user's is "not found". */
  async getMidjourney(id: number, actor: Actor): Promise<MidjourneyView> {
    const [item] = (await this.listMidjourney({ filters: { id }, offset: 0, limit: 1 }, actor)).items;
    if (!item) throw new AppError(LOG_ERRORS.TASK_NOT_FOUND);
    return item;
  }

  async getTask(id: number, actor: Actor): Promise<TaskView> {
    const [item] = (await this.listTasks({ filters: { id }, offset: 0, limit: 1 }, actor)).items;
    if (!item) throw new AppError(LOG_ERRORS.TASK_NOT_FOUND);
    return item;
  }

  /** Owners' usernames, looked up for administrators only. */
  async #owners(rows: Array<{ user_id: number }>, actor: Actor): Promise<Map<number, string> | undefined> {
    return isAdmin(actor)
      ? usernames(
          this.#db,
          rows.map((r) => r.user_id),
        )
      : undefined;
  }
}

const owner = (names: Map<number, string> | undefined, userId: number) =>
  names ? (names.get(userId) ?? '') : undefined;

function window(params: ListQuery<unknown>): { sort: TaskSort; offset: number; limit: number } {
  const { field, order, offset, limit } = checkListQuery(params, TASK_SORT_FIELDS, 'submit_time');
  return { sort: { field, order }, offset, limit };
}
