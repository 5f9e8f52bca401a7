import { type Kysely, sql } from 'kysely';
import type { Database } from '../../store/database.ts';
import type { OptionsService } from '../options/index.ts';
import type { LogService } from './service.ts';

export interface LogMaintenanceConfig {
  db: Kysely<Database>;
  logs: LogService;
  options: OptionsService;
  /**
   * Whether to vacuum and analyze the logs table itself: the embedded database (PGlite) runs no autovacuum,
   * and without statistics and a visibility map its log lists and totals slow down as the table grows.
   */
  vacuum: boolean;
}

const DAY_SECONDS = 86_400;

/**
 * The hourly log job, run on one pod (runOnOnePod): deletes logs older than the option LogRetentionDays
 * (0 keeps them forever), in batches, then on the embedded database refreshes the table's statistics.
 */
export class LogMaintenance {
  readonly #config: LogMaintenanceConfig;

  constructor(config: LogMaintenanceConfig) {
    this.#config = config;
  }

  /** `now` in milliseconds (tests pass a fixed one); answers how many logs were deleted. */
  async run(signal?: AbortSignal, now = Date.now()): Promise<{ deleted: number }> {
    const { logs, options, db } = this.#config;
    const days = options.getNumber('LogRetentionDays');
    let deleted = 0;
    if (days > 0) deleted = await logs.deleteBefore(Math.floor(now / 1000) - days * DAY_SECONDS, signal);
    if (this.#config.vacuum && !signal?.aborted) await sql`vacuum (analyze) logs`.execute(db);
    return { deleted };
  }
}
