/**
 * The floor of the embedded mode's memory goal: a bare PGlite process, `node` with nothing but the
 * gateway's store loaded. Its folder is created beforehand by the gateway's own creator
 * (gateway/src/store/create-embedded.ts, as the gateway's first start does in a child process); then a
 * process opens it with the gateway's opener (`openStore`: the same PGlite settings and parsers), applies
 * the migrations as the gateway does on start, stays idle and reports its RSS and its peak (VmHWM).
 *
 * Run as a script (`node bench/relay/pglite-baseline.ts <folder>`) it is that process; the relay
 * benchmark calls `measurePGliteBaseline()`.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import type { Database } from '../../gateway/src/store/database.ts';
import { PGliteDialect } from '../../gateway/src/store/dialects/pglite.ts';
import { embeddedSettings } from '../../gateway/src/store/embedded-settings.ts';
import { migrateToLatest } from '../../gateway/src/store/index.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface PGliteBaseline {
  /** RSS after the idle wait, in bytes. */
  idleRss: number;
  /** Peak RSS of the process since it started, in bytes. */
  peakRss: number;
  idleSeconds: number;
}

function status(field: 'VmRSS' | 'VmHWM'): number {
  const match = readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return Number(match?.[1] ?? Number.NaN) * 1024;
}

async function probe(dataDir: string, idleSeconds: number): Promise<PGliteBaseline> {
  const pglite = new PGlite(dataDir, embeddedSettings());
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  await migrateToLatest(db);
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
  const result = { idleRss: status('VmRSS'), peakRss: status('VmHWM'), idleSeconds };
  await db.destroy();
  return result;
}

/**
 * Creates a folder, then measures a bare PGlite process on it; `command` prefixes node (taskset, nice).
 * Registers in `cleanups` what stops it and removes the folder if the benchmark is interrupted.
 */
export async function measurePGliteBaseline(
  idleSeconds: number,
  command: string[],
  cleanups: Array<() => Promise<void>>,
): Promise<PGliteBaseline> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tollgate-bench-pglite-'));
  const dataDir = path.join(dir, 'data');
  const abort = new AbortController();
  const options = { signal: abort.signal };
  const remove = () => rm(dir, { recursive: true, force: true });
  cleanups.push(async () => {
    abort.abort();
    await remove();
  });
  const run = promisify(execFile);
  try {
    await run(process.execPath, [path.join(root, 'gateway/src/store/create-embedded.ts'), dataDir], options);
    const [bin, ...args] = [...command, process.execPath, fileURLToPath(import.meta.url), dataDir, String(idleSeconds)];
    const { stdout } = await run(bin!, args, options);
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as PGliteBaseline;
  } finally {
    await remove();
  }
}

// Run as a script (not imported): the measured process.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [dataDir, idleSeconds] = process.argv.slice(2);
  if (!dataDir) throw new Error('usage: node bench/relay/pglite-baseline.ts <folder> [idle seconds]');
  console.log(JSON.stringify(await probe(dataDir, Number(idleSeconds ?? 5))));
}
