import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { migrateToLatest, openStore, type Store, type StoreOptions } from '../../gateway/src/store/index.ts';

/** Whether tests run against a real Postgres server (as opposed to the embedded fallback). */
export const hasPostgres = (): boolean => inject('databaseUrl') !== undefined;

/**
 * A fresh, empty database of its own for one test file: a new database on the Postgres server,
 * or an in-memory PGlite when there is none. `drop()` removes it.
 */
export async function createTestDatabase(): Promise<{ options: StoreOptions; url?: string; drop(): Promise<void> }> {
  const adminUrl = inject('databaseUrl');
  if (!adminUrl) return { options: { dataDir: 'memory://' }, drop: async () => {} };
  const name = `tollgate_test_${randomBytes(6).toString('hex')}`;
  await withAdmin(adminUrl, (c) => c.query(`create database ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    options: { databaseUrl: url.toString(), poolMax: 5 },
    url: url.toString(),
    drop: () => withAdmin(adminUrl, (c) => c.query(`drop database if exists ${name} with (force)`)).then(() => {}),
  };
}

/** A migrated store on a fresh database, closed and dropped by the returned `dispose`. */
export async function createTestStore(): Promise<{ store: Store; url?: string; dispose(): Promise<void> }> {
  const database = await createTestDatabase();
  const store = await openStore(database.options);
  await migrateToLatest(store.db);
  return {
    store,
    ...(database.url ? { url: database.url } : {}),
    async dispose() {
      await store.close();
      await database.drop();
    },
  };
}

async function withAdmin<T>(adminUrl: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}
