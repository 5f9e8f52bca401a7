import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';

/**
 * Memory given back when the gateway rests. A burst of allocation (start-up, an operator's setup, the
 * tokenizer's first load, a busy minute) grows V8's heap, the young generation up to its maximum, and V8
 * keeps it, with the burst's garbage: it shrinks the heap only in a collection at a low allocation rate,
 * and a resting gateway allocates too little to run one. The inspector protocol (in process, no port) asks
 * V8 for exactly that collection.
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

/**
 * The heap's resident size, young and old generations and large objects: what a burst grows and a
 * memory-reducing collection gives back.
 */
export function residentHeap(): number {
  return v8.getHeapStatistics().total_physical_size;
}

/**
 * An interval in which the event loop was busier than this is not rest. An idle gateway's timers keep it
 * under 1% even on a busy machine; a chat request costs about 0.7 ms of loop, so 2% is some 25 requests a
 * second on a quiet core: traffic a pause of tens of milliseconds delays only a few requests of.
 */
const RESTING_UTILIZATION = 0.02;

export interface RestingCollection {
  /** How often the event loop is looked at. */
  intervalMs?: number;
  /** How many intervals in a row it must rest before a collection. */
  restingIntervals?: number;
  /**
   * How much the heap must have grown since the last collection left it: less is not worth a pause, and
   * light steady traffic, which rests between its requests, grows it far more slowly than a burst.
   */
  growthBytes?: number;
  /**
   * The most of the time these collections may take: after one that cost d ms of CPU, the next waits
   * d / share. Traffic that comes and goes in bursts then starts at most so many of them on a heap just
   * shrunk (which costs it more young-generation collections while the heap grows back). CPU time, not
   * wall time: on a busy machine a collection waits for the CPU too, and would space the next one out
   * for nothing.
   */
  maxTimeShare?: number;
  /** Told of each collection, for a debug log line. */
  onCollected?: (collection: { ms: number; cpuMs: number; heapBefore: number; heapAfter: number }) => void;
}

/**
 * Collects once the event loop has rested for `restingIntervals` intervals in a row and the heap has grown
 * by `growthBytes` since the last collection (or the start of the watch) left it, and the last collection
 * is long enough ago for `maxTimeShare`. A busy gateway is never interrupted; a resting one collects about
 * a second after a burst ends, once per burst, so its idle memory is back to its floor within seconds.
 * Returns what stops the watch; the timer never keeps the process alive.
 */
export function collectGarbageWhenResting({
  intervalMs = 250,
  restingIntervals = 4,
  growthBytes = 8 * 1024 * 1024,
  maxTimeShare = 0.05,
  onCollected,
}: RestingCollection = {}): () => void {
  let floor = residentHeap();
  let last = performance.eventLoopUtilization();
  let rested = 0;
  let nextAllowed = 0;
  let collecting = false;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    rested = performance.eventLoopUtilization(now, last).utilization > RESTING_UTILIZATION ? 0 : rested + 1;
    last = now;
    if (collecting || rested < restingIntervals || performance.now() < nextAllowed) return;
    const heapBefore = residentHeap();
    if (heapBefore - floor < growthBytes) return;
    collecting = true;
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    void collectGarbage().finally(() => {
      const ended = performance.now();
      const cpu = process.cpuUsage(cpuBefore);
      const cpuMs = (cpu.user + cpu.system) / 1000;
      floor = residentHeap();
      nextAllowed = ended + cpuMs / maxTimeShare;
      collecting = false;
      onCollected?.({ ms: ended - started, cpuMs, heapBefore, heapAfter: floor });
    });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
