/**
 * What the embedded database (PGlite) costs in memory, alone in a process: for each set of settings, a fresh
 * folder is created (initdb, then our migrations, as the gateway's first start does) and then reopened (as
 * every later start does), each in its own `node` process. Each process reports its RSS once the database
 * has been idle for a while and its peak RSS (VmHWM) since it started.
 *
 *   node bench/pglite-memory.ts                 every candidate below
 *   node bench/pglite-memory.ts default gateway only those
 *
 * BENCH_PGLITE_IDLE_SECONDS (default 5) sets the idle wait.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import { PGliteDialect } from '../gateway/src/store/dialects/pglite.ts';
import { migrateToLatest, openStore } from '../gateway/src/store/index.ts';

const MiB = 1024 * 1024;

/** Postgres settings given both at start (`startParams`) and to initdb (so creation uses them too). */
function withPostgres(settings: Record<string, string>, extra: Partial<PGliteOptions> = {}): Partial<PGliteOptions> {
  const flags = Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
  return { startParams: [...PGlite.defaultStartParams, ...flags], initDbStartParams: flags, ...extra };
}

/** Settings to compare: PGlite's defaults, one knob at a time, and what the gateway uses. */
const candidates: Record<string, () => Partial<PGliteOptions>> = {
  default: () => ({}),
  'tiering-budget x100': () => ({}),
  'shared_buffers=16MB': () => withPostgres({ shared_buffers: '16MB' }),
  'shared_buffers=32MB': () => withPostgres({ shared_buffers: '32MB' }),
  'max_connections=4': () => withPostgres({ max_connections: '4' }),
  'small work memory': () =>
    withPostgres({ work_mem: '2MB', maintenance_work_mem: '16MB', temp_buffers: '1MB', wal_buffers: '1MB' }),
  gateway: () => ({}),
};

/**
 * V8 flags a candidate sets before PGlite compiles its WebAssembly. The peak after a reopen is V8's optimizing
 * compiler (TurboFan) tiering up one very large function of Postgres (about 600 MB of compiler memory for a
 * moment); a 100× tiering budget shows it: the start-up peak goes, and comes back under the statements.
 */
const v8Flags: Record<string, string[]> = {
  'tiering-budget x100': ['--wasm-tiering-budget=1300000000'],
};

interface Probe {
  phase: 'create' | 'reopen';
  /** RSS of node before PGlite is loaded. */
  nodeRss: number;
  openMs: number;
  idleRss: number;
  peakRss: number;
  sharedBuffers: string;
  workloadMs: number;
  afterWorkRss: number;
  afterWorkPeak: number;
}

/**
 * This process's figure plus its children's: the gateway's opener runs PGlite in a process of its own
 * (store/embedded-client.ts). For VmHWM the sum is an upper bound of the peak.
 */
function status(field: 'VmRSS' | 'VmHWM'): number {
  const children = readdirSync(`/proc/${process.pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean),
  );
  let total = 0;
  for (const pid of ['self', ...children]) {
    const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    total += Number(match?.[1] ?? Number.NaN) * 1024;
  }
  return total;
}

/** The child: opens the folder the way the gateway does, migrates, idles, reports. */
async function probe(name: string, dataDir: string, phase: Probe['phase']): Promise<Probe> {
  await mkdir(dataDir, { recursive: true });
  for (const flag of v8Flags[name] ?? []) v8.setFlagsFromString(flag);
  const nodeRss = status('VmRSS');
  const started = performance.now();
  // The gateway's own opener (its settings, and a new folder created by a child process); else PGlite as is.
  const db =
    name === 'gateway'
      ? ((await openStore({ dataDir })).db as Kysely<any>)
      : new Kysely<any>({ dialect: new PGliteDialect(await PGlite.create(dataDir, candidates[name]!())) });
  await migrateToLatest(db);
  const openMs = performance.now() - started;
  // A little of what the gateway does at start: read options and look a key up.
  await sql`select count(*) from options`.execute(db);
  const sharedBuffers = String(
    (await sql<{ v: string }>`select current_setting('shared_buffers') as v`.execute(db)).rows[0]?.v,
  );
  const idleSeconds = Number(process.env.BENCH_PGLITE_IDLE_SECONDS ?? 5);
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
  const result: Probe = {
    phase,
    nodeRss,
    openMs,
    idleRss: status('VmRSS'),
    peakRss: status('VmHWM'),
    sharedBuffers,
    workloadMs: await workload(db, `${phase}-${process.pid}`),
    afterWorkRss: status('VmRSS'),
    afterWorkPeak: status('VmHWM'),
  };
  await db.destroy();
  return result;
}

/** Small statements like the gateway's (a balance update, a row written, a key read), then a scan. */
async function workload(db: Kysely<any>, phase: string): Promise<number> {
  const started = performance.now();
  const { id } = await db
    .insertInto('users')
    .values({ username: `bench-${phase}`, password: 'x', created_at: 1, quota: 1e12 })
    .returning('id')
    .executeTakeFirstOrThrow();
  for (let i = 0; i < 3000; i++) {
    await db.updateTable('users').set({ quota: sql`quota - 1` }).where('id', '=', id).execute();
    await db
      .insertInto('options')
      .values({ key: `${phase}-${i}`, value: String(i), updated_at: i })
      .execute();
    await db
      .selectFrom('options')
      .selectAll()
      .where('key', '=', `${phase}-${i >> 1}`)
      .executeTakeFirst();
  }
  await sql`select key, count(*) from options group by key order by 2 desc limit 10`.execute(db);
  return performance.now() - started;
}

function runProbe(name: string, dataDir: string, phase: Probe['phase']): Probe {
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--probe', name, dataDir, phase], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as Probe;
}

const mib = (bytes: number) => `${Math.round(bytes / MiB)}`;

async function main(): Promise<void> {
  if (process.argv[2] === '--probe') {
    const [name, dataDir, phase] = process.argv.slice(3) as [string, string, Probe['phase']];
    console.log(JSON.stringify(await probe(name, dataDir, phase)));
    return;
  }
  const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(candidates);
  for (const name of names) if (!candidates[name]) throw new Error(`unknown candidate ${name}`);
  console.log(`Node ${process.version}, PGlite ${pgliteVersion()}; RSS in MiB`);
  console.log(
    '| settings | create: idle / peak | create s | reopen: idle / peak | reopen s | peak ÷ idle (reopen) | after 9,000 statements: RSS / peak | statements s | shared_buffers |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const name of names) {
    const dir = await mkdtemp(path.join(tmpdir(), 'tollgate-pglite-memory-'));
    try {
      const created = runProbe(name, path.join(dir, 'data'), 'create');
      const reopened = runProbe(name, path.join(dir, 'data'), 'reopen');
      console.log(
        `| ${name} | ${mib(created.idleRss)} / ${mib(created.peakRss)} | ${(created.openMs / 1000).toFixed(1)} | ` +
          `${mib(reopened.idleRss)} / ${mib(reopened.peakRss)} | ${(reopened.openMs / 1000).toFixed(1)} | ` +
          `${(reopened.peakRss / reopened.idleRss).toFixed(2)} | ${mib(reopened.afterWorkRss)} / ${mib(reopened.afterWorkPeak)} | ` +
          `${(reopened.workloadMs / 1000).toFixed(2)} | ${reopened.sharedBuffers} |`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

function pgliteVersion(): string {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  return JSON.parse(readFileSync(path.join(root, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')).version;
}

await main();
