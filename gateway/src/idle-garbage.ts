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

/** A second in which the event loop was busier than this is not rest. */
const RESTING_UTILIZATION = 0.05;

/**
 * Every `intervalMs`, when the event loop was resting over the last interval and the young generation has
 * grown to more than twice what the last collection left, collects once. A busy gateway is never
 * interrupted (its loop is not resting), and a resting one collects once per burst, not every interval.
 * Returns what stops the watch; the timer never keeps the process alive.
 */
export function collectGarbageWhenResting(intervalMs = 1000): () => void {
  let floor = youngGeneration();
  let last = performance.eventLoopUtilization();
  let collecting = false;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    if (collecting || utilization > RESTING_UTILIZATION || youngGeneration() <= 2 * floor) return;
    collecting = true;
    void collectGarbage().finally(() => {
      floor = youngGeneration();
      collecting = false;
    });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
