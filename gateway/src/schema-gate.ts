import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { PodHealth } from './health.ts';
import { assertCompatible, migrateToLatest, type NewerMigration, readSchemaState } from './store/index.ts';
import { migrations } from './store/migrations/index.ts';

export interface SchemaGateOptions {
  db: Kysely<any>;
  logger: Logger;
  health: PodHealth;
  /** MIGRATE_ON_START: apply pending migrations here rather than wait for the migration job. */
  migrate: boolean;
  /** How often a waiting gateway looks at the schema again. */
  recheckMs: number;
  /** Called once, when the gateway starts waiting: opens the main port so liveness answers. */
  onWait(): Promise<void>;
}

/** A waiting gateway repeats its log line at most this often. */
const LOG_EVERY_MS = 30_000;

/**
 * Resolves once the database schema fits this gateway: migrated here (MIGRATE_ON_START), or waited for
 * until the migration job has applied what is pending. A schema migrated by a newer gateway is served
 * when its newer migrations are all `expand`; otherwise this throws SchemaIncompatibleError.
 */
export async function prepareSchema(options: SchemaGateOptions): Promise<void> {
  const { db, logger, health } = options;
  if (options.migrate) {
    const { applied, newer } = await migrateToLatest(db);
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
    health.schemaChecked({ pending: [], newer });
    warnNewer(logger, newer);
    return;
  }
  let state = await readSchemaState(db, migrations);
  assertCompatible(state);
  health.schemaChecked(state);
  if (state.pending.length > 0) {
    await options.onWait();
    let loggedAt = Number.NEGATIVE_INFINITY;
    let loggedPending = '';
    while (state.pending.length > 0) {
      const pending = state.pending.join(', ');
      if (Date.now() - loggedAt >= LOG_EVERY_MS || pending !== loggedPending) {
        logger.warn(
          { pending: state.pending },
          `database schema is older than this gateway needs: pending ${pending}; run \`node gateway/src/migrate.ts\` (the chart's migration job) or start with MIGRATE_ON_START=true. Waiting, not ready, re-checking every ${Math.ceil(options.recheckMs / 1000)} s`,
        );
        loggedAt = Date.now();
        loggedPending = pending;
      }
      await new Promise((resolve) => setTimeout(resolve, options.recheckMs));
      try {
        state = await readSchemaState(db, migrations);
      } catch (error) {
        logger.warn({ err: error }, 'could not read the database schema; retrying');
        continue;
      }
      assertCompatible(state);
      health.schemaChecked(state);
    }
    logger.info('database schema is ready');
  }
  warnNewer(logger, state.newer);
}

function warnNewer(logger: Logger, newer: NewerMigration[]): void {
  if (newer.length === 0) return;
  logger.warn(
    { migrations: newer.map((m) => m.name) },
    `the database has newer migrations this gateway does not know (${newer.map((m) => m.name).join(', ')}); all are expand-only, so this gateway serves it`,
  );
}
