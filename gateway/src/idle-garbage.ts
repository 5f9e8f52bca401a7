import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';

/**
 * Memory given back when the gateway rests. A burst of allocation (start-up, an operator's setup, a busy
 * minute) grows V8's young generation to its maximum, and V8 keeps it, with the burst's garbage: it shrinks
 * the heap only in a collection at a low allocation rate, and a resting gateway allocates too little to run
 * one. The inspector protocol (in process, no port) asks V8 for exactly that collection.
 */
export async function collectGarbage(): Promise<void> {
  try {
    const { Session } = await import('node:inspector/promises');
    const session = new Session();
    session.connect();
    try {
      await session.post('HeapProfiler.collectGarbage');
    } finally {
      session.disconnect();
    }
  } catch {
    // A Node built without the inspector: the memory stays as it is.
  }
}

/** The young generation's resident size: what a burst grows and a memory-reducing collection gives back. */
export function youngGeneration(): number {
  return v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.physical_space_size ?? 0;
}

/** An interval in which the event loop was busier than this is not rest. */
const RESTING_UTILIZATION = 0.05;

export interface RestingCollection {
  /** How often the event loop is looked at. */
  intervalMs?: number;
  /** How many intervals in a row it must rest before a collection. */
  restingIntervals?: number;
  /**
   * The least time between two collections at rest: a gateway under light steady traffic rests between its
   * requests, and a full collection every few seconds would be a pause in its answers for nothing.
   */
  minimumSpacingMs?: number;
}

/**
 * Collects once when the event loop has rested for `restingIntervals` intervals in a row and the young
 * generation has grown to more than twice what the last collection left, at most once per
 * `minimumSpacingMs`. A busy gateway is never interrupted, and a resting one collects once per burst.
 * Returns what stops the watch; the timer never keeps the process alive.
 */
export function collectGarbageWhenResting({
  intervalMs = 1000,
  restingIntervals = 3,
  minimumSpacingMs = 60_000,
}: RestingCollection = {}): () => void {
  let floor = youngGeneration();
  let last = performance.eventLoopUtilization();
  let rested = 0;
  let collectedAt = Number.NEGATIVE_INFINITY;
  let collecting = false;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    rested = performance.eventLoopUtilization(now, last).utilization > RESTING_UTILIZATION ? 0 : rested + 1;
    last = now;
    if (collecting || rested < restingIntervals || youngGeneration() <= 2 * floor) return;
    if (performance.now() - collectedAt < minimumSpacingMs) return;
    collecting = true;
    void collectGarbage().finally(() => {
      floor = youngGeneration();
      collectedAt = performance.now();
      collecting = false;
    });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
