import { writeFileSync } from 'node:fs';

/**
 * A tally of the statements the embedded database runs, for measuring what reaches it per request:
 * count, wall time and CPU time per statement (its text, whitespace collapsed, cut at 100 characters; on
 * a shared core the wall time includes waiting for it, the CPU time does not), written as JSON
 * to the file TOLLGATE_EMBEDDED_STATEMENTS names when the process exits. Off unless that is set, so the
 * database's process pays nothing for it otherwise.
 */
export interface StatementTally {
  /** Runs `run` and counts it under `sql`. */
  time<T>(sql: string, run: () => Promise<T>): Promise<T>;
  /** What was counted so far, the most CPU first (what the file gets at exit). */
  summary(): Array<{ sql: string; count: number; ms: number; cpuMs: number }>;
}

interface Entry {
  count: number;
  ms: number;
  cpuMs: number;
}

export function statementTally(env: NodeJS.ProcessEnv = process.env): StatementTally | undefined {
  const file = env.TOLLGATE_EMBEDDED_STATEMENTS;
  if (!file) return undefined;
  const entries = new Map<string, Entry>();
  const round = (ms: number) => Math.round(ms * 10) / 10;
  const tally: StatementTally = {
    async time(sql, run) {
      const key = sql.replace(/\s+/g, ' ').slice(0, 100);
      const started = performance.now();
      const cpu = process.cpuUsage();
      try {
        return await run();
      } finally {
        const used = process.cpuUsage(cpu);
        const entry = entries.get(key) ?? { count: 0, ms: 0, cpuMs: 0 };
        entry.count++;
        entry.ms += performance.now() - started;
        entry.cpuMs += (used.user + used.system) / 1000;
        entries.set(key, entry);
      }
    },
    summary() {
      const sorted = [...entries].sort((a, b) => b[1].cpuMs - a[1].cpuMs);
      return sorted.map(([sql, e]) => ({ sql, count: e.count, ms: round(e.ms), cpuMs: round(e.cpuMs) }));
    },
  };
  process.once('exit', () => writeFileSync(file, `${JSON.stringify(tally.summary(), null, 1)}\n`));
  return tally;
}
