import { pino } from 'pino';
import { configFromEnvironment } from './cli.ts';
import { migrateToLatest, openStore } from './store/index.ts';

/**
 * `node gateway/src/migrate.ts`: applies pending migrations and exits (0 on success), for the Helm
 * chart's pre-install/pre-upgrade Job. Gateways migrate on start too, under the same lock, so this
 * only moves the work out of the rollout.
 */
const config = configFromEnvironment();
const logger = pino({ level: config.logLevel, base: { node: config.nodeName } });

const store = await openStore(
  config.databaseUrl ? { databaseUrl: config.databaseUrl, poolMax: 2 } : { dataDir: config.dataDir },
);
try {
  const applied = await migrateToLatest(store.db);
  logger.info({ database: store.kind, applied: applied.map((m) => m.migrationName) }, 'migrations applied');
} catch (error) {
  logger.fatal({ err: error }, 'migration failed');
  process.exitCode = 1;
} finally {
  await store.close();
}
