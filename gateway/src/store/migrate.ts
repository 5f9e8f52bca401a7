import type { Kysely } from 'kysely';
import { type Migration, Migrator } from 'kysely/migration';
import { migrations as shipped } from './migrations/index.ts';
import {
  assertCompatible,
  ensureCompatTable,
  MIGRATION_LOCK_TABLE,
  MIGRATION_TABLE,
  type NewerMigration,
  readSchemaState,
  recordCompatibility,
  type SchemaMigration,
} from './schema.ts';

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export interface MigrateOptions {
  /** The migrations to apply; default the ones this gateway ships. Tests pass their own lists. */
  migrations?: Record<string, SchemaMigration>;
}

export interface MigrationOutcome {
  /** Names of the migrations this call applied, in order. */
  applied: string[];
  /** Migrations already in the database that this code does not know (all `expand`, or this throws). */
  newer: NewerMigration[];
}

/**
 * Brings the schema to the latest version this code knows. Kysely takes a database lock first, so several
 * gateway pods starting at once on an empty database run each migration exactly once. A database that a
 * newer gateway migrated is left alone when its newer migrations are all `expand`; otherwise this throws
 * SchemaIncompatibleError.
 */
export async function migrateToLatest(db: Kysely<any>, options: MigrateOptions = {}): Promise<MigrationOutcome> {
  const known = options.migrations ?? shipped;
  const state = await readSchemaState(db, known);
  assertCompatible(state);
  await ensureCompatTable(db);
  // Databases migrated before compatibility was recorded: fill in what this code knows.
  for (const name of state.applied) {
    const migration = known[name];
    if (migration) await recordCompatibility(db, name, migration.compatibility);
  }
  // Kysely refuses a database with migrations it was not given ("corrupted migrations"); with newer ones
  // present nothing is pending (assertCompatible), so there is nothing to hand it.
  if (state.pending.length === 0) return { applied: [], newer: state.newer };

  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => recording(known) },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) {
    const failed = results.find((r) => r.status === 'Error')?.migrationName ?? 'setup';
    throw new MigrationError(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return { applied: results.map((r) => r.migrationName), newer: state.newer };
}

/** Each migration also records its compatibility, in the same transaction as its changes. */
function recording(known: Record<string, SchemaMigration>): Record<string, Migration> {
  return Object.fromEntries(
    Object.entries(known).map(([name, migration]) => [
      name,
      {
        up: async (db: Kysely<any>) => {
          await migration.up(db);
          await recordCompatibility(db, name, migration.compatibility);
        },
        ...(migration.down ? { down: migration.down } : {}),
      },
    ]),
  );
}
