/** The relay benchmark's output: tables per kind of step, issue 16's goals per mode, and the JSON file. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { figure, mib, ms, pct, table, us } from './format.ts';
import { type Goal, goalsFor, PER_EVENT_DEFINITION, perEventAdded } from './goals.ts';
import { NOISY_CPU } from './noise.ts';
import { DIRECT, type Run, stepOf } from './results.ts';

export interface Settings {
  quick: boolean;
  rates: number[];
  rateSeconds: number;
  streamRate: number;
  streamSeconds: number;
  longStreams: number;
  connections: number;
  /** Seconds of one saturated round; every target runs `saturateRounds` of them, in turn. */
  saturateSeconds: number;
  saturateRounds: number;
  warmupSeconds: number;
  idleSeconds: number;
  logLevel: string;
}

export interface Machine {
  cores: number;
  cpu: string;
  memoryGiB: number;
  node: string;
  kernel: string;
  pinned: string;
  commit: string;
}

const mark = (goal: Goal) => `${goal.pass ? 'PASS' : 'MISS'}${goal.noisy ? ' (noisy)' : ''}`;

function printSteps(run: Run, s: Settings): void {
  const { rates, streams, longStreams, saturated } = run.steps;
  const postgresTitle = run.modes.find((mode) => mode.id === 'postgres')?.title;
  console.log(`\nNon-streaming chat at fixed rates (open loop, ${s.rateSeconds} s each), latency in ms:`);
  console.log(
    table(
      ['rate', 'target', 'p50', 'p99', 'max', 'added p50', 'added p99', 'errors', 'server CPU', 'other CPU'],
      rates.map(({ target, result, cpu }) => {
        const d = stepOf(rates, DIRECT, (x) => x.result.rate === result.rate)?.result;
        const added = target !== DIRECT && d;
        return [
          `${result.rate}/s`,
          target,
          ms(result.p50),
          ms(result.p99),
          ms(result.max),
          added ? ms(result.p50 - d.p50) : '',
          added ? ms(result.p99 - d.p99) : '',
          String(result.errors),
          pct(cpu.server),
          pct(cpu.other),
        ];
      }),
    ),
  );

  console.log(`\nStreaming chat at ${s.streamRate} req/s (${s.streamSeconds} s), time to first SSE byte in ms:`);
  const directStream = stepOf(streams, DIRECT)?.result;
  console.log(
    table(
      [
        'target',
        'TTFB p50',
        'TTFB p99',
        'added p50',
        'added p99',
        'whole stream p50',
        'errors',
        'server CPU',
        'other CPU',
      ],
      streams.map(({ target, result, cpu }) => [
        target,
        ms(result.ttfb.p50),
        ms(result.ttfb.p99),
        target === DIRECT ? '' : ms(result.ttfb.p50 - (directStream?.ttfb.p50 ?? Number.NaN)),
        target === DIRECT ? '' : ms(result.ttfb.p99 - (directStream?.ttfb.p99 ?? Number.NaN)),
        ms(result.total.p50),
        String(result.ttfb.errors),
        pct(cpu.server),
        pct(cpu.other),
      ]),
    ),
  );

  const events = longStreams[0]?.result.events ?? 0;
  console.log(`\nLong streams: ${s.longStreams} streams of ${events} content events, one at a time, whole time in ms:`);
  console.log(
    table(
      ['target', 'p50', 'p90', 'max', 'added per event', 'errors', 'server CPU', 'other CPU'],
      longStreams.map(({ target, result, cpu }) => [
        target,
        ms(result.total.p50),
        ms(result.total.p90),
        ms(result.total.max),
        target === DIRECT ? '' : us(perEventAdded(run, target)),
        String(result.total.errors),
        pct(cpu.server),
        pct(cpu.other),
      ]),
    ),
  );
  console.log(PER_EVENT_DEFINITION);

  console.log(
    `\nSaturated (closed loop, ${s.connections} connections, ${s.saturateRounds} rounds of ${s.saturateSeconds} s in turn; the median round):`,
  );
  console.log(
    table(
      [
        'target',
        'req/s',
        'per server core',
        'p50 ms',
        'p99 ms',
        'errors',
        'server CPU',
        'load side CPU',
        'Postgres+Redis',
        'other CPU',
      ],
      saturated.map(({ target, result, cpu }) => [
        target,
        Math.round(result.rps).toLocaleString('en'),
        cpu.server ? Math.round(result.rps / cpu.server).toLocaleString('en') : '-',
        ms(result.p50),
        ms(result.p99),
        String(result.errors),
        pct(cpu.server),
        pct(cpu.load),
        target === postgresTitle ? pct(cpu.services) : '-',
        pct(cpu.other),
      ]),
    ),
  );
  console.log(
    'per server core = req/s divided by the share of its core the server got (what it does with a whole core);\n' +
      'CPU is in shares of one core: server = the proxy or gateway under test; load side = generator + mock;\n' +
      "Postgres+Redis = the gateways' database backends and Redis server (when one uses them);\n" +
      'other = every other process on the machine (noise: the numbers are only clean when it stays near 0%).',
  );
  const all = [...rates, ...streams, ...longStreams, ...saturated];
  const busiest = Math.max(...all.map((x) => x.cpu.other));
  const repeated = all.filter((x) => x.attempts > 1).length;
  if (repeated)
    console.log(`${repeated} step(s) ran again because other processes were busy; the quietest run is shown.`);
  if (busiest > NOISY_CPU) {
    console.log(
      `WARNING: other processes used up to ${Math.round(busiest * 100)}% of a core during a step: ` +
        'those numbers are noisy; run again on a quiet machine.',
    );
  }
}

function printMemory(run: Run): void {
  console.log('\nMemory (RSS, MiB):');
  const rows = [
    ['bare proxy', mib(run.bareMemory.idle), mib(run.bareMemory.startupPeak), mib(run.bareMemory.underLoad)],
  ];
  if (run.pglite) {
    rows.push(['bare PGlite process', mib(run.pglite.idleRss), mib(run.pglite.peakRss), '']);
  }
  for (const mode of run.modes) {
    if (mode.memory) {
      rows.push([mode.title, mib(mode.memory.idle), mib(mode.memory.startupPeak), mib(mode.memory.underLoad)]);
    }
  }
  console.log(table(['process', 'idle', 'peak at start-up', 'peak under load'], rows));
  console.log('idle = RSS after set-up and a few idle seconds');
  if (run.pglite) {
    console.log(
      "bare PGlite process = node with PGlite in its own thread, the gateway's settings and migrations, on a " +
        'folder created beforehand, idle as long (bench/relay/pglite-baseline.ts); servers include their child processes',
    );
  }
  if (!run.peakReset)
    console.log('(VmHWM could not be reset; peak under load is the largest VmRSS sampled every 200 ms)');
}

/** Prints the whole report and returns the goals per mode. */
export function printReport(run: Run, machine: Machine, settings: Settings): Record<string, Goal[]> {
  console.log(
    `\nRelay benchmark, ${machine.cores} cores (${machine.cpu}), Node ${machine.node}, commit ${machine.commit}`,
  );
  console.log(`Pinning: ${machine.pinned}`);
  for (const mode of run.modes) {
    console.log(
      mode.skipped
        ? `${mode.title}: SKIPPED (${mode.skipped})`
        : `${mode.title}: ${mode.database}; cluster state ${mode.cluster}; LOG_LEVEL=${settings.logLevel}`,
    );
  }
  printSteps(run, settings);
  printMemory(run);

  const goals: Record<string, Goal[]> = {};
  for (const mode of run.modes) {
    console.log(`\nGoals of issue 16, ${mode.title} (goals, not assertions):`);
    if (mode.skipped) {
      console.log(`SKIPPED: ${mode.skipped}`);
      continue;
    }
    const rows = goalsFor(mode, run);
    goals[mode.id] = rows;
    console.log(
      table(
        ['goal', 'measured', 'limit', 'from', ''],
        rows.map((g) => [g.goal, figure(g.value, g.unit), figure(g.limit, g.unit), g.detail, mark(g)]),
      ),
    );
    const passed = rows.filter((g) => g.pass).length;
    console.log(`${passed} of ${rows.length} PASS`);
    if (mode.fullPath) {
      const { consumeLogs, relayRequests } = mode.fullPath;
      console.log(
        `Full path check: ${consumeLogs.toLocaleString('en')} consume logs, ${relayRequests.toLocaleString('en')} ` +
          `relay requests in /metrics: ${consumeLogs === relayRequests ? 'equal' : 'DIFFERENT'}`,
      );
    }
  }
  if (Object.values(goals).some((rows) => rows.some((g) => g.noisy))) {
    console.log(
      `(noisy: other processes used more than ${NOISY_CPU * 100}% of a core during a step the goal compares)`,
    );
  }
  return goals;
}

export async function writeResults(
  file: string,
  run: Run,
  machine: Machine,
  settings: Settings,
  goals: Record<string, Goal[]>,
  totalSeconds: number,
): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const modes = run.modes.map((mode) => ({ ...mode, goals: goals[mode.id] }));
  const json = {
    date: new Date().toISOString(),
    machine,
    settings,
    totalSeconds: Math.round(totalSeconds),
    modes,
    bareProxyMemory: run.bareMemory,
    pgliteBaseline: run.pglite,
    peakReset: run.peakReset,
    perEventDefinition: PER_EVENT_DEFINITION,
    ...run.steps,
  };
  await writeFile(file, `${JSON.stringify(json, null, 2)}\n`);
}
