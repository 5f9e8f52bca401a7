import type { Kysely } from 'kysely';
import { type MigrationResult, Migrator } from 'kysely/migration';
import { migrations } from './migrations/index.ts';

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/**
 * Brings the schema to the latest version. Kysely takes a database lock first, so several
 * gateway pods starting at once on an empty database run each migration exactly once.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationResult[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'tollgate_migrations',
    migrationLockTableName: 'tollgate_migrations_lock',
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) {
    const failed = results.find((r) => r.status === 'Error')?.migrationName ?? 'setup';
    throw new MigrationError(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return results;
}
