import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, hasPostgres } from '../../../tests/support/database.ts';
import { waitFor } from '../../../tests/support/wait.ts';
import { migrateToLatest, openStore } from './index.ts';
import { migrations } from './migrations/index.ts';

/** Whether a process runs (a zombie waiting for its parent to read its exit status does not). */
function running(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

const TABLES = [
  'abilities',
  'channel_observations',
  'channels',
  'checkins',
  'custom_oauth_providers',
  'groups',
  'instance_secrets',
  'logs',
  'midjourneys',
  'model_prices',
  'models',
  'options',
  'passkey_credentials',
  'period_usage',
  'prefill_groups',
  'quota_data',
  'quota_leases',
  'redemptions',
  'sessions',
  'setups',
  'tasks',
  'tokens',
  'top_ups',
  'two_factor',
  'two_factor_backup_codes',
  'two_factor_challenges',
  'user_oauth_bindings',
  'users',
  'vendors',
];

describe('embedded store (PGlite on disk)', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('creates every table, keeps data across reopen, and parses bigints as numbers', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tollgate-store-'));
    dirs.push(dataDir);
    const first = await openStore({ dataDir });
    expect(first.kind).toBe('pglite');
    const ran = await migrateToLatest(first.db);
    expect(ran.applied).toEqual(Object.keys(migrations));
    const tables = await first.db.introspection.getTables();
    expect(
      tables
        .map((t) => t.name)
        .filter((n) => !n.startsWith('tollgate_'))
        .sort(),
    ).toEqual(TABLES);
    await first.db
      .insertInto('users')
      .values({ username: 'alice', password: 'x', created_at: 1, quota: 2 ** 40 })
      .execute();
    await first.close();

    const second = await openStore({ dataDir });
    expect(await migrateToLatest(second.db)).toEqual({ applied: [], newer: [] });
    const user = await second.db.selectFrom('users').selectAll().executeTakeFirstOrThrow();
    expect(user.quota).toBe(2 ** 40);
    expect(user.group).toBe('default');
    // The memory settings hold after a reopen too (embedded-settings.ts).
    const setting = await sql<{ value: string }>`select current_setting('shared_buffers') as value`.execute(second.db);
    expect(setting.rows[0]?.value).toBe('32MB');
    await second.close();
  });

  it('keeps a committed write when the process is killed without closing', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tollgate-store-'));
    dirs.push(dataDir);
    const writer = path.resolve(import.meta.dirname, '../../../tests/support/pglite-crash-writer.ts');
    const { signal, stdout } = await new Promise<{ signal: unknown; stdout: string }>((resolve) =>
      execFile(process.execPath, [writer, dataDir], (error, out) => resolve({ signal: error?.signal, stdout: out })),
    );
    expect(signal).toBe('SIGKILL');
    // The database's own process ends with the process that started it (its IPC channel closes).
    const children = JSON.parse(stdout) as number[];
    expect(children.length).toBeGreaterThan(0);
    await waitFor(() => children.every((pid) => !running(pid)), 10_000);
    const store = await openStore({ dataDir });
    const row = await store.db.selectFrom('options').select('value').where('key', '=', 'crash').executeTakeFirst();
    expect(row?.value).toBe('committed');
    await store.close();
  }, 60_000);

  it('serialises transactions on its single connection', async () => {
    const store = await openStore({ dataDir: 'memory://' });
    await migrateToLatest(store.db);
    const results = await Promise.all(
      [1, 2, 3].map((n) =>
        store.db.transaction().execute(async (trx) => {
          await trx
            .insertInto('options')
            .values({ key: `k${n}`, value: String(n), updated_at: n })
            .execute();
          return trx.selectFrom('options').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
        }),
      ),
    );
    expect(results.map((r) => r.n).sort()).toEqual([1, 2, 3]);
    const update = await store.db
      .updateTable('options')
      .set({ value: 'z' })
      .where('key', 'like', 'k%')
      .executeTakeFirst();
    expect(update.numUpdatedRows).toBe(3n);
    await store.close();
  });

  it("answers a database error with Postgres' fields, as PGlite gives them", async () => {
    const store = await openStore({ dataDir: 'memory://' });
    await migrateToLatest(store.db);
    const row = { key: 'same', value: '1', updated_at: 1 };
    await store.db.insertInto('options').values(row).execute();
    // Registration tells a taken name by the unique violation's code (23505).
    await expect(store.db.insertInto('options').values(row).execute()).rejects.toMatchObject({
      code: '23505',
      message: expect.stringContaining('duplicate key'),
      constraint: expect.any(String),
    });
    expect(await store.db.selectFrom('options').select('key').execute()).toEqual([{ key: 'same' }]);
    await store.close();
  });

  it('indexes logs by what log queries filter on, not by token id (migration 0006, reversible)', async () => {
    const store = await openStore({ dataDir: 'memory://' });
    await migrateToLatest(store.db);
    const indexes = async () =>
      (
        await sql<{
          name: string;
        }>`select indexname as name from pg_indexes where tablename = 'logs' order by 1`.execute(store.db)
      ).rows.map((r) => r.name);
    const filters = ['channel_id', 'group', 'model_name', 'token_name', 'type', 'user_id', 'username'];
    expect((await indexes()).sort()).toEqual(
      ['logs_created', 'logs_pkey', ...filters.map((c) => `logs_${c}_created`)].sort(),
    );
    await migrations['0006_logs_without_token_id_index']!.down!(store.db);
    expect(await indexes()).toContain('logs_token_id_created');
    await store.close();
  });

  it('adds period limits and the period usage table (migration 0008), and takes them away again', async () => {
    const store = await openStore({ dataDir: 'memory://' });
    await migrateToLatest(store.db);
    const columns = async (table: string) =>
      (
        await sql<{ name: string }>`select column_name as name from information_schema.columns
          where table_name = ${table} and column_name = 'period_limits'`.execute(store.db)
      ).rows.length;
    const hasUsage = async () =>
      (
        await sql<{ n: number }>`select count(*)::int as n from pg_tables where tablename = 'period_usage'`.execute(
          store.db,
        )
      ).rows[0]?.n;
    expect([await columns('tokens'), await columns('users'), await hasUsage()]).toEqual([1, 1, 1]);
    await migrations['0008_periodic_quotas']!.down!(store.db);
    expect([await columns('tokens'), await columns('users'), await hasUsage()]).toEqual([0, 0, 0]);
    await migrations['0008_periodic_quotas']!.up(store.db);
    expect([await columns('tokens'), await columns('users'), await hasUsage()]).toEqual([1, 1, 1]);
    await store.close();
  });

  it('gives tokens, users and groups rate limits, no limit by default (migration 0009, reversible)', async () => {
    const store = await openStore({ dataDir: 'memory://' });
    await migrateToLatest(store.db);
    const columns = async () =>
      (
        await sql<{ table: string; fallback: string }>`select table_name as table, column_default as fallback
          from information_schema.columns where column_name = 'rate_limits' order by 1`.execute(store.db)
      ).rows;
    expect(await columns()).toEqual([
      { table: 'groups', fallback: "'{}'::text" },
      { table: 'tokens', fallback: "'{}'::text" },
      { table: 'users', fallback: "'{}'::text" },
    ]);
    await migrations['0009_rate_limits']!.down!(store.db);
    expect(await columns()).toEqual([]);
    await store.close();
  });

  it('adds the prefill groups table with unique names (migration 0010), and takes it away again', async () => {
    const store = await openStore({ dataDir: 'memory://' });
    await migrateToLatest(store.db);
    const group = { name: 'g', type: 'model', created_time: 1, updated_time: 1 };
    await store.db.insertInto('prefill_groups').values(group).execute();
    await expect(store.db.insertInto('prefill_groups').values(group).execute()).rejects.toThrow();
    await migrations['0010_prefill_groups']!.down!(store.db);
    expect((await store.db.introspection.getTables()).map((t) => t.name)).not.toContain('prefill_groups');
    await store.close();
  });

  it('adds the model catalogue; deleting a vendor leaves its models without one (migration 0012, reversible)', async () => {
    const store = await openStore({ dataDir: 'memory://' });
    await migrateToLatest(store.db);
    const vendor = await store.db
      .insertInto('vendors')
      .values({ name: 'Acme', created_time: 1, updated_time: 1 })
      .returning('id')
      .executeTakeFirstOrThrow();
    await store.db
      .insertInto('models')
      .values({ model_name: 'acme-1', vendor_id: vendor.id, created_time: 1, updated_time: 1 })
      .execute();
    await store.db.deleteFrom('vendors').where('id', '=', vendor.id).execute();
    expect(await store.db.selectFrom('models').select(['vendor_id', 'status', 'name_rule']).execute()).toEqual([
      { vendor_id: null, status: 1, name_rule: 0 },
    ]);
    await migrations['0012_model_catalogue']!.down!(store.db);
    const left = await sql<{ name: string }>`select table_name as name from information_schema.tables
      where table_name in ('models', 'vendors')`.execute(store.db);
    expect(left.rows).toEqual([]);
    await store.close();
  });

  it('runs statements in a process of its own: the event loop keeps turning while one runs', async () => {
    const store = await openStore({ dataDir: 'memory://' });
    let turns = 0;
    let running = true;
    const turn = () => {
      turns++;
      if (running) setImmediate(turn);
    };
    setImmediate(turn);
    // In the gateway's own thread the event loop would not turn once until the statement is done.
    await sql`select pg_sleep(0.2)`.execute(store.db);
    running = false;
    expect(turns).toBeGreaterThan(1);
    await store.close();
  });
});

describe.skipIf(!hasPostgres())('Postgres store', () => {
  it('migrates once when several processes race on an empty database', async () => {
    const database = await createTestDatabase();
    const stores = await Promise.all([1, 2, 3].map(() => openStore(database.options)));
    try {
      const runs = await Promise.all(stores.map((s) => migrateToLatest(s.db)));
      expect(runs.flatMap((r) => r.applied)).toEqual(Object.keys(migrations));
      const first = stores[0]!;
      expect(first.kind).toBe('postgres');
      const rows = await first.db
        .selectFrom('tollgate_migrations' as never)
        .selectAll()
        .execute();
      expect(rows).toHaveLength(Object.keys(migrations).length);
      await first.db
        .insertInto('users')
        .values({ username: 'bob', password: 'x', created_at: 1, quota: 2 ** 40 })
        .execute();
      const user = await first.db.selectFrom('users').select(['quota', 'id']).executeTakeFirstOrThrow();
      expect(user).toEqual({ quota: 2 ** 40, id: 1 });
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await database.drop();
    }
  });
});
