/**
 * What holds the gateway's memory: starts the real gateway (`node gateway/src/main.ts`) on Postgres + Redis and
 * on the embedded database, each as a first start and a restart, and reports for each its start-up peak and its
 * idle RSS (split into V8's heap, memory outside it and mapped files); on a first start also the RSS after one
 * chat request (what a request loads on first use, such as the tokenizer) and the peak under a few seconds of
 * chat requests; and the heap's largest holders from a heap snapshot taken last (on a restart: at idle). A bare
 * PGlite process (PGlite's defaults, alone in `node`, after a reopen) is measured in the same run as the
 * embedded database's baseline.
 *
 *   node bench/gateway-memory.ts                 every mode
 *   node bench/gateway-memory.ts postgres        only some: postgres, embedded, pglite
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres; a scratch database is created and
 * dropped) and BENCH_REDIS_URL (default redis://127.0.0.1:6379) for the Postgres mode;
 * BENCH_MEMORY_IDLE_SECONDS (default 10) is how long the gateway idles before it is measured;
 * BENCH_MEMORY_LOAD_SECONDS (default 10) how long the chat requests of the load step last (0: no load step);
 * BENCH_MEMORY_SNAPSHOTS=<folder> keeps the heap snapshots there (else they are deleted);
 * BENCH_GATEWAY_NODE_FLAGS adds node flags to the gateway's command line (e.g. `--max-semi-space-size=8`), and
 * NODE_COMPILE_CACHE is passed on to it, filled first as the image's build and `npm start` fill theirs
 * (scripts/warm-compile-cache.mjs, and this benchmark's probe).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Pool } from 'undici';
import { withMallocTunables } from '../scripts/malloc-tunables.mjs';
import { setupRoot } from '../tests/support/client.ts';
import { type HeapSummary, summarizeHeapSnapshot } from './gateway-memory/heap-snapshot.ts';
import type { HeapFigures } from './gateway-memory/probe.ts';
import { processTree } from './relay/processes.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MiB = 1024 * 1024;
const mib = (bytes: number | undefined) => (bytes === undefined ? '–' : Math.round(bytes / MiB).toLocaleString('en'));
const idleSeconds = Number(process.env.BENCH_MEMORY_IDLE_SECONDS ?? 10);
// Node's compile cache, as `npm start` uses one: given to the gateway when set here.
const compileCache = process.env.NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE } : {};
const nodeFlags = (process.env.BENCH_GATEWAY_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
const loadSeconds = Number(process.env.BENCH_MEMORY_LOAD_SECONDS ?? 10);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * RSS split by what backs it, from /proc/<pid>/status (kB fields), summed over the gateway and its
 * descendants: the embedded database runs in a process of its own (a sum of peaks is an upper bound).
 */
interface Resident {
  rss: number;
  peak: number;
  /** Anonymous memory: V8's heap, WebAssembly memories, malloc. */
  anon: number;
  /** Mapped files: the node binary and shared libraries. */
  file: number;
  /**
   * malloc's main arena (the `[heap]` mapping): what the main thread allocated outside V8, and kept. glibc
   * gives its top back only past a threshold that grows with the largest block freed, so a burst of parsing
   * (the tokenizer's 2.4 MB vocabulary module) can leave tens of MiB here that nothing uses.
   */
  mallocArena: number;
}

function mallocArenaOf(pid: number): number {
  const smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const at = smaps.search(/ \[heap\]\n/);
  if (at < 0) return 0;
  return Number(/^Rss:\s+(\d+) kB/m.exec(smaps.slice(at))?.[1] ?? 0) * 1024;
}

function residentOf(pid: number): Resident {
  const total: Resident = { rss: 0, peak: 0, anon: 0, file: 0, mallocArena: 0 };
  for (const member of processTree(pid)) {
    const status = readFileSync(`/proc/${member}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    total.rss += field('VmRSS');
    total.peak += field('VmHWM');
    total.anon += field('RssAnon');
    total.file += field('RssFile');
    total.mallocArena += mallocArenaOf(member);
  }
  return total;
}

interface Measure {
  resident: Resident;
  heap: HeapFigures;
}

interface ModeResult {
  mode: string;
  startPeak: number;
  idle: Measure;
  afterRequest?: Measure;
  load?: { peak: number; perSecond: number; failed: number };
  heapSummary?: HeapSummary;
}

/** A gateway child with the probe preloaded, spoken to over IPC. */
class GatewayProcess {
  readonly child: ChildProcess;
  readonly logFile: string;
  #next = 0;
  #waiting = new Map<number, (answer: any) => void>();

  constructor(env: Record<string, string>, logFile: string) {
    this.logFile = logFile;
    const fd = openSync(logFile, 'a');
    this.child = spawn(
      process.execPath,
      [
        ...nodeFlags,
        '--import',
        path.join(root, 'bench/gateway-memory/probe.ts'),
        path.join(root, 'gateway/src/main.ts'),
      ],
      {
        env: withMallocTunables({
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          ...(process.env.GLIBC_TUNABLES ? { GLIBC_TUNABLES: process.env.GLIBC_TUNABLES } : {}),
          ...compileCache,
          ...env,
        }),
        stdio: ['ignore', fd, fd, 'ipc'],
      },
    );
    closeSync(fd);
    this.child.on('message', (answer: { id: number }) => {
      this.#waiting.get(answer.id)?.(answer);
      this.#waiting.delete(answer.id);
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  ask<T>(request: Record<string, unknown>): Promise<T> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#waiting.set(id, resolve);
      this.child.send({ id, ...request });
    });
  }

  async measure(): Promise<Measure> {
    const resident = residentOf(this.pid);
    const { figures } = await this.ask<{ figures: HeapFigures }>({ kind: 'figures' });
    return { resident, heap: figures };
  }

  async listening(): Promise<string> {
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(100)) {
      if (this.child.exitCode !== null) throw new Error(`the gateway exited: ${readFileSync(this.logFile, 'utf8')}`);
      for (const line of readFileSync(this.logFile, 'utf8').split('\n')) {
        if (line.includes('"gateway listening"')) return String(JSON.parse(line).url);
      }
    }
    throw new Error('the gateway did not start within 2 minutes');
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
}

/** An OpenAI upstream that answers every chat request with the same completion and its usage. */
async function startUpstream(): Promise<{ url: string; close(): void }> {
  const body = JSON.stringify({
    id: 'chatcmpl-memory',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello!' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
  });
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

const chatBody = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }] });

/**
 * Sets the gateway up as an operator would (root, a channel to the upstream, a key), sends one chat request
 * and returns the key.
 */
async function oneChatRequest(url: string, upstreamUrl: string): Promise<string> {
  const admin = await setupRoot(url, 'memory-root-password');
  const must = (what: string, answer: { body: any }) => {
    if (!answer.body?.success) throw new Error(`${what} failed: ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  must(
    'creating the channel',
    await admin.post('/api/channel/', {
      name: 'memory-mock',
      type: 1,
      key: 'sk-memory',
      base_url: upstreamUrl,
      models: 'gpt-4o-mini',
      group: 'default',
    }),
  );
  const key = must('creating the key', await admin.post('/api/token/', { name: 'memory', unlimited_quota: true })).data
    .key;
  // The routing index learns of the channel over the bus: retry until it does.
  for (const deadline = Date.now() + 10_000; ; await sleep(100)) {
    const answer = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: chatBody,
    });
    await answer.arrayBuffer();
    if (answer.status === 200) return String(key);
    if (Date.now() > deadline) throw new Error(`the chat request kept failing with HTTP ${answer.status}`);
  }
}

/** Chat requests on 32 connections for `seconds`; returns how many were answered 200 (the rest are errors). */
async function chatLoad(url: string, key: string, seconds: number): Promise<{ ok: number; failed: number }> {
  const pool = new Pool(url, { connections: 32, pipelining: 1 });
  const counts = { ok: 0, failed: 0 };
  const until = Date.now() + seconds * 1000;
  const worker = async () => {
    while (Date.now() < until) {
      const answer = await pool.request({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: chatBody,
      });
      await answer.body.dump();
      if (answer.statusCode === 200) counts.ok++;
      else counts.failed++;
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  await pool.close();
  return counts;
}

/** Resets the peak RSS (VmHWM) to the current RSS, so that a later peak is the peak of what follows. */
function resetPeak(pid: number): void {
  for (const member of processTree(pid)) writeFileSync(`/proc/${member}/clear_refs`, '5');
}

interface GatewayRun {
  env: Record<string, string>;
  snapshotDir: string;
  upstreamUrl: string;
  /** Set the gateway up and send a chat request after the idle measurement (on a first start only); the heap
   * snapshot is then taken after that request, else at idle. */
  request: boolean;
}

async function runGateway(mode: string, run: GatewayRun): Promise<ModeResult> {
  const logFile = path.join(run.snapshotDir, `${mode.replace(/\W+/g, '-')}.log`);
  const gateway = new GatewayProcess(
    { PORT: '0', METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_NAME: 'memory', ...run.env },
    logFile,
  );
  try {
    const url = await gateway.listening();
    const startPeak = residentOf(gateway.pid).peak;
    await sleep(idleSeconds * 1000);
    const idle = await gateway.measure();
    let afterRequest: Measure | undefined;
    let load: ModeResult['load'];
    if (run.request) {
      const key = await oneChatRequest(url, run.upstreamUrl);
      await sleep(idleSeconds * 1000);
      afterRequest = await gateway.measure();
      if (loadSeconds > 0) {
        resetPeak(gateway.pid);
        const { ok, failed } = await chatLoad(url, key, loadSeconds);
        load = { peak: residentOf(gateway.pid).peak, perSecond: ok / loadSeconds, failed };
      }
    }
    // Last: writing a snapshot grows the process for a while.
    const file = path.join(run.snapshotDir, `${mode.replace(/\W+/g, '-')}.heapsnapshot`);
    await gateway.ask({ kind: 'snapshot', file });
    const heapSummary = summarizeHeapSnapshot(file);
    if (!process.env.BENCH_MEMORY_SNAPSHOTS) await rm(file);
    return { mode, startPeak, idle, afterRequest, load, heapSummary };
  } finally {
    await gateway.stop();
  }
}

/** PGlite alone in a process with its defaults, a new folder then a reopen (bench/pglite-memory.ts's probe). */
function barePglite(dir: string): Resident {
  const probe = (phase: string) =>
    JSON.parse(
      execFileSync(process.execPath, [path.join(root, 'bench/pglite-memory.ts'), '--probe', 'default', dir, phase], {
        encoding: 'utf8',
        env: { ...process.env, BENCH_PGLITE_IDLE_SECONDS: String(idleSeconds) },
        stdio: ['ignore', 'pipe', 'inherit'],
      })
        .trim()
        .split('\n')
        .at(-1)!,
    ) as { idleRss: number; peakRss: number };
  probe('create');
  const reopened = probe('reopen');
  return {
    rss: reopened.idleRss,
    peak: reopened.peakRss,
    anon: Number.NaN,
    file: Number.NaN,
    mallocArena: Number.NaN,
  };
}

async function postgresEnv(cleanups: Array<() => Promise<void>>): Promise<Record<string, string>> {
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const name = `tollgate_bench_memory_${process.pid}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(statement);
    await client.end();
  };
  await admin(`create database ${name}`);
  cleanups.push(() => admin(`drop database if exists ${name} with (force)`));
  const namespace = `tollgate-bench-memory-${randomBytes(4).toString('hex')}`;
  cleanups.push(async () => {
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    for await (const keys of redis.scanStream({ match: `${namespace}*`, count: 1000 })) {
      if ((keys as string[]).length) await redis.del(...(keys as string[]));
    }
    await redis.quit();
  });
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return { DATABASE_URL: url.toString(), REDIS_URL: redisUrl, REDIS_NAMESPACE: namespace };
}

function printResults(results: ModeResult[], pglite: Resident | undefined): void {
  const flags =
    (nodeFlags.length ? `; gateway flags ${nodeFlags.join(' ')}` : '') +
    (compileCache.NODE_COMPILE_CACHE ? `; compile cache ${compileCache.NODE_COMPILE_CACHE}` : '');
  console.log(`\nNode ${process.version}; MiB; idle = ${idleSeconds} s after "gateway listening"${flags}\n`);
  console.log(
    '| gateway | start-up peak | idle RSS | V8 heap: used / resident (code) | outside the heap: anonymous (external; malloc arena) | mapped files | after one chat request: RSS / heap used / malloc arena | chat load: req/s, peak RSS |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const { mode, startPeak, idle, afterRequest, load } of results) {
    const { resident, heap } = idle;
    const outside = resident.anon - heap.heapResident;
    console.log(
      `| ${mode} | ${mib(startPeak)} | ${mib(resident.rss)} | ${mib(heap.heapUsed)} / ${mib(heap.heapResident)} (${mib(heap.code)}) | ` +
        `${mib(outside)} (${mib(heap.external)}; ${mib(resident.mallocArena)}) | ${mib(resident.file)} | ` +
        `${afterRequest ? `${mib(afterRequest.resident.rss)} / ${mib(afterRequest.heap.heapUsed)} / ${mib(afterRequest.resident.mallocArena)}` : '–'} | ` +
        `${load ? `${Math.round(load.perSecond).toLocaleString('en')}${load.failed ? ` (${load.failed} failed)` : ''}, ${mib(load.peak)}` : '–'} |`,
    );
  }
  if (pglite)
    console.log(`| bare PGlite process (defaults, reopen) | ${mib(pglite.peak)} | ${mib(pglite.rss)} | | | | | |`);

  for (const { mode, heapSummary, afterRequest } of results) {
    if (!heapSummary) continue;
    const when = afterRequest ? 'after the chat requests' : 'at idle';
    console.log(`\nHeap ${when}, ${mode}: ${mib(heapSummary.totalBytes)} MiB reachable; by owner (retained):`);
    for (const { owner, bytes } of heapSummary.owners.slice(0, 15)) {
      console.log(`  ${(bytes / MiB).toFixed(1).padStart(6)}  ${owner}`);
    }
    console.log('Largest holders:');
    for (const holder of heapSummary.holders.slice(0, 12)) {
      console.log(
        `  ${(holder.bytes / MiB).toFixed(1).padStart(6)}  ${holder.what} [${holder.owner}] ← ${holder.path}`,
      );
    }
  }
}

/** The gateway's modules and the probe into the compile cache, so that even a first start finds them all there. */
function warmCompileCache(folder: string): void {
  execFileSync(process.execPath, [...nodeFlags, path.join(root, 'scripts/warm-compile-cache.mjs'), folder]);
  execFileSync(
    process.execPath,
    [...nodeFlags, '--import', path.join(root, 'bench/gateway-memory/probe.ts'), '-e', '0'],
    {
      env: { ...process.env, NODE_COMPILE_CACHE: folder },
    },
  );
}

async function main(): Promise<void> {
  const modes = process.argv.length > 2 ? process.argv.slice(2) : ['postgres', 'embedded', 'pglite'];
  for (const mode of modes) {
    if (!['postgres', 'embedded', 'pglite'].includes(mode)) throw new Error(`unknown mode ${mode}`);
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'tollgate-bench-memory-'));
  const snapshotDir = process.env.BENCH_MEMORY_SNAPSHOTS ?? dir;
  await mkdir(snapshotDir, { recursive: true });
  if (compileCache.NODE_COMPILE_CACHE) warmCompileCache(compileCache.NODE_COMPILE_CACHE);
  const upstream = await startUpstream();
  const cleanups: Array<() => Promise<void>> = [async () => upstream.close(), () => rm(dir, { recursive: true })];
  const results: ModeResult[] = [];
  let pglite: Resident | undefined;
  try {
    const base = { snapshotDir, upstreamUrl: upstream.url };
    if (modes.includes('postgres')) {
      const env = await postgresEnv(cleanups);
      results.push(await runGateway('Postgres + Redis, first start', { ...base, env, request: true }));
      results.push(await runGateway('Postgres + Redis, restart', { ...base, env, request: false }));
    }
    if (modes.includes('embedded')) {
      const env = { DATA_DIR: path.join(dir, 'data') };
      results.push(await runGateway('embedded, first start', { ...base, env, request: true }));
      results.push(await runGateway('embedded, restart', { ...base, env, request: false }));
    }
    if (modes.includes('pglite')) pglite = barePglite(path.join(dir, 'pglite'));
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => console.error(error));
  }
  printResults(results, pglite);
}

await main();
