/**
 * Rollbacks and rollouts meet schemas from other versions: a gateway on a database a newer version
 * migrated serves it when the newer migrations are `expand`, refuses when one is `contract`, and a
 * gateway on a database older than it needs waits for the migration job, alive but not ready.
 */
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../gateway/src/config.ts';
import { type Gateway, startGateway } from '../../gateway/src/gateway.ts';
import {
  migrateToLatest,
  openStore,
  SchemaIncompatibleError,
  type SchemaMigration,
  type StoreOptions,
} from '../../gateway/src/store/index.ts';
import { migrations } from '../../gateway/src/store/migrations/index.ts';
import { setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { gatewayEnv, spawnGateway, startTestGateway, testNamespace } from '../support/gateway.ts';
import { waitFor } from '../support/wait.ts';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** Test-only migrations, as a newer gateway version would ship them. */
const newerExpand: Record<string, SchemaMigration> = {
  '9001_test_newer_feature': {
    compatibility: 'expand',
    up: async (db) => {
      await db.schema.createTable('test_newer_feature').addColumn('id', 'integer').execute();
    },
  },
};
const newerContract: Record<string, SchemaMigration> = {
  '9001_test_drop_display_name': {
    compatibility: 'contract',
    up: async (db) => {
      await db.schema.alterTable('users').dropColumn('display_name').execute();
    },
  },
};

/** A fresh database migrated with `list`. */
async function databaseMigratedWith(list: Record<string, SchemaMigration>) {
  const database = await createTestDatabase();
  cleanups.push(database.drop);
  const store = await openStore(database.options);
  try {
    await migrateToLatest(store.db, { migrations: list });
  } finally {
    await store.close();
  }
  return database;
}

const json = async (url: string): Promise<any> => (await fetch(url)).json();

async function started(gateway: Gateway): Promise<Gateway> {
  cleanups.push(() => gateway.stop());
  return gateway;
}

/** `node gateway/src/migrate.ts` on the database: its exit code and what it printed. */
function runMigrationJob(store: StoreOptions): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['gateway/src/migrate.ts'], {
      env: { PATH: process.env.PATH ?? '', ...gatewayEnv(store, testNamespace()) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe.skipIf(!hasPostgres())('schema compatibility across versions', { timeout: 90_000 }, () => {
  it('a gateway starts and serves on a database that already has a newer expand migration', async () => {
    const database = await databaseMigratedWith({ ...migrations, ...newerExpand });
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const recorded = await client.query('select name, compatibility from tollgate_migration_compat order by name');
    await client.end();
    expect(recorded.rows).toEqual([
      ...Object.keys(migrations).map((name) => ({ name, compatibility: 'expand' })),
      { name: '9001_test_newer_feature', compatibility: 'expand' },
    ]);

    // The migration job of the older version has nothing to do and succeeds (a rollback's hook).
    const job = await runMigrationJob(database.options);
    expect(job.code, job.output).toBe(0);
    expect(job.output).toContain('9001_test_newer_feature');

    for (const migrateOnStart of ['true', 'false']) {
      const gateway = await started(
        await startTestGateway(gatewayEnv(database.options, testNamespace(), { MIGRATE_ON_START: migrateOnStart })),
      );
      expect(await json(`${gateway.url}/readyz`)).toEqual({ status: 'ok' });
      const details = await json(`${gateway.metricsUrl}/health/details`);
      expect(details.schema).toEqual({
        pending: [],
        newer: [{ name: '9001_test_newer_feature', compatibility: 'expand' }],
      });
      const status = await json(`${gateway.url}/api/status`);
      expect(status.success).toBe(true);
      if (migrateOnStart === 'true') {
        // Writes through /api and a relay call authenticated by a token from the database.
        const root = await setupRoot(gateway.url);
        const token = await root.post('/api/token/', { name: 'rollback', unlimited_quota: true });
        const models = await fetch(`${gateway.url}/v1/models`, {
          headers: { authorization: `Bearer ${token.body.data.key}` },
        });
        expect(models.status).toBe(200);
        expect(await models.json()).toMatchObject({ object: 'list' });
      }
      await gateway.stop();
    }
  });

  it('a gateway refuses to start on a database with a newer contract migration, saying why', async () => {
    const database = await databaseMigratedWith({ ...migrations, ...newerContract });
    for (const migrateOnStart of ['true', 'false']) {
      const starting = startTestGateway(
        gatewayEnv(database.options, testNamespace(), { MIGRATE_ON_START: migrateOnStart }),
      );
      await expect(starting).rejects.toThrow(SchemaIncompatibleError);
      await expect(starting).rejects.toThrow(
        /too old for the database schema: newer migrations 9001_test_drop_display_name \(contract\)/,
      );
    }
    // As a process: a fatal log line and exit code 3, so the pod's log says what to do.
    const failed = await spawnGateway(gatewayEnv(database.options, testNamespace()), 45_000).catch(
      (error: Error) => error,
    );
    expect(String(failed)).toMatch(/exited with 3 before listening/);
    const job = await runMigrationJob(database.options);
    expect(job.code).toBe(1);
    expect(job.output).toMatch(/migration failed: this gateway is too old for the database schema/);
  });

  it('the migrator backfills what databases migrated before it recorded compatibility, and refuses diverged histories', async () => {
    const database = await databaseMigratedWith(migrations);
    const store = await openStore(database.options);
    try {
      // As a database migrated before compatibility was recorded.
      await store.db.schema.dropTable('tollgate_migration_compat').execute();
      expect(await migrateToLatest(store.db)).toEqual({ applied: [], newer: [] });
      const rows = await store.db
        .selectFrom('tollgate_migration_compat' as never)
        .select(['name' as never, 'compatibility' as never])
        .orderBy('name' as never)
        .execute();
      expect(rows).toEqual(Object.keys(migrations).map((name) => ({ name, compatibility: 'expand' })));

      // A newer migration whose compatibility nobody recorded counts as breaking.
      await sql`insert into tollgate_migrations (name, timestamp) values ('9002_unrecorded', ${new Date().toISOString()})`.execute(
        store.db,
      );
      await expect(migrateToLatest(store.db)).rejects.toThrow('9002_unrecorded (compatibility not recorded)');
    } finally {
      await store.close();
    }

    // The database has a migration this code lacks and lacks one this code has: no way forward.
    const last = Object.keys(migrations).at(-1)!;
    const diverged = await databaseMigratedWith({
      ...Object.fromEntries(Object.entries(migrations).filter(([name]) => name !== last)),
      ...newerExpand,
    });
    const divergedStore = await openStore(diverged.options);
    try {
      await expect(migrateToLatest(divergedStore.db)).rejects.toThrow(
        `have diverged: the database has 9001_test_newer_feature which this gateway does not know, and lacks ${last}`,
      );
    } finally {
      await divergedStore.close();
    }
  });

  it('a gateway on a database older than it needs waits, alive and not ready, until the migration job ran', async () => {
    const last = Object.keys(migrations).at(-1)!;
    const database = await databaseMigratedWith(
      Object.fromEntries(Object.entries(migrations).filter(([name]) => name !== last)),
    );
    const logs: Array<Record<string, any>> = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line));
        done();
      },
    });
    const config = loadConfig(gatewayEnv(database.options, testNamespace(), { MIGRATE_ON_START: 'false' }), 'test');
    const starting = startGateway(config, pino({ level: 'info' }, stream), { schemaRecheckMs: 50 });
    starting.then(started, () => {});

    await waitFor(() => logs.some((l) => String(l.msg).startsWith('database schema is older')), 30_000);
    const waitingLine = logs.find((l) => String(l.msg).startsWith('database schema is older'))!;
    expect(waitingLine.level).toBe(40);
    expect(waitingLine.msg).toContain(`pending ${last}`);
    expect(waitingLine.msg).toContain('node gateway/src/migrate.ts');
    const listening = logs.find((l) => l.msg === 'listening, not ready: waiting for the database schema')!;
    const url = String(listening.url);
    const metricsUrl = String(listening.metricsUrl);

    expect(await json(`${url}/healthz`)).toEqual({ status: 'ok' });
    for (const base of [url, metricsUrl]) {
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: 'waiting-for-schema' });
    }
    const details = await json(`${metricsUrl}/health/details`);
    expect(details).toMatchObject({ status: 'waiting-for-schema', schema: { pending: [last], newer: [] } });
    const api = await fetch(`${url}/api/status`, { headers: { 'accept-language': 'en' } });
    expect(api.status).toBe(503);
    expect(await api.json()).toMatchObject({ success: false, code: 'SCHEMA_NOT_READY' });
    const relay = await fetch(`${url}/v1/chat/completions`, { method: 'POST' });
    expect(relay.status).toBe(503);
    expect(await relay.json()).toMatchObject({ error: { code: 'schema_not_ready' } });
    const job = await runMigrationJob(database.options);
    expect(job.code, job.output).toBe(0);
    const gateway = await starting;
    // Re-checked every 50 ms while the job ran, logged once (at most every 30 s).
    expect(logs.filter((l) => String(l.msg).startsWith('database schema is older'))).toHaveLength(1);
    expect(gateway.url).toBe(url);
    expect(await json(`${url}/readyz`)).toEqual({ status: 'ok' });
    expect((await json(`${url}/api/status`)).success).toBe(true);
    expect(logs.map((l) => l.msg)).toContain('database schema is ready');
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const table = await client.query(`select to_regclass('channel_observations')::text as found`);
    await client.end();
    expect(table.rows[0].found).toBe('channel_observations');
  });
});
