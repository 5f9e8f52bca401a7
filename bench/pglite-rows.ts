/**
 * What the embedded database costs per usage-log row, measured in a bare PGlite process: PGlite in the
 * probe's own thread, the gateway's settings, parsers and migrations, started with `--liftoff-only` as the
 * gateway's database process is (store/embedded-client.ts). Each way of writing runs in a `node` process
 * of its own on a copy of one migrated folder, writes WARM batches and then BATCHES batches of ROWS log
 * rows (one transaction each, as the usage writer does) and reports its CPU per row.
 *
 *   taskset -c 1 node bench/pglite-rows.ts [way…]     (default: every way)
 *
 * Ways: `unnest` (the writer's INSERT … SELECT FROM unnest, 100 rows per statement), `unnest-one` (the same as JS arrays,
 * a whole batch per statement), `json` (one JSON text parameter, json_to_recordset), `no-indexes` (the writer,
 * on a logs table with only its primary key: what the secondary indexes cost), `sequence-cache` (the writer, with
 * the ids' sequence caching 1,000 values: what taking an id per row costs).
 */
import { execFileSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import type { Database } from '../gateway/src/store/database.ts';
import { PGliteDialect } from '../gateway/src/store/dialects/pglite.ts';
import { embeddedSettings } from '../gateway/src/store/embedded-settings.ts';
import { migrateToLatest, openStore } from '../gateway/src/store/index.ts';
import { insertLogRows } from '../gateway/src/store/repositories/usage.ts';

const WAYS = ['unnest', 'unnest-one', 'json', 'no-indexes', 'sequence-cache'] as const;
type Way = (typeof WAYS)[number];
const ROWS = Number(process.env.BENCH_ROWS ?? 500);
const WARM = 10;
const BATCHES = Number(process.env.BENCH_BATCHES ?? 40);

let requestNumber = 0;
function logRow() {
  requestNumber++;
  return {
    user_id: 1,
    created_at: 1_764_000_000 + Math.floor(requestNumber / 3000),
    type: 2,
    content: '',
    username: 'root',
    token_name: 'bench',
    model_name: 'gpt-4o-mini',
    quota: 12,
    prompt_tokens: 9,
    completion_tokens: 12,
    use_time: 0,
    is_stream: false,
    channel_id: 1,
    channel_name: 'bench-mock',
    token_id: 1,
    group: 'default',
    ip: '127.0.0.1',
    request_id: `2026112612000000${requestNumber}abcdef`,
    other: JSON.stringify({ model_ratio: 0.075, group_ratio: 1, completion_ratio: 4, model_price: -1, frt: -1 }),
  };
}
type Row = ReturnType<typeof logRow>;
const COLUMNS = Object.keys(logRow()) as Array<keyof Row>;
requestNumber = 0;

const JSON_TYPES: Record<string, string> = {
  user_id: 'int4',
  created_at: 'int8',
  type: 'int4',
  quota: 'int8',
  prompt_tokens: 'int4',
  completion_tokens: 'int4',
  use_time: 'int4',
  is_stream: 'bool',
  channel_id: 'int4',
  token_id: 'int4',
};

async function write(db: Kysely<Database>, way: Way, rows: Row[]): Promise<void> {
  await db.transaction().execute(async (tx) => {
    if (way === 'unnest' || way === 'no-indexes' || way === 'sequence-cache') return insertLogRows(tx, rows);
    if (way === 'unnest-one') {
      // One statement for the whole batch: the writer's shape without its 100-row chunks.
      const arrays = COLUMNS.map((name) => {
        const type = JSON_TYPES[name] ?? 'text';
        return sql`${rows.map((row) => row[name])}::${sql.raw(`${type}[]`)}`;
      });
      await sql`insert into logs (${sql.join(COLUMNS.map((c) => sql.ref(c)))})
        select * from unnest(${sql.join(arrays)})`.execute(tx);
      return;
    }
    const defs = COLUMNS.map((c) => `"${c}" ${JSON_TYPES[c] ?? 'text'}`).join(', ');
    await sql`insert into logs (${sql.join(COLUMNS.map((c) => sql.ref(c)))})
      select * from json_to_recordset(${JSON.stringify(rows)}::json) as r(${sql.raw(defs)})`.execute(tx);
  });
}

function cpuMs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

async function probe(way: Way, dataDir: string) {
  const pglite = await PGlite.create(dataDir, { ...embeddedSettings(), parsers: { 20: Number, 1700: Number } });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  if (way === 'sequence-cache') await sql`alter sequence logs_id_seq cache 1000`.execute(db);
  if (way === 'no-indexes') {
    for (const index of [
      'logs_created',
      ...['user_id', 'username', 'token_id', 'token_name', 'model_name', 'channel_id', 'type', 'group'].map(
        (c) => `logs_${c}_created`,
      ),
    ]) {
      await sql`drop index if exists ${sql.ref(index)}`.execute(db);
    }
  }
  for (let i = 0; i < WARM; i++) await write(db, way, Array.from({ length: ROWS }, logRow));
  const batches = Array.from({ length: BATCHES }, () => Array.from({ length: ROWS }, logRow));
  const before = cpuMs();
  const started = performance.now();
  for (const rows of batches) await write(db, way, rows);
  const cpu = cpuMs() - before;
  const wall = performance.now() - started;
  await db.destroy();
  return {
    way,
    rows: ROWS,
    cpuUsPerRow: (cpu * 1000) / (ROWS * BATCHES),
    wallUsPerRow: (wall * 1000) / (ROWS * BATCHES),
  };
}

async function main(): Promise<void> {
  if (process.argv[2] === '--probe') {
    console.log(JSON.stringify(await probe(process.argv[3] as Way, process.argv[4]!)));
    return;
  }
  const ways = process.argv.length > 2 ? (process.argv.slice(2) as Way[]) : [...WAYS];
  for (const way of ways) if (!WAYS.includes(way)) throw new Error(`unknown way ${way} (${WAYS.join(', ')})`);
  const dir = await mkdtemp(path.join(tmpdir(), 'tollgate-pglite-rows-'));
  try {
    const migrated = path.join(dir, 'migrated');
    const store = await openStore({ dataDir: migrated });
    await migrateToLatest(store.db);
    await store.close();
    console.log(`${BATCHES} batches of ${ROWS} usage logs after ${WARM} to warm up; per row, µs`);
    console.log('| way | CPU | wall |');
    console.log('|---|---|---|');
    for (const way of ways) {
      const dataDir = path.join(dir, way);
      cpSync(migrated, dataDir, { recursive: true });
      const out = execFileSync(
        process.execPath,
        [
          ...(process.env.BENCH_TURBOFAN === '1' ? [] : ['--liftoff-only']),
          fileURLToPath(import.meta.url),
          '--probe',
          way,
          dataDir,
        ],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const r = JSON.parse(out.trim().split('\n').at(-1)!) as Awaited<ReturnType<typeof probe>>;
      console.log(`| ${way} | ${r.cpuUsPerRow.toFixed(1)} | ${r.wallUsPerRow.toFixed(1)} |`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
