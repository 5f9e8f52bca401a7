/**
 * Noise handling of the relay benchmark. Every step reports the CPU the machine's other processes used
 * meanwhile: on a shared machine their time slices show up as p99 latency. A step during which they used
 * more than NOISY_CPU of a core is run again (at most RETRIES more times, within a time budget per kind
 * of step) and the quietest attempt is kept; goals that compare a noisy step say so.
 */
import { cpuSecondsOf, machineBusySeconds } from './processes.ts';

/** A step during which other processes used more than this share of a core is run again ... */
export const NOISY_CPU = 0.2;
/** ... at most this many more times, and only while the repeats stay within their time budget. */
const RETRIES = 2;

export interface Cpu {
  /** Share of one core used by the proxy or gateway under test. */
  server: number | undefined;
  /** Share of one core used by the load generator and the mock together. */
  load: number;
  /** Cores' worth of CPU used by the gateways' Postgres backends and Redis (0 on the embedded ones). */
  services: number;
  /** Cores' worth of CPU used by processes that are not the benchmark's (other work on the machine). */
  other: number;
}

export interface Measured<T> {
  target: string;
  result: T;
  cpu: Cpu;
  /** How many times the step ran (more than once when other processes were busy). */
  attempts: number;
}

/** The benchmark's processes, as the CPU accounting needs them. */
export interface Processes {
  /** The mock upstream (its CPU is load side). */
  mock: number;
  /** Every server the benchmark started (bare proxy, gateways): their CPU is never "other". */
  servers: number[];
  /** The server under test, per target name (none for direct). */
  serverOf(target: string): number | undefined;
  /** Postgres backends and the Redis server the gateways use right now. */
  services(): Promise<number[]>;
}

/** CPU seconds each process used since `before` (a process that went away counts nothing). */
function cpuSince(pids: number[], before: number[]): number {
  return pids.reduce((sum, pid, i) => sum + Math.max(0, cpuSecondsOf(pid) - before[i]!), 0);
}

async function withCpu<T>(
  processes: Processes,
  server: number | undefined,
  step: () => Promise<T>,
): Promise<{ result: T; cpu: Cpu }> {
  const ours = [processes.mock, ...processes.servers];
  const services = await processes.services();
  const started = performance.now();
  const oursBefore = ours.map(cpuSecondsOf);
  const servicesBefore = services.map(cpuSecondsOf);
  const serverBefore = server ? cpuSecondsOf(server) : 0;
  const mockBefore = cpuSecondsOf(processes.mock);
  const selfBefore = process.cpuUsage();
  const machineBefore = machineBusySeconds();
  const result = await step();
  const elapsed = (performance.now() - started) / 1000;
  const machine = machineBusySeconds() - machineBefore;
  const self = process.cpuUsage(selfBefore);
  const selfSeconds = (self.user + self.system) / 1e6;
  const oursSeconds = selfSeconds + cpuSince(ours, oursBefore);
  const servicesSeconds = cpuSince(services, servicesBefore);
  return {
    result,
    cpu: {
      server: server ? (cpuSecondsOf(server) - serverBefore) / elapsed : undefined,
      load: (selfSeconds + cpuSecondsOf(processes.mock) - mockBefore) / elapsed,
      services: servicesSeconds / elapsed,
      other: Math.max(0, (machine - oursSeconds - servicesSeconds) / elapsed),
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs one step of a kind for a target, again while other processes were busy, and keeps the quietest run. */
export type Measure<Kind extends string> = <T>(
  kind: Kind,
  target: string,
  stepSeconds: number,
  step: () => Promise<T>,
) => Promise<Measured<T>>;

/**
 * A measuring function with retry budgets in seconds per kind of step (shares of the whole budget, so
 * noise early in the run cannot use it all up).
 */
export function measurer<Kind extends string>(
  processes: Processes,
  budgets: Record<Kind, number>,
  log: (message: string) => void,
): Measure<Kind> {
  const left = { ...budgets };
  return async <T>(kind: Kind, target: string, stepSeconds: number, step: () => Promise<T>) => {
    let best: Measured<T> | undefined;
    for (let attempt = 1; attempt <= 1 + RETRIES; attempt++) {
      const run = await withCpu(processes, processes.serverOf(target), step);
      if (!best || run.cpu.other < best.cpu.other) best = { target, ...run, attempts: attempt };
      else best.attempts = attempt;
      if (run.cpu.other <= NOISY_CPU || left[kind] < stepSeconds) break;
      left[kind] -= stepSeconds;
      log(`  other processes used ${Math.round(run.cpu.other * 100)}% of a core meanwhile; again`);
      await sleep(500);
    }
    return best!;
  };
}

/** Whether other processes were busy during any of the steps a goal compares (a missing step counts). */
export function noisy(...steps: Array<{ cpu: Cpu } | undefined>): boolean {
  return steps.some((step) => !step || step.cpu.other > NOISY_CPU);
}
