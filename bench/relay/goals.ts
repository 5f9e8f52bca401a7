/**
 * Issue 16's goals for one mode of the gateway, each compared with the bare proxy measured in the same
 * run on the same core. Goals, not assertions: a MISS is reported, never thrown.
 */

import { MiB, ms, type Unit } from './format.ts';
import type { ModeId } from './modes.ts';
import { noisy } from './noise.ts';
import { BARE, DIRECT, type ModeRun, type Run, type Steps, stepOf } from './results.ts';

const GOALS = {
  /** Saturated req/s of the gateway as a share of the bare proxy's, per mode. */
  saturatedShare: { postgres: 0.5, embedded: 0.45 } satisfies Record<ModeId, number>,
  rates: [250, 1000],
  addedP50Ms: 0.3,
  addedP99Factor: 2,
  streamTtfbMs: 0.5,
  /** A long stream's added time per event may exceed the bare proxy's by this share. */
  perEventShare: 0.05,
  /** Idle RSS on Postgres + Redis. */
  idleRssPostgres: 150 * MiB,
  /** Idle RSS on the embedded database, above a bare PGlite process's. */
  idleOverPGlite: 100 * MiB,
  startupPeakFactor: 1.5,
  loadPeakFactor: 1.5,
};

export interface Goal {
  /** What is compared, the same in every mode (the README's table has a row per goal and a column per mode). */
  row: string;
  /** The goal with its rule, for this mode. */
  goal: string;
  unit: Unit;
  /** The measured figure and the goal's limit for it, in `unit` (NaN when a step is missing). */
  value: number;
  limit: number;
  /** The figures the limit comes from, for the reader. */
  detail: string;
  pass: boolean;
  /** Other processes were busy during a step the goal compares. */
  noisy: boolean;
}

/** A goal whose value must stay at or under its limit. */
function atMost(goal: Omit<Goal, 'pass'>): Goal {
  return { ...goal, pass: goal.value <= goal.limit };
}

/** How the long-stream figure is computed, printed under the goals. */
export const PER_EVENT_DEFINITION =
  'per-event added = (p50 whole-stream time through the target - p50 direct) / content events, over ' +
  "streams sent one at a time; the mock writes its events back to back, so the time is the relay's work";

/** A long stream's added time per content event through `target`, in ms. */
export function perEventAdded(run: Run, target: string): number {
  const through = stepOf(run.steps.longStreams, target)?.result;
  const direct = stepOf(run.steps.longStreams, DIRECT)?.result;
  if (!through || !direct) return Number.NaN;
  return (through.total.p50 - direct.total.p50) / through.events;
}

/** The gateway's req/s as a share (%) of the bare proxy's, per saturated round both ran. */
export function pairedShares(rounds: Steps['saturatedRounds'], gateway: string): number[] {
  const shares: number[] = [];
  for (const step of rounds) {
    if (step.target !== gateway) continue;
    const bare = rounds.find((other) => other.target === BARE && other.round === step.round);
    if (bare && bare.result.rps > 0) shares.push((step.result.rps / bare.result.rps) * 100);
  }
  return shares;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export function goalsFor(mode: ModeRun, run: Run): Goal[] {
  const gateway = mode.title;
  const { steps } = run;
  const goals: Goal[] = [];

  const bareSat = stepOf(steps.saturated, BARE);
  const gatewaySat = stepOf(steps.saturated, gateway);
  const minShare = GOALS.saturatedShare[mode.id];
  const bareRps = bareSat?.result.rps ?? Number.NaN;
  const gatewayRps = gatewaySat?.result.rps ?? Number.NaN;
  const perCore = (step: typeof bareSat) => (step?.result.rps ?? Number.NaN) / (step?.cpu.server ?? Number.NaN);
  // Round r of the gateway ran right after round r of the bare proxy: the median of the per-round ratios is
  // what a drifting machine moves least.
  const roundShares = pairedShares(steps.saturatedRounds, gateway);
  const share = roundShares.length > 0 ? median(roundShares) : (gatewayRps / bareRps) * 100;
  goals.push({
    row: 'saturated req/s, share of bare',
    goal: `saturated req/s >= ${minShare * 100}% of bare`,
    unit: '%',
    value: share,
    limit: minShare * 100,
    detail:
      `median of rounds ${roundShares.map((s) => `${s.toFixed(1)}%`).join(', ')}; median round ` +
      `${Math.round(gatewayRps)} vs bare ${Math.round(bareRps)} req/s; ` +
      `per server core ${Math.round((perCore(gatewaySat) / perCore(bareSat)) * 100)}%`,
    pass: share >= minShare * 100,
    noisy: noisy(bareSat, gatewaySat),
  });

  for (const rate of GOALS.rates) {
    const atRate = (step: { result: { rate: number } }) => step.result.rate === rate;
    const [d, b, g] = [DIRECT, BARE, gateway].map((t) => stepOf(steps.rates, t, atRate));
    const added = (step: typeof g, q: 'p50' | 'p99') => (step?.result[q] ?? Number.NaN) - (d?.result[q] ?? Number.NaN);
    const rateNoisy = noisy(d, b, g);
    goals.push(
      atMost({
        row: `${rate} req/s: added p50`,
        goal: `${rate} req/s: added p50 <= bare + ${GOALS.addedP50Ms} ms`,
        unit: 'ms',
        value: added(g, 'p50'),
        limit: added(b, 'p50') + GOALS.addedP50Ms,
        detail: `bare ${ms(added(b, 'p50'))}`,
        noisy: rateNoisy,
      }),
      atMost({
        row: `${rate} req/s: added p99`,
        goal: `${rate} req/s: added p99 <= ${GOALS.addedP99Factor} x bare`,
        unit: 'ms',
        value: added(g, 'p99'),
        limit: added(b, 'p99') * GOALS.addedP99Factor,
        detail: `bare ${ms(added(b, 'p99'))}`,
        noisy: rateNoisy,
      }),
    );
  }

  const [ds, bs, gs] = [DIRECT, BARE, gateway].map((t) => stepOf(steps.streams, t));
  const ttfb = (step: typeof gs) => (step?.result.ttfb.p50 ?? Number.NaN) - (ds?.result.ttfb.p50 ?? Number.NaN);
  goals.push(
    atMost({
      row: 'stream: added first-byte p50',
      goal: `stream: added first-byte p50 <= bare + ${GOALS.streamTtfbMs} ms`,
      unit: 'ms',
      value: ttfb(gs),
      limit: ttfb(bs) + GOALS.streamTtfbMs,
      detail: `bare ${ms(ttfb(bs))}`,
      noisy: noisy(ds, bs, gs),
    }),
  );

  const events = stepOf(steps.longStreams, gateway)?.result.events ?? Number.NaN;
  const barePerEvent = perEventAdded(run, BARE) * 1000;
  goals.push(
    atMost({
      row: `${events}-event stream: added per event`,
      goal: `${events}-event stream: added per event <= bare + ${GOALS.perEventShare * 100}%`,
      unit: 'µs',
      value: perEventAdded(run, gateway) * 1000,
      limit: barePerEvent * (1 + GOALS.perEventShare),
      detail: `bare ${barePerEvent.toFixed(1)}`,
      noisy: noisy(...[DIRECT, BARE, gateway].map((t) => stepOf(steps.longStreams, t))),
    }),
  );

  goals.push(...memoryGoals(mode, run));
  return goals;
}

function memoryGoals(mode: ModeRun, run: Run): Goal[] {
  const inMiB = (bytes: number | undefined) => (bytes ?? Number.NaN) / MiB;
  const idle = inMiB(mode.memory?.idle);
  const goals: Goal[] = [];
  if (mode.id === 'postgres') {
    goals.push(
      atMost({
        row: 'idle RSS',
        goal: `idle RSS <= ${inMiB(GOALS.idleRssPostgres)} MiB`,
        unit: 'MiB',
        value: idle,
        limit: inMiB(GOALS.idleRssPostgres),
        detail: '',
        noisy: false,
      }),
    );
  } else {
    const pgliteIdle = inMiB(run.pglite?.idleRss);
    goals.push(
      atMost({
        row: 'idle RSS',
        goal: `idle RSS <= bare PGlite process + ${inMiB(GOALS.idleOverPGlite)} MiB`,
        unit: 'MiB',
        value: idle,
        limit: pgliteIdle + inMiB(GOALS.idleOverPGlite),
        detail: `bare PGlite ${pgliteIdle.toFixed(0)}`,
        noisy: false,
      }),
    );
  }
  const bareIdle = inMiB(run.bareMemory.idle);
  const barePeak = inMiB(run.bareMemory.underLoad);
  goals.push(
    atMost({
      row: 'start-up peak RSS',
      goal: `start-up peak RSS <= ${GOALS.startupPeakFactor} x idle`,
      unit: 'MiB',
      value: inMiB(mode.memory?.startupPeak),
      limit: idle * GOALS.startupPeakFactor,
      detail: `idle ${idle.toFixed(0)}`,
      noisy: false,
    }),
    atMost({
      row: 'peak RSS under load',
      goal: `peak RSS under load <= ${GOALS.loadPeakFactor} x bare + (idle - bare idle)`,
      unit: 'MiB',
      value: inMiB(mode.memory?.underLoad),
      limit: barePeak * GOALS.loadPeakFactor + (idle - bareIdle),
      detail: `bare ${barePeak.toFixed(0)}, idle ${idle.toFixed(0)} - ${bareIdle.toFixed(0)}`,
      noisy: false,
    }),
  );
  return goals;
}
