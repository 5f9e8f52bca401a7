export type * from './database.ts';
export { MigrationError, type MigrationOutcome, migrateToLatest } from './migrate.ts';
export { openStore, type Store, type StoreKind, type StoreOptions } from './open.ts';
export {
  assertCompatible,
  type Compatibility,
  type NewerMigration,
  readSchemaState,
  SchemaIncompatibleError,
  type SchemaMigration,
  type SchemaState,
} from './schema.ts';
