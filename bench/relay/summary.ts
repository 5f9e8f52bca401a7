/**
 * The README's "Latest numbers" block, from one run: the machine and commit, how busy the rest of the
 * machine was, the goals with a column per mode, and the main figures per target. Written to
 * bench/results/relay-latest.md, to paste into README.md as it is.
 */
import { figure, mib, ms, us } from './format.ts';
import { type Goal, perEventAdded } from './goals.ts';
import { NOISY_CPU } from './noise.ts';
import type { Machine, Settings } from './report.ts';
import { BARE, DIRECT, type Memory, type Run, stepOf } from './results.ts';

function cell(goal: Goal | undefined): string {
  if (!goal) return 'skipped';
  const rule = goal.row.startsWith('saturated') ? '≥' : '≤';
  return (
    `${goal.pass ? 'PASS' : 'MISS'}${goal.noisy ? ' (noisy)' : ''}: ${figure(goal.value, goal.unit)} ` +
    `(limit ${rule} ${figure(goal.limit, goal.unit)})`
  );
}

const whole = (v: number) => Math.round(v).toLocaleString('en');

export function latestNumbers(
  run: Run,
  machine: Machine,
  settings: Settings,
  goals: Record<string, Goal[]>,
  totalSeconds: number,
): string {
  const lines: string[] = [];
  const kind = settings.quick ? '`BENCH_QUICK=1` run' : 'full run';
  lines.push(
    `Latest ${kind}: commit \`${machine.commit}\`, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ` +
      `${Math.round(totalSeconds)} s wall time; ${machine.cores} cores (${machine.cpu}), ${machine.memoryGiB} GiB, ` +
      `Node ${machine.node.replace(/^v/, '')}, Linux ${machine.kernel}; ${machine.pinned}.`,
  );
  const steps = [...run.steps.rates, ...run.steps.streams, ...run.steps.longStreams, ...run.steps.saturated];
  const others = steps.map((step) => step.cpu.other);
  const quiet = others.filter((other) => other <= NOISY_CPU).length;
  const mean = others.reduce((sum, other) => sum + other, 0) / others.length;
  lines.push(
    '',
    `Other work on the machine used up to ${Math.round(Math.max(...others) * 100)}% of a core during a step ` +
      `(mean ${Math.round(mean * 100)}%); ${quiet} of ${others.length} steps were quiet (under ` +
      `${NOISY_CPU * 100}%). Memory figures do not depend on it; latency and req/s do.`,
  );

  const modes = run.modes;
  lines.push('', `| goal (issue 16) | ${modes.map((mode) => mode.title.replace('gateway, ', '')).join(' | ')} |`);
  lines.push(`|---|${modes.map(() => '---').join('|')}|`);
  const rows = Math.max(0, ...modes.map((mode) => goals[mode.id]?.length ?? 0));
  for (let i = 0; i < rows; i++) {
    const label = modes.map((mode) => goals[mode.id]?.[i]?.row).find(Boolean);
    lines.push(`| ${label} | ${modes.map((mode) => cell(goals[mode.id]?.[i])).join(' | ')} |`);
  }

  const noisy = (step: { cpu: { other: number } } | undefined) => (!step || step.cpu.other > NOISY_CPU ? '*' : '');
  const memoryOf = new Map<string, Memory>([[BARE, run.bareMemory]]);
  for (const mode of modes) if (mode.memory) memoryOf.set(mode.title, mode.memory);
  lines.push(
    '',
    '| target | 250 req/s p50 / p99 | 1000 req/s p50 / p99 | stream first byte p50 | 1,000-event stream p50 ' +
      '(added per event) | saturated req/s (server CPU, req/s per server core) | RSS idle / start-up peak / under load |',
    '|---|---|---|---|---|---|---|',
  );
  const targets = [DIRECT, BARE, ...modes.filter((mode) => !mode.skipped).map((mode) => mode.title)];
  for (const target of targets) {
    const rate = (r: number) => stepOf(run.steps.rates, target, (step) => step.result.rate === r);
    const latency = (r: number) => `${ms(rate(r)?.result.p50)} / ${ms(rate(r)?.result.p99)}${noisy(rate(r))}`;
    const stream = stepOf(run.steps.streams, target);
    const long = stepOf(run.steps.longStreams, target);
    const perEvent = target === DIRECT ? '' : ` (${us(perEventAdded(run, target))})`;
    const saturated = stepOf(run.steps.saturated, target);
    const server = saturated?.cpu.server;
    const rps = saturated?.result.rps ?? Number.NaN;
    const share = server ? ` (${Math.round(server * 100)}% CPU, ${whole(rps / server)} per core)` : '';
    const memory = memoryOf.get(target);
    lines.push(
      `| ${target} | ${latency(250)} | ${latency(1000)} | ${ms(stream?.result.ttfb.p50)}${noisy(stream)} | ` +
        `${ms(long?.result.total.p50)}${perEvent}${noisy(long)} | ${whole(rps)}${share}${noisy(saturated)} | ` +
        `${memory ? `${mib(memory.idle)} / ${mib(memory.startupPeak)} / ${mib(memory.underLoad)}` : '–'} |`,
    );
  }
  if (run.pglite) {
    lines.push(`| bare PGlite process | | | | | | ${mib(run.pglite.idleRss)} / ${mib(run.pglite.peakRss)} / – |`);
  }
  return `${lines.join('\n')}\n`;
}
