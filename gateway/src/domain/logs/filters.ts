import type { LogQuery } from '../../store/repositories/logs.ts';
import { type Actor, isAdmin } from './actor.ts';

/**
 * The usage log's filters, named as in the API (spec doc 3 §7) so /api and /rest pass them through.
 * Unset, 0 and '' mean "no filter". Times are Unix seconds, both ends inclusive.
 */
export interface LogFilters {
  /** One id or several (react-admin's getMany). */
  id?: number | number[] | undefined;
  /** 0 all, 1 top-up, 2 consume, 3 manage, 4 system, 5 error, 6 refund. */
  type?: number | undefined;
  /** Administrators only. */
  username?: string | undefined;
  /** Administrators only. */
  user_id?: number | undefined;
  token_name?: string | undefined;
  model_name?: string | undefined;
  start_timestamp?: number | undefined;
  end_timestamp?: number | undefined;
  /** Channel id; administrators only. */
  channel?: number | undefined;
  group?: string | undefined;
}

/**
 * The filters the actor may use: a user's query is pinned to their own rows whatever they ask, and the
 * administrator-only filters (username, user id, channel) are dropped.
 */
export function scopeLogQuery(filters: LogFilters, actor: Actor): LogQuery {
  const common: LogQuery = {
    ids: filters.id === undefined ? undefined : [filters.id].flat(),
    type: filters.type,
    tokenName: filters.token_name,
    modelName: filters.model_name,
    group: filters.group,
    start: filters.start_timestamp,
    end: filters.end_timestamp,
  };
  if (!isAdmin(actor)) return { ...common, userId: actor.id };
  return {
    ...common,
    username: filters.username,
    userId: filters.user_id || undefined,
    channelId: filters.channel,
  };
}
