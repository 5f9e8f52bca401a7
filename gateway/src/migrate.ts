import { pino } from 'pino';
import { configFromEnvironment } from './cli.ts';
import { migrateToLatest, openStore } from './store/index.ts';

// Only as the entry point: scripts/warm-compile-cache.mjs imports this module to put it in Node's compile cache.
if (import.meta.main) await migrate();

/**
 * `node gateway/src/migrate.ts`: applies pending migrations and exits (0 on success), for the Helm
 * chart's migration Job (gateway pods there run with MIGRATE_ON_START=false and wait for it). On a
 * database a newer version migrated it changes nothing and succeeds when the newer migrations are all
 * `expand`; otherwise it exits 1 saying why.
 */
async function migrate(): Promise<void> {
  const config = configFromEnvironment();
  const logger = pino({ level: config.logLevel, base: { node: config.nodeName } });

  const store = await openStore(
    config.databaseUrl ? { databaseUrl: config.databaseUrl, poolMax: 2 } : { dataDir: config.dataDir },
  );
  try {
    const { applied, newer } = await migrateToLatest(store.db);
    logger.info({ database: store.kind, applied }, applied.length > 0 ? 'migrations applied' : 'schema up to date');
    if (newer.length > 0) {
      logger.warn(
        { newer: newer.map((m) => m.name) },
        'the database has newer expand-only migrations this version does not know; left as they are',
      );
    }
  } catch (error) {
    logger.fatal({ err: error }, `migration failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  } finally {
    await store.close();
  }
}
