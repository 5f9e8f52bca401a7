import type { Kysely } from 'kysely';
import { AppError } from '../../errors.ts';
import type { Database } from '../../store/database.ts';
import {
  type AdminFlowSum,
  adminFlow,
  quotaDataByUser,
  type SelfFlowSum,
  selfFlow,
  tokenNames,
  type UserHourSum,
} from '../../store/repositories/dashboard-data.ts';
import { channelNames } from '../../store/repositories/names.ts';
import { LOG_ERRORS } from '../logs/errors.ts';

/** A user's own dashboard reads at most 30 days at a time (new-api's rule for /api/data/self). */
const MAX_SELF_RANGE_SECONDS = 2_592_000;

export interface TimeRange {
  start_timestamp: number;
  end_timestamp: number;
}

export type AdminFlowRow = AdminFlowSum & { channel_name: string };
export type SelfFlowRow = SelfFlowSum & { token_name: string };

/**
 * The dashboard's two further views (new-api's /api/data/users and /api/data/flow): consumption by user
 * per hour, from the hourly quota_data buckets, and the model flow — where consumption went, by user or
 * token, group, model and channel — summed from consume logs, which carry those dimensions.
 */
export class DashboardDataService {
  readonly #db: Kysely<Database>;

  constructor(deps: { db: Kysely<Database> }) {
    this.#db = deps.db;
  }

  byUser(range: TimeRange): Promise<UserHourSum[]> {
    return quotaDataByUser(this.#db, rangeOf(range));
  }

  /** Every user's flow (or one user's, by username), with the channels' current names. */
  async flow(range: TimeRange & { username?: string | undefined }): Promise<AdminFlowRow[]> {
    const rows = await adminFlow(this.#db, { ...rangeOf(range), username: range.username });
    const names = await channelNames(
      this.#db,
      rows.map((r) => r.channel_id),
    );
    return rows.map((r) => ({ ...r, channel_name: names.get(r.channel_id) ?? '' }));
  }

  /** The user's own flow by token; a deleted token's name is empty. */
  async selfFlow(range: TimeRange, userId: number): Promise<SelfFlowRow[]> {
    const { start, end } = rangeOf(range);
    if (end - start > MAX_SELF_RANGE_SECONDS) throw new AppError(LOG_ERRORS.DATA_RANGE_TOO_LONG);
    const rows = await selfFlow(this.#db, { start, end, userId });
    const names = await tokenNames(
      this.#db,
      rows.map((r) => r.token_id),
    );
    return rows.map((r) => ({ ...r, token_name: names.get(r.token_id) ?? '' }));
  }
}

function rangeOf(range: TimeRange): { start: number; end: number } {
  return { start: range.start_timestamp, end: range.end_timestamp };
}
