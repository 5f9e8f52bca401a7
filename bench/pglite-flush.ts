/**
 * How long a flush of usage logs holds the gateway's event loop on the embedded database: PGlite in the
 * gateway's own thread (as before) and in its own process (store/embedded-client.ts, as the gateway runs
 * it), each probe in a `node` process of its own on a migrated folder. Each writes 40 flushes of 500 usage
 * logs (what 500 relayed requests leave) through the usage writer, 50 ms apart, and reports per flush its
 * time, how long the event loop was busy, the CPU of the probe and its database process, and the event
 * loop's delay (p99 and max).
 *
 *   node bench/pglite-flush.ts            both
 *   node bench/pglite-flush.ts process    one (`thread` or `process`)
 *
 * Run it pinned to one core (`taskset -c 1 node bench/pglite-flush.ts`) to see what a single core gives.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { databaseUsageWriter } from '../gateway/src/domain/usage/writer.ts';
import type { Database } from '../gateway/src/store/database.ts';
import { PGliteDialect } from '../gateway/src/store/dialects/pglite.ts';
import { embeddedSettings } from '../gateway/src/store/embedded-settings.ts';
import { migrateToLatest, openStore } from '../gateway/src/store/index.ts';

const MODES = ['thread', 'process'] as const;
type Mode = (typeof MODES)[number];
const FLUSHES = 40;
const ROWS = 500;
const PAUSE_MS = 50;

let requestNumber = 0;
function logRow() {
  requestNumber++;
  return {
    user_id: 1,
    created_at: 1_764_000_000 + (requestNumber % 1000),
    type: 2,
    content: 'model price 0.075, completion ratio 4',
    username: 'bench',
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
    request_id: `bench-${requestNumber}-0123456789abcdef`,
    other: JSON.stringify({ model_ratio: 0.075, group_ratio: 1, completion_ratio: 4, frt: -1 }),
  };
}

/** CPU time of this process and its children (the database's process), ms. */
function cpuMs(): number {
  const own = process.cpuUsage();
  let total = (own.user + own.system) / 1000;
  const children = readdirSync(`/proc/${process.pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean),
  );
  for (const pid of children) {
    // utime and stime, in clock ticks (100 per second on Linux), after the command's closing parenthesis.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    total += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  }
  return total;
}

/** The child: opens the folder in the given mode and writes the flushes. */
async function probe(mode: Mode, dataDir: string) {
  const db =
    mode === 'process'
      ? (await openStore({ dataDir })).db
      : new Kysely<Database>({
          dialect: new PGliteDialect(
            await PGlite.create(dataDir, { ...embeddedSettings(), parsers: { 20: Number, 1700: Number } }),
          ),
        });
  const writer = databaseUsageWriter(db);
  const flush = () =>
    writer.write({
      logs: Array.from({ length: ROWS }, logRow),
      users: [],
      tokens: [],
      channels: [],
      quotaData: [],
      observations: [],
      charges: [],
      records: ROWS,
    });
  for (let i = 0; i < 5; i++) await flush();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const loopBefore = performance.eventLoopUtilization();
  const cpuBefore = cpuMs();
  delay.enable();
  const started = performance.now();
  for (let i = 0; i < FLUSHES; i++) {
    await flush();
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  }
  delay.disable();
  const flushMs = (performance.now() - started - FLUSHES * PAUSE_MS) / FLUSHES;
  const loop = performance.eventLoopUtilization(loopBefore);
  const cpu = cpuMs() - cpuBefore;
  await db.destroy();
  return {
    flushMs,
    loopBusyMs: loop.active / FLUSHES,
    cpuMs: cpu / FLUSHES,
    delayP99Ms: delay.percentile(99) / 1e6,
    delayMaxMs: delay.max / 1e6,
  };
}

async function main(): Promise<void> {
  if (process.argv[2] === '--probe') {
    console.log(JSON.stringify(await probe(process.argv[3] as Mode, process.argv[4]!)));
    return;
  }
  const modes = process.argv.length > 2 ? (process.argv.slice(2) as Mode[]) : [...MODES];
  for (const mode of modes) if (!MODES.includes(mode)) throw new Error(`unknown mode ${mode}`);
  const dir = await mkdtemp(path.join(tmpdir(), 'tollgate-pglite-flush-'));
  try {
    const dataDir = path.join(dir, 'data');
    const store = await openStore({ dataDir });
    await migrateToLatest(store.db);
    await store.close();
    console.log(`${FLUSHES} flushes of ${ROWS} usage logs, ${PAUSE_MS} ms apart; per flush, ms`);
    console.log('| PGlite in | flush | event loop busy | CPU | event-loop delay p99 / max |');
    console.log('|---|---|---|---|---|');
    for (const mode of modes) {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--probe', mode, dataDir], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const r = JSON.parse(out.trim().split('\n').at(-1)!) as Awaited<ReturnType<typeof probe>>;
      const ms = (value: number) => value.toFixed(1);
      console.log(
        `| ${mode === 'process' ? 'its own process' : "the gateway's thread"} | ${ms(r.flushMs)} | ${ms(r.loopBusyMs)} | ` +
          `${ms(r.cpuMs)} | ${ms(r.delayP99Ms)} / ${ms(r.delayMaxMs)} |`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
