import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * How a migration affects code that does not know it. `expand`: older gateways keep working (new tables,
 * nullable or defaulted columns, new indexes). `contract`: older gateways break (drops, renames, type
 * changes, NOT NULL without a default).
 */
export type Compatibility = 'expand' | 'contract';

export interface SchemaMigration extends Migration {
  compatibility: Compatibility;
}

export const MIGRATION_TABLE = 'tollgate_migrations';
export const MIGRATION_LOCK_TABLE = 'tollgate_migrations_lock';
/** Each applied migration's compatibility, so that older gateways can judge migrations they do not know. */
export const COMPAT_TABLE = 'tollgate_migration_compat';

export interface NewerMigration {
  name: string;
  /** Undefined when the database has no record of it (applied by a gateway that did not record it). */
  compatibility: Compatibility | undefined;
}

/** Where the database stands against the migrations this code knows. */
export interface SchemaState {
  applied: string[];
  /** Known migrations not applied yet. */
  pending: string[];
  /** Applied migrations this code does not know: a newer gateway migrated this database. */
  newer: NewerMigration[];
}

/** The schema cannot be served or migrated by this code; the message says why and what to do. */
export class SchemaIncompatibleError extends Error {
  override name = 'SchemaIncompatibleError';
}

export async function readSchemaState(db: Kysely<any>, known: Record<string, SchemaMigration>): Promise<SchemaState> {
  const applied = (await tableExists(db, MIGRATION_TABLE))
    ? (await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)} order by name`.execute(db)).rows.map(
        (r) => r.name,
      )
    : [];
  const recorded = new Map<string, string>();
  if (await tableExists(db, COMPAT_TABLE)) {
    const rows = await sql<{ name: string; compatibility: string }>`
      select name, compatibility from ${sql.table(COMPAT_TABLE)}`.execute(db);
    for (const row of rows.rows) recorded.set(row.name, row.compatibility);
  }
  const appliedSet = new Set(applied);
  return {
    applied,
    pending: Object.keys(known).filter((name) => !appliedSet.has(name)),
    newer: applied
      .filter((name) => !(name in known))
      .map((name) => {
        const compatibility = recorded.get(name);
        return {
          name,
          compatibility: compatibility === 'expand' || compatibility === 'contract' ? compatibility : undefined,
        };
      }),
  };
}

/**
 * Throws SchemaIncompatibleError when this code must not run on the schema: a newer migration that is
 * not a recorded `expand`, or newer and pending migrations at once (histories that diverged).
 */
export function assertCompatible(state: SchemaState): void {
  const breaking = state.newer.filter((m) => m.compatibility !== 'expand');
  if (breaking.length > 0) {
    const listed = breaking.map((m) => `${m.name} (${m.compatibility ?? 'compatibility not recorded'})`).join(', ');
    throw new SchemaIncompatibleError(
      `this gateway is too old for the database schema: newer migrations ${listed} break older code; run a gateway version that knows them`,
    );
  }
  if (state.newer.length > 0 && state.pending.length > 0) {
    throw new SchemaIncompatibleError(
      `the database schema and this gateway have diverged: the database has ${state.newer.map((m) => m.name).join(', ')} which this gateway does not know, and lacks ${state.pending.join(', ')}`,
    );
  }
}

async function tableExists(db: Kysely<any>, table: string): Promise<boolean> {
  const { rows } = await sql<{ found: string | null }>`select to_regclass(${table})::text as found`.execute(db);
  return rows[0]?.found != null;
}

/** Creates the compatibility table when missing. Two processes may race here: the loser finds it made. */
export async function ensureCompatTable(db: Kysely<any>): Promise<void> {
  try {
    await db.schema
      .createTable(COMPAT_TABLE)
      .ifNotExists()
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('compatibility', 'text', (c) => c.notNull().check(sql`compatibility in ('expand', 'contract')`))
      .execute();
  } catch (error) {
    if (!(await tableExists(db, COMPAT_TABLE))) throw error;
  }
}

/** Records a migration's compatibility; a row already there is left as it is. */
export async function recordCompatibility(db: Kysely<any>, name: string, compatibility: Compatibility): Promise<void> {
  await sql`insert into ${sql.table(COMPAT_TABLE)} (name, compatibility) values (${name}, ${compatibility})
    on conflict (name) do nothing`.execute(db);
}
