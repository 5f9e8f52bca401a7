export type * from './database.ts';
export { MigrationError, migrateToLatest } from './migrate.ts';
export { openStore, type Store, type StoreKind, type StoreOptions } from './open.ts';
