/**
 * Relay benchmark (issue 16): what the full relay path costs over a bare Node proxy, in both of the
 * gateway's modes, on loopback, in one run.
 *
 *   npm run bench                          # about 4 minutes (5 at most)
 *   BENCH_QUICK=1 npm run bench            # about 1½ minutes (2 at most): fewer and shorter steps
 *   BENCH_MODES=embedded npm run bench     # one mode only
 *
 * Targets answer the same chat request: the mock upstream itself ("direct"), a bare pass-through proxy
 * (Fastify + undici, nothing else: bench/relay/bare-proxy.ts) and the real gateway (`node
 * gateway/src/main.ts`: key auth, model request limit, routing, quota ledger, batched usage logs, metrics)
 * once per mode: on Postgres + Redis and on the embedded database (bench/relay/modes.ts). Each runs in its
 * own process; with `taskset` the proxy and the gateways get core 1 and the load generator and the mock
 * core 0. Every step runs the targets one after another. Measured per target: latency at fixed rates
 * (open loop), time to the first SSE byte of streams, the whole time of 1,000-event streams, the most
 * requests a second with 64 connections (closed loop, in rounds that alternate the targets, so that a machine
 * whose speed drifts moves every target alike), and for the servers their RSS idle, at start-up and
 * under load; for the embedded mode also a bare PGlite process's idle RSS (bench/relay/pglite-baseline.ts).
 * Prints tables and issue 16's goals per mode (bench/relay/goals.ts) and writes
 * bench/results/relay-latest.json. The goals are goals, not assertions: it exits 0 when it ran.
 *
 * Noise: every step reports the CPU other processes used meanwhile and runs again when they were busy
 * (bench/relay/noise.ts).
 *
 * Options: BENCH_QUICK=1, BENCH_DURATION_SECONDS (length of every measured step), BENCH_MODES
 * (postgres,embedded), BENCH_DATABASE_URL (a Postgres admin URL, default
 * postgres://postgres@127.0.0.1:5432/postgres; a scratch database is created and dropped), BENCH_REDIS_URL
 * (default redis://127.0.0.1:6379), BENCH_LOG_LEVEL (the gateways' LOG_LEVEL, default info as deployed),
 * BENCH_NO_PIN=1 (no taskset), BENCH_CPU_PROF=<folder> (each gateway writes a V8 CPU profile into a
 * subfolder per mode when it stops), BENCH_NICE=<-20..19> (scheduling priority of every benchmark process;
 * negative needs root).
 */
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchGateway, startBenchGateway } from './relay/gateway.ts';
import {
  checkTarget,
  closePools,
  fixedRate,
  longStreams,
  saturate,
  streamingRate,
  type Target,
  warmUp,
} from './relay/load.ts';
import { type Mode, selectedModes, unreachable } from './relay/modes.ts';
import { type Measure, measurer } from './relay/noise.ts';
import { measurePGliteBaseline, type PGliteBaseline } from './relay/pglite-baseline.ts';
import { killAll, memoryOf, onCore, pinning, pinSelf, resetPeak, spawnNode, waitForJson } from './relay/processes.ts';
import { type Machine, printReport, type Settings, writeResults } from './relay/report.ts';
import { BARE, DIRECT, type Memory, type ModeRun, type Run, type Steps } from './relay/results.ts';
import { latestNumbers } from './relay/summary.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const QUICK = process.env.BENCH_QUICK === '1';
const fixedSeconds = Number(process.env.BENCH_DURATION_SECONDS ?? 0);
const seconds = (normal: number, quick: number) => (fixedSeconds > 0 ? fixedSeconds : QUICK ? quick : normal);
const settings: Settings = {
  quick: QUICK,
  rates: QUICK ? [250, 1000] : [250, 500, 1000],
  rateSeconds: seconds(6, 2),
  streamRate: 250,
  streamSeconds: seconds(5, 2),
  longStreams: QUICK ? 20 : 100,
  connections: 64,
  saturateSeconds: seconds(4, 2),
  saturateRounds: QUICK ? 2 : 3,
  warmupSeconds: QUICK ? 1 : 3,
  idleSeconds: QUICK ? 3 : 5,
  logLevel: process.env.BENCH_LOG_LEVEL ?? 'info',
};
/** Seconds that repeats of noisy steps may take in all, shared out per kind of step. */
const RETRY_BUDGET_SECONDS = QUICK ? 20 : 60;
const retryBudgets = {
  rates: RETRY_BUDGET_SECONDS * 0.4,
  streams: RETRY_BUDGET_SECONDS * 0.15,
  longStreams: RETRY_BUDGET_SECONDS * 0.1,
  saturated: RETRY_BUDGET_SECONDS * 0.35,
};

const cleanups: Array<() => Promise<void>> = [];
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await closePools().catch(() => {});
    // Last registered first: processes stop before their folders and databases go.
    for (const step of cleanups.reverse()) {
      try {
        await step();
      } catch (error) {
        console.error(`cleanup: ${(error as Error).message}`);
      }
    }
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the benchmark's processes ...`);
    const hardStop = setTimeout(() => {
      killAll();
      process.exit(130);
    }, 35_000);
    hardStop.unref();
    cleanup().finally(() => process.exit(130));
  });
}
process.once('exit', killAll);

const log = (message: string) => console.log(`[bench] ${message}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function machine(): Machine {
  const cpus = os.cpus();
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: here, encoding: 'utf8' }).trim();
  } catch {}
  return {
    // Not availableParallelism(): this process is pinned to one core by now.
    cores: cpus.length,
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 1024 ** 3),
    node: process.version,
    kernel: os.release(),
    pinned: pinning.enabled
      ? `servers (bare proxy, gateways) on core ${pinning.serverCore}; load generator and mock on core ${pinning.loadCore}`
      : 'not pinned (taskset missing, one core, or BENCH_NO_PIN=1)',
    commit,
  };
}

/** Samples the servers' RSS while load runs, as a fallback when VmHWM cannot be reset. */
function rssSampler(pids: number[]) {
  const peaks = new Map<number, number>();
  const timer = setInterval(() => {
    for (const pid of pids) {
      const rss = memoryOf(pid, 'VmRSS');
      if (rss !== undefined) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, rss));
    }
  }, 200);
  return { peaks, stop: () => clearInterval(timer) };
}

/** Starts the gateway of each mode whose services answer; the others are kept as skipped with the reason. */
async function startGateways(
  modes: Mode[],
  mockUrl: string,
): Promise<Array<{ mode: ModeRun; gateway?: BenchGateway }>> {
  const started: Array<{ mode: ModeRun; gateway?: BenchGateway }> = [];
  for (const mode of modes) {
    const run: ModeRun = { id: mode.id, title: mode.title };
    const reason = await unreachable(mode);
    if (reason) {
      log(`${mode.title}: skipped, ${reason}`);
      started.push({ mode: { ...run, skipped: reason } });
      continue;
    }
    log(`starting ${mode.title} and setting it up through /api ...`);
    try {
      const profileDir = process.env.BENCH_CPU_PROF;
      const gateway = await startBenchGateway({
        name: mode.title,
        core: pinning.serverCore,
        upstreamUrl: mockUrl,
        logLevel: settings.logLevel,
        cleanups,
        ...(profileDir ? { cpuProfileDir: path.resolve(profileDir, mode.id) } : {}),
        ...(mode.databaseUrl ? { databaseUrl: mode.databaseUrl } : {}),
        ...(mode.redisUrl ? { redisUrl: mode.redisUrl } : {}),
      });
      started.push({ mode: { ...run, database: gateway.database, cluster: gateway.cluster }, gateway });
    } catch (error) {
      const skipped = `the gateway did not start: ${(error as Error).message}`;
      log(`${mode.title}: skipped, ${skipped}`);
      started.push({ mode: { ...run, skipped } });
    }
  }
  return started;
}

/** Consume logs written and relay requests counted by a gateway: equal when every request took the full path. */
async function fullPathOf(gateway: BenchGateway): Promise<{ consumeLogs: number; relayRequests: number }> {
  const logs = await gateway.admin.get('/api/log/?type=2&p=1&page_size=1');
  const metrics = await (await fetch(`${gateway.metricsUrl}/metrics`)).text();
  const relayRequests = metrics
    .split('\n')
    .filter((line) => line.startsWith('tollgate_relay_requests_total{'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  return { consumeLogs: Number(logs.body?.data?.total ?? Number.NaN), relayRequests };
}

/** The round with the median req/s (the lower middle one of an even count). */
function medianRound<T extends { result: { rps: number } }>(rounds: T[]): T | undefined {
  return [...rounds].sort((a, b) => a.result.rps - b.result.rps)[Math.floor((rounds.length - 1) / 2)];
}

/** Every measured step, each target one after another, in the order the report shows them. */
async function measureSteps(targets: Target[], measure: Measure<keyof typeof retryBudgets>): Promise<Steps> {
  const steps: Steps = { rates: [], streams: [], longStreams: [], saturated: [], saturatedRounds: [] };
  for (const rate of settings.rates) {
    for (const target of targets) {
      log(`${target.name}: ${rate} req/s for ${settings.rateSeconds} s`);
      const durationMs = settings.rateSeconds * 1000;
      steps.rates.push(
        await measure('rates', target.name, settings.rateSeconds, () => fixedRate(target, rate, durationMs)),
      );
      await sleep(500);
    }
  }
  for (const target of targets) {
    log(`${target.name}: streams at ${settings.streamRate} req/s for ${settings.streamSeconds} s`);
    const durationMs = settings.streamSeconds * 1000;
    steps.streams.push(
      await measure('streams', target.name, settings.streamSeconds, () =>
        streamingRate(target, settings.streamRate, durationMs),
      ),
    );
    await sleep(500);
  }
  for (const target of targets) {
    log(`${target.name}: ${settings.longStreams} long streams, one at a time`);
    steps.longStreams.push(
      await measure('longStreams', target.name, 2, () => longStreams(target, settings.longStreams)),
    );
    await sleep(500);
  }
  for (let round = 1; round <= settings.saturateRounds; round++) {
    for (const target of targets) {
      log(
        `${target.name}: ${settings.connections} connections, closed loop, ${settings.saturateSeconds} s ` +
          `(round ${round} of ${settings.saturateRounds})`,
      );
      const durationMs = settings.saturateSeconds * 1000;
      const step = await measure('saturated', target.name, settings.saturateSeconds, () =>
        saturate(target, settings.connections, durationMs),
      );
      steps.saturatedRounds.push({ ...step, round });
      await sleep(500);
    }
  }
  for (const target of targets) {
    const median = medianRound(steps.saturatedRounds.filter((step) => step.target === target.name));
    if (median) steps.saturated.push(median);
  }
  return steps;
}

async function main(): Promise<void> {
  const runStarted = performance.now();
  const modes = selectedModes();
  pinSelf(pinning.loadCore);
  const info = machine();
  log(`${info.cores} cores, ${info.cpu}, Node ${info.node}, commit ${info.commit}; ${info.pinned}`);

  const mock = spawnNode('mock upstream', [path.join(here, 'relay/mock-upstream.ts')], { core: pinning.loadCore });
  cleanups.push(() => mock.stop());
  const mockUrl = await waitForJson(mock, (line) => line.url as string | undefined);
  const bare = spawnNode(BARE, [path.join(here, 'relay/bare-proxy.ts')], {
    core: pinning.serverCore,
    env: { UPSTREAM_URL: mockUrl },
  });
  cleanups.push(() => bare.stop());
  const bareUrl = await waitForJson(bare, (line) => line.url as string | undefined);

  // The bare PGlite process idles on the server core while the gateways start: only its memory counts.
  let pglite: Promise<PGliteBaseline> | undefined;
  if (modes.some((mode) => mode.id === 'embedded')) {
    log('measuring a bare PGlite process in the background');
    pglite = measurePGliteBaseline(settings.idleSeconds, onCore(pinning.serverCore), cleanups);
    pglite.catch(() => {});
  }
  const started = await startGateways(modes, mockUrl);
  const gateways = started.flatMap(({ mode, gateway }) => (gateway ? [{ mode, gateway }] : []));

  const json = { 'content-type': 'application/json' };
  const targets: Target[] = [
    { name: DIRECT, url: mockUrl, headers: { ...json, authorization: 'Bearer sk-bench-upstream' } },
    { name: BARE, url: bareUrl, headers: { ...json, authorization: 'Bearer unused' } },
    ...gateways.map(({ mode, gateway }) => ({
      name: mode.title,
      url: gateway.url,
      headers: { ...json, authorization: `Bearer ${gateway.key}` },
    })),
  ];
  const serverPid = new Map<string, number>([
    [BARE, bare.pid],
    ...gateways.map(({ mode, gateway }) => [mode.title, gateway.child.pid] as const),
  ]);
  for (const target of targets) await checkTarget(target);

  await sleep(settings.idleSeconds * 1000);
  const memoryNow = (pid: number): Memory => ({
    idle: memoryOf(pid, 'VmRSS'),
    startupPeak: memoryOf(pid, 'VmHWM'),
    underLoad: undefined,
  });
  const bareMemory = memoryNow(bare.pid);
  for (const { mode, gateway } of gateways) mode.memory = memoryNow(gateway.child.pid);
  const pgliteBaseline = await pglite?.catch((error: Error) => {
    log(`the bare PGlite process failed: ${error.message}`);
    return undefined;
  });

  log(`warm-up: ${settings.warmupSeconds} s closed loop, 200 streams and 5 long streams per target`);
  for (const target of targets) await warmUp(target, settings.warmupSeconds * 1000);
  const servers = [...serverPid.values()];
  const peakReset = servers.every(resetPeak);
  const sampler = rssSampler(servers);

  const measure = measurer(
    {
      mock: mock.pid,
      servers,
      serverOf: (target) => serverPid.get(target),
      services: async () => (await Promise.all(gateways.map(({ gateway }) => gateway.servicePids()))).flat(),
    },
    retryBudgets,
    log,
  );
  const steps = await measureSteps(targets, measure);
  sampler.stop();
  const peakOf = (pid: number) => (peakReset ? memoryOf(pid, 'VmHWM') : sampler.peaks.get(pid));
  bareMemory.underLoad = peakOf(bare.pid);
  for (const { mode, gateway } of gateways) mode.memory!.underLoad = peakOf(gateway.child.pid);

  // The full path really ran: every answered gateway request is a consume log once the batch is written.
  await sleep(2500);
  for (const { mode, gateway } of gateways) mode.fullPath = await fullPathOf(gateway);

  await closePools();
  await cleanup();

  const run: Run = {
    steps,
    bareMemory,
    peakReset,
    ...(pgliteBaseline ? { pglite: pgliteBaseline } : {}),
    modes: started.map(({ mode }) => mode),
  };
  const goals = printReport(run, info, settings);
  const totalSeconds = (performance.now() - runStarted) / 1000;
  const out = path.join(here, 'results', 'relay-latest.json');
  await writeResults(out, run, info, settings, goals, totalSeconds);
  const readmeBlock = path.join(here, 'results', 'relay-latest.md');
  await writeFile(readmeBlock, latestNumbers(run, info, settings, goals, totalSeconds));
  console.log(
    `\nTotal time ${Math.round(totalSeconds)} s. Results: ${path.relative(process.cwd(), out)}; ` +
      `README's "Latest numbers": ${path.relative(process.cwd(), readmeBlock)}`,
  );
}

try {
  await main();
} catch (error) {
  console.error(error);
  await cleanup();
  process.exitCode = 1;
}
