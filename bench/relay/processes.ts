/**
 * Child processes of the relay benchmark: started on a chosen CPU core (through `taskset` when the
 * machine has it and more than one core), watched for memory and CPU time through /proc, and stopped
 * on every way out of the benchmark.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Cores for the load side and the server side, when the machine can separate them. */
export const pinning = (() => {
  const cores = os.availableParallelism();
  const enabled = process.env.BENCH_NO_PIN !== '1' && cores >= 2 && hasTaskset();
  return { enabled, cores, loadCore: 0, serverCore: 1 };
})();

/**
 * BENCH_NICE: a scheduling priority (-20..19) for every process of the benchmark. On a machine shared
 * with other work, a negative one (root only) lets the benchmark's processes run as soon as they wake
 * instead of waiting for another process's time slice, which otherwise shows up as p99 latency.
 */
export const niceness = (() => {
  const raw = process.env.BENCH_NICE;
  if (raw === undefined || raw === '' || raw === '0') return 0;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < -20 || value > 19)
    throw new Error('BENCH_NICE must be an integer from -20 to 19');
  return value;
})();

/** Pins this process (every thread) to a core and gives it the benchmark's priority. */
export function pinSelf(core: number): void {
  if (niceness !== 0) {
    for (const thread of readdirSync(`/proc/${process.pid}/task`)) os.setPriority(Number(thread), niceness);
  }
  if (!pinning.enabled) return;
  execFileSync('taskset', ['-a', '-p', '-c', String(core), String(process.pid)], { stdio: 'ignore' });
}

const children = new Set<ChildProcess>();

export interface Child {
  name: string;
  process: ChildProcess;
  pid: number;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  core: number;
  env?: Record<string, string>;
  /** Where stdout and stderr go: a file (the gateway's log) or a pipe read by `waitForLine`. */
  logFile?: string;
}

/** What goes before `node` to run it on a core with the benchmark's priority (taskset, nice; both exec). */
export function onCore(core: number): string[] {
  const prefix: string[] = [];
  if (niceness !== 0) prefix.push('nice', '-n', String(niceness));
  if (pinning.enabled) prefix.push('taskset', '-c', String(core));
  return prefix;
}

/** Switches of the gateway's own measurements, passed on when set (TOLLGATE_EMBEDDED_STATEMENTS). */
function measuring(): Record<string, string> {
  const value = process.env.TOLLGATE_EMBEDDED_STATEMENTS;
  return value ? { TOLLGATE_EMBEDDED_STATEMENTS: value } : {};
}

/** Starts `node <args>` on a core; the child's pid is node's own (nice and taskset exec it). */
export function spawnNode(name: string, args: string[], options: SpawnOptions): Child {
  const [command, ...rest] = [...onCore(options.core), process.execPath, ...args] as [string, ...string[]];
  const fd = options.logFile ? openSync(options.logFile, 'a') : undefined;
  const child = spawn(command, rest, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...measuring(), ...options.env },
    stdio: ['pipe', fd ?? 'pipe', fd ?? 'inherit'],
  });
  if (fd !== undefined) closeSync(fd);
  children.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  if (child.pid === undefined) throw new Error(`${name} did not start`);
  return {
    name,
    process: child,
    pid: child.pid,
    exited,
    async stop(signal = 'SIGTERM', graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin?.end();
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Kills what is still running, at once; for the last-resort exit paths. */
export function killAll(): void {
  for (const child of children) child.kill('SIGKILL');
}

/** Waits for the first JSON line on the child's stdout that satisfies `accept`. */
export function waitForJson<T>(child: Child, accept: (line: any) => T | undefined, timeoutMs = 20_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const out = child.process.stdout;
    if (!out) return reject(new Error(`${child.name}: no stdout pipe`));
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`${child.name} did not start within ${timeoutMs} ms`)), timeoutMs);
    const onExit = (code: number | null) => reject(new Error(`${child.name} exited with ${code} before it was ready`));
    child.process.once('exit', onExit);
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          continue;
        }
        const value = accept(parsed);
        if (value !== undefined) {
          clearTimeout(timer);
          child.process.off('exit', onExit);
          out.off('data', onData);
          out.resume();
          return resolve(value);
        }
      }
    };
    out.on('data', onData);
  });
}

/** Polls a log file of JSON lines until one satisfies `accept` (the gateway logs to a file, not to us). */
export async function waitForLogLine<T>(
  child: Child,
  file: string,
  accept: (line: any) => T | undefined,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null) {
      throw new Error(`${child.name} exited with ${child.process.exitCode}; its log: ${readFileSync(file, 'utf8')}`);
    }
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        const value = accept(JSON.parse(line));
        if (value !== undefined) return value;
      } catch {}
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${child.name} did not start within ${timeoutMs} ms`);
}

/**
 * The process and its descendants: the gateway runs its embedded database in a process of its own
 * (gateway/src/store/embedded-client.ts), and what that costs is the gateway's cost.
 */
export function processTree(pid: number): number[] {
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    try {
      for (const task of readdirSync(`/proc/${tree[i]}/task`)) {
        const children = readFileSync(`/proc/${tree[i]}/task/${task}/children`, 'utf8').split(' ').filter(Boolean);
        tree.push(...children.map(Number));
      }
    } catch {}
  }
  return tree;
}

/** A field of /proc/<pid>/status in bytes (VmRSS: now, VmHWM: peak), or undefined if unreadable. */
function ownMemoryOf(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A field of /proc/<pid>/status in bytes summed over the process and its descendants (VmRSS: now, VmHWM:
 * peak; a sum of peaks is an upper bound of the tree's peak), or undefined if the process is gone.
 */
export function memoryOf(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  const [own, ...children] = processTree(pid).map((member) => ownMemoryOf(member, field));
  if (own === undefined) return undefined;
  return children.reduce<number>((sum, value) => sum + (value ?? 0), own);
}

/** Resets the peak RSS (VmHWM) of the process and its descendants, so a later peak is the peak under load. */
export function resetPeak(pid: number): boolean {
  try {
    for (const member of processTree(pid)) writeFileSync(`/proc/${member}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

const ticksPerSecond = 100;

/** CPU seconds (user + system) one process has used so far, from /proc/<pid>/stat. */
export function ownCpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return 0;
  }
}

/** CPU seconds the process and its living descendants have used so far. */
export function cpuSecondsOf(pid: number): number {
  return processTree(pid).reduce((sum, member) => sum + ownCpuSecondsOf(member), 0);
}

/** CPU seconds the whole machine has spent busy (every process, every core), from /proc/stat. */
export function machineBusySeconds(): number {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    return (user + nice + system + irq + softirq + steal) / ticksPerSecond;
  } catch {
    return 0;
  }
}
