import type { MidjourneyQuery, TaskQuery } from '../../store/repositories/tasks.ts';
import { type Actor, isAdmin } from '../logs/actor.ts';

/** Drawing-log filters (spec doc 3 §7). Times are Unix MILLISECONDS, both ends inclusive; unset/0/'' = no filter. */
export interface MidjourneyFilters {
  id?: number | number[] | undefined;
  /** Administrators only. */
  user_id?: number | undefined;
  /** Administrators only. */
  channel_id?: number | undefined;
  mj_id?: string | undefined;
  start_timestamp?: number | undefined;
  end_timestamp?: number | undefined;
}

/** Creative-task filters (spec doc 3 §7). Times are Unix SECONDS, both ends inclusive; unset/0/'' = no filter. */
export interface TaskFilters {
  id?: number | number[] | undefined;
  /** Administrators only. */
  user_id?: number | undefined;
  /** Administrators only. */
  channel_id?: number | undefined;
  task_id?: string | undefined;
  platform?: string | undefined;
  action?: string | undefined;
  status?: string | undefined;
  start_timestamp?: number | undefined;
  end_timestamp?: number | undefined;
}

const ids = (id: number | number[] | undefined) => (id === undefined ? undefined : [id].flat());

/** A user's query is pinned to their own tasks; the channel and user filters are for administrators. */
export function scopeMidjourneyQuery(filters: MidjourneyFilters, actor: Actor): MidjourneyQuery {
  const common = {
    ids: ids(filters.id),
    mjId: filters.mj_id,
    startMs: filters.start_timestamp,
    endMs: filters.end_timestamp,
  };
  if (!isAdmin(actor)) return { ...common, userId: actor.id };
  return { ...common, userId: filters.user_id || undefined, channelId: filters.channel_id };
}

export function scopeTaskQuery(filters: TaskFilters, actor: Actor): TaskQuery {
  const common = {
    ids: ids(filters.id),
    taskId: filters.task_id,
    platform: filters.platform,
    action: filters.action,
    status: filters.status,
    start: filters.start_timestamp,
    end: filters.end_timestamp,
  };
  if (!isAdmin(actor)) return { ...common, userId: actor.id };
  return { ...common, userId: filters.user_id || undefined, channelId: filters.channel_id };
}
