/** What one relay benchmark run measured, shared by the goals, the printed report and the JSON file. */
import type { LongStreamResult, RateResult, SaturationResult, StreamResult } from './load.ts';
import type { ModeId } from './modes.ts';
import type { Measured } from './noise.ts';
import type { PGliteBaseline } from './pglite-baseline.ts';

export const DIRECT = 'direct';
export const BARE = 'bare proxy';

export interface Steps {
  rates: Array<Measured<RateResult>>;
  streams: Array<Measured<StreamResult>>;
  longStreams: Array<Measured<LongStreamResult>>;
  /** Per target, its median round (by req/s) of saturatedRounds. */
  saturated: Array<Measured<SaturationResult>>;
  /** Every saturated round: round r of each target ran right after round r of the one before it. */
  saturatedRounds: Array<Measured<SaturationResult> & { round: number }>;
}

/** RSS figures of one server process, in bytes (undefined when /proc could not be read). */
export interface Memory {
  /** After set-up and a few idle seconds. */
  idle: number | undefined;
  /** Peak (VmHWM) from start to the end of the idle wait. */
  startupPeak: number | undefined;
  /** Peak from the end of the warm-up to the end of the last step. */
  underLoad: number | undefined;
}

export interface ModeRun {
  id: ModeId;
  title: string;
  /** Why the mode was not measured; the rest is then absent. */
  skipped?: string;
  database?: string;
  cluster?: string;
  memory?: Memory;
  fullPath?: { consumeLogs: number; relayRequests: number };
}

export interface Run {
  steps: Steps;
  bareMemory: Memory;
  /** Whether VmHWM could be reset after the warm-up (else peaks under load are sampled RSS). */
  peakReset: boolean;
  /** The bare PGlite process, when the embedded mode ran. */
  pglite?: PGliteBaseline;
  modes: ModeRun[];
}

/** The step of `target` in `list` that satisfies `pick`. */
export function stepOf<T extends { target: string }>(
  list: T[],
  target: string,
  pick: (step: T) => boolean = () => true,
): T | undefined {
  return list.find((step) => step.target === target && pick(step));
}
