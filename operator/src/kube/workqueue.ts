/**
 * A work queue in the manner of client-go's: a key waits in the queue at most once, however often it
 * is added; a key being processed is never handed to a second worker, and an add during processing
 * queues it again once `done` is called. Failed keys come back after a per-key exponential backoff;
 * `addAfter` schedules a key (the periodic resync).
 */
/** `ms` spread by ±`fraction` (default 10 %), so that periodic work of many keys does not come in bursts. */
export function jitter(ms: number, fraction = 0.1, random: () => number = Math.random): number {
  return Math.round(ms * (1 - fraction + 2 * fraction * random()));
}

export interface WorkQueueOptions {
  /** First retry delay of a failing key. */
  baseDelayMs?: number;
  /** Longest retry delay. */
  maxDelayMs?: number;
  /** Called whenever the number of keys ready to process changes. */
  onDepth?: (depth: number) => void;
}

export class WorkQueue {
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #onDepth: (depth: number) => void;
  readonly #queue: string[] = [];
  readonly #queued = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  readonly #waiters: Array<(key: string | undefined) => void> = [];
  #shutDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.#baseDelayMs = options.baseDelayMs ?? 5;
    this.#maxDelayMs = options.maxDelayMs ?? 300_000;
    this.#onDepth = options.onDepth ?? (() => {});
  }

  /** Keys ready to be processed. */
  get depth(): number {
    return this.#queue.length;
  }

  get shutDown(): boolean {
    return this.#shutDown;
  }

  add(key: string): void {
    if (this.#shutDown) return;
    if (this.#processing.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#queued.has(key)) return;
    const waiter = this.#waiters.shift();
    if (waiter) {
      this.#processing.add(key);
      waiter(key);
      return;
    }
    this.#queued.add(key);
    this.#queue.push(key);
    this.#onDepth(this.#queue.length);
  }

  /** Adds the key after `delayMs`; an earlier pending schedule of the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.#shutDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + delayMs;
    const pending = this.#timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, delayMs);
    this.#timers.set(key, { at, timer });
  }

  /** Adds the key after its backoff: base × 2^(failures so far), at most the maximum. */
  addRateLimited(key: string): number {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    const delay = Math.min(this.#baseDelayMs * 2 ** Math.min(failures, 40), this.#maxDelayMs);
    this.addAfter(key, delay);
    return delay;
  }

  /** Resets the key's backoff (after it succeeded). */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** The next key to process, waiting for one; undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    if (this.#shutDown) return Promise.resolve(undefined);
    const key = this.#queue.shift();
    if (key !== undefined) {
      this.#queued.delete(key);
      this.#processing.add(key);
      this.#onDepth(this.#queue.length);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Marks the key processed; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    this.#processing.delete(key);
    if (this.#dirty.delete(key)) this.add(key);
  }

  /** Stops handing out keys: waiting `get` calls answer undefined, scheduled adds are dropped. */
  shutdown(): void {
    this.#shutDown = true;
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#queue.length = 0;
    this.#queued.clear();
    this.#dirty.clear();
    for (const waiter of this.#waiters.splice(0)) waiter(undefined);
    this.#onDepth(0);
  }
}
