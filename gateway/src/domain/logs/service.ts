import type { Kysely } from 'kysely';
import { AppError } from '../../errors.ts';
import type { Database } from '../../store/database.ts';
import {
  countLogs,
  deleteLogsBefore,
  findLog,
  LOG_SORT_FIELDS,
  type LogRow,
  listLogs,
  logBatches,
  recentConsumption,
  sumConsumption,
} from '../../store/repositories/logs.ts';
import { channelNames } from '../../store/repositories/names.ts';
import {
  allQuotaData,
  type QuotaDataRow,
  type QuotaDataSum,
  userQuotaData,
} from '../../store/repositories/quota-data.ts';
import { checkListQuery, type ListQuery, type ListResult } from '../list-query.ts';
import type { OptionsService } from '../options/index.ts';
import { type Actor, isAdmin } from './actor.ts';
import { ADMIN_LOG_COLUMNS, csvHeader, csvRows, USER_LOG_COLUMNS } from './csv.ts';
import { LOG_ERRORS } from './errors.ts';
import { type LogFilters, scopeLogQuery } from './filters.ts';
import { type AdminLogView, adminLogView, type UserLogView, userLogView } from './view.ts';

export type LogView = AdminLogView | UserLogView;

export interface LogList extends ListResult<LogView> {
  /** True when `total` is an estimate (more than `exactCountLimit` rows matched). */
  totalEstimated: boolean;
}

export interface LogStat {
  /** Quota of the consume logs matching the filters. */
  quota: number;
  /** Prompt plus completion tokens of those logs (the spec's `token`). */
  token: number;
  /** Consume logs in the last 60 seconds (time filters do not apply, as in new-api). */
  rpm: number;
  /** Their tokens. */
  tpm: number;
}

export interface LogServiceConfig {
  db: Kysely<Database>;
  options: OptionsService;
  /** Totals are exact up to this many rows and estimated beyond (see countCapped). */
  exactCountLimit?: number;
  /** Rows per DELETE statement. */
  deleteBatchSize?: number;
  /** Rows per read while exporting. */
  exportBatchSize?: number;
  now?: () => number;
}

/** /api/data/self answers at most a 30-day range (new-api's rule). */
const MAX_SELF_DATA_RANGE_SECONDS = 2_592_000;

/** The usage log (spec doc 3 §2–§7): lists, stats, CSV export, deletion by age and the hourly data dashboard. */
export class LogService {
  readonly #db: Kysely<Database>;
  readonly #options: OptionsService;
  readonly #exactCountLimit: number;
  readonly #deleteBatchSize: number;
  readonly #exportBatchSize: number;
  readonly #now: () => number;

  constructor(config: LogServiceConfig) {
    this.#db = config.db;
    this.#options = config.options;
    this.#exactCountLimit = config.exactCountLimit ?? 100_000;
    this.#deleteBatchSize = config.deleteBatchSize ?? 1000;
    this.#exportBatchSize = config.exportBatchSize ?? 1000;
    this.#now = config.now ?? Date.now;
  }

  /**
   * A page of logs the actor may see, shaped for the actor; `{items, total}` for /api and /rest alike.
   * Sortable by LOG_SORT_FIELDS, newest first by default; only created_at (and id) pages come straight
   * out of an index, the other sorts read every matching row.
   */
  async list(params: ListQuery<LogFilters>, actor: Actor): Promise<LogList> {
    const query = scopeLogQuery(params.filters ?? {}, actor);
    const { field, order, offset, limit } = checkListQuery(params, LOG_SORT_FIELDS, 'created_at');
    const [rows, counted] = await Promise.all([
      listLogs(this.#db, query, { sort: { field, order }, offset, limit }),
      countLogs(this.#db, query, this.#exactCountLimit),
    ]);
    return { items: await this.#views(rows, actor), total: counted.total, totalEstimated: counted.estimated };
  }

  /** One log the actor may see; another user's log is "not found", like one that does not exist. */
  async get(id: number, actor: Actor): Promise<LogView> {
    const row = await findLog(this.#db, id, scopeLogQuery({}, actor));
    if (!row) throw new AppError(LOG_ERRORS.LOG_NOT_FOUND);
    return (await this.#views([row], actor))[0]!;
  }

  async stat(filters: LogFilters, actor: Actor): Promise<LogStat> {
    const query = scopeLogQuery(filters, actor);
    const since = Math.floor(this.#now() / 1000) - 60;
    const [sums, recent] = await Promise.all([
      sumConsumption(this.#db, query),
      recentConsumption(this.#db, query, since),
    ]);
    return { quota: sums.quota, token: sums.token, rpm: recent.rpm, tpm: recent.tpm };
  }

  /** Deletes every log created before `target` (Unix seconds), in batches; answers how many went. */
  async deleteBefore(target: number, signal?: AbortSignal): Promise<number> {
    if (!target || target <= 0) throw new AppError(LOG_ERRORS.TARGET_TIMESTAMP_REQUIRED);
    return deleteLogsBefore(this.#db, target, this.#deleteBatchSize, signal);
  }

  /**
   * The matching logs as CSV text chunks, one per batch read by keyset, so an export of any size holds one
   * batch in memory and pauses while the client is slow to read. The header row comes with the first batch:
   * whoever sends the export can read that first chunk before answering 200, so a query the store refuses
   * is an error answer, not a cut connection after the header.
   */
  async *exportCsv(filters: LogFilters, actor: Actor): AsyncGenerator<string> {
    const query = scopeLogQuery(filters, actor);
    const quotaPerUnit = this.#options.getNumber('QuotaPerUnit') || 500_000;
    const admin = isAdmin(actor);
    // A byte-order mark, so spreadsheet programs read the UTF-8 (Chinese names) correctly.
    let header = `\uFEFF${admin ? csvHeader(ADMIN_LOG_COLUMNS) : csvHeader(USER_LOG_COLUMNS)}`;
    for await (const rows of logBatches(this.#db, query, this.#exportBatchSize)) {
      let chunk: string;
      if (admin) {
        const names = await channelNames(
          this.#db,
          rows.map((r) => r.channel_id),
        );
        chunk = csvRows(
          ADMIN_LOG_COLUMNS,
          rows.map((r) => adminLogView(r, names)),
          quotaPerUnit,
        );
      } else {
        chunk = csvRows(USER_LOG_COLUMNS, rows.map(userLogView), quotaPerUnit);
      }
      yield header + chunk;
      header = '';
    }
    if (header) yield header;
  }

  /**
   * Hourly usage buckets (the data dashboard). Administrators see one user's buckets (by username) or
   * every user's summed per model and hour; a user sees their own, at most 30 days at a time.
   */
  async quotaData(
    input: { username?: string | undefined; start_timestamp: number; end_timestamp: number },
    actor: Actor,
  ): Promise<QuotaDataRow[] | QuotaDataSum[]> {
    const range = { start: input.start_timestamp, end: input.end_timestamp };
    if (isAdmin(actor)) {
      return input.username
        ? userQuotaData(this.#db, { ...range, username: input.username })
        : allQuotaData(this.#db, range);
    }
    if (range.end - range.start > MAX_SELF_DATA_RANGE_SECONDS) throw new AppError(LOG_ERRORS.DATA_RANGE_TOO_LONG);
    return userQuotaData(this.#db, { ...range, userId: actor.id });
  }

  async #views(rows: LogRow[], actor: Actor): Promise<LogView[]> {
    if (!isAdmin(actor)) return rows.map(userLogView);
    const names = await channelNames(
      this.#db,
      rows.map((r) => r.channel_id),
    );
    return rows.map((r) => adminLogView(r, names));
  }
}
