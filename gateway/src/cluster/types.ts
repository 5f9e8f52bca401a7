/**
 * State shared by every gateway pod: Redis when REDIS_URL is set, in-process otherwise
 * (then "every pod" is this one process).
 */
export interface ClusterState {
  readonly kind: 'redis' | 'memory';
  readonly bus: Bus;
  readonly counters: SlidingWindowCounters;
  readonly budgets: WindowBudgets;
  readonly locks: Locks;
  readonly kv: KeyValueStore;
  readonly capped: CappedMaps;
  /** Throws when the backing service does not answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Fire-and-forget messages to every subscriber on every pod, the publisher's own included.
 * Handlers run later, never inside `publish`; a handler that throws is reported as a process
 * warning and does not affect other handlers. Nothing is delivered after unsubscribing.
 */
export interface Bus {
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is active; the returned function unsubscribes. */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;
}

/**
 * Exact sliding-window counters (a log of hit times per key), atomic across pods. A hit counts
 * while it is younger than `windowMs`. Use one window per key: writes drop hits older than
 * their own window, and a key vanishes once its newest hit is that old.
 */
export interface SlidingWindowCounters {
  /**
   * Records a hit only if fewer than `limit` hits are in the last `windowMs`, atomically.
   * `count` is the number of hits in the window afterwards (this one included when allowed).
   */
  take(key: string, windowMs: number, limit: number): Promise<{ allowed: boolean; count: number }>;
  /** Records a hit unconditionally and returns the number of hits in the window, this one included. */
  add(key: string, windowMs: number): Promise<number>;
  /** Hits in the last `windowMs`, recording nothing. */
  count(key: string, windowMs: number): Promise<number>;
  /**
   * `take` on `key`, unless `gate.key` (read, never recorded) already holds `gate.limit` hits in the same
   * window: two caps checked in one atomic step, one round trip. `refusedBy` names the cap that refused.
   */
  takeGated(
    key: string,
    windowMs: number,
    limit: number,
    gate: { key: string; limit: number },
  ): Promise<{ allowed: boolean; refusedBy?: 'gate' | 'limit' }>;
}

/** One charge of an admission: `cost` units against `key`, whose window may hold at most `limit`. */
export interface BudgetCharge {
  key: string;
  limit: number;
  cost: number;
}

export type BudgetAdmission =
  | { admitted: true; ticket: string }
  /** `refused` indexes the first charge that did not fit; `retryAfterMs` is when enough of its window frees. */
  | { admitted: false; refused: number; retryAfterMs: number };

/**
 * Weighted sliding windows, atomic across pods: each key holds charges (a cost at a time) and a
 * charge counts while it is younger than `windowMs`. Rate limits in requests (cost 1) and in tokens
 * (cost = an estimate, corrected later) per minute. Use one window per key. `at` (milliseconds) is
 * an injected clock for tests; without it the backing service's clock is used (Redis's for every pod).
 */
export interface WindowBudgets {
  /**
   * Records every charge under one ticket, or none: all-or-nothing, so that a request refused by
   * one limit takes nothing from the others. A charge fits when its key's window sum plus its cost
   * stays within its limit; a cost above the limit never fits (`retryAfterMs` is then the window).
   */
  admit(charges: readonly BudgetCharge[], windowMs: number, at?: number): Promise<BudgetAdmission>;
  /**
   * Adds `delta` (negative to give back) to the ticket's cost under each key, never below 0, while the
   * charge is still in its window; a charge that has left its window is not changed.
   */
  correct(ticket: string, corrections: readonly { key: string; delta: number }[], at?: number): Promise<void>;
}

/** Named leases with a time to live: at most one holder per name at a time, across pods. */
export interface Locks {
  /** Takes the lease if nobody holds it; null if somebody does. */
  acquire(name: string, ttlMs: number): Promise<Lease | null>;
}

export interface Lease {
  readonly name: string;
  /** Extends the lease to `ttlMs` from now; false if it was lost (it expired, taken by another holder or not). */
  renew(ttlMs: number): Promise<boolean>;
  /** Gives the lease up if still held; never releases another holder's lease. */
  release(): Promise<void>;
}

/**
 * Short-lived strings that one pod writes and another reads: verification codes, reset tokens,
 * OAuth `state` values, login codes. Every key has a time to live (`ttlMs`, positive and finite,
 * else a RangeError); an expired key reads as absent everywhere. Keys live apart from counter
 * and lock names, so the same name can be used in each.
 */
export interface KeyValueStore {
  /** Stores `value` under `key` for `ttlMs`, replacing any previous value (and its time to live). */
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /**
   * Stores only if the key is absent; false if it already exists (e.g. a resend lock), and then
   * neither the value nor its time to live changes. Atomic: of racing callers, one gets true.
   */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  get(key: string): Promise<string | undefined>;
  /** Reads and deletes in one atomic step: a one-time code can be consumed once, even by two pods at once. */
  take(key: string): Promise<string | undefined>;
  /** Removes the key; a key that is absent already is fine. */
  delete(key: string): Promise<void>;
  /** Whole milliseconds left before the key expires, or undefined if absent. */
  ttl(key: string): Promise<number | undefined>;
}

/**
 * Named maps of short-lived strings with a cap on their size (channel affinity: key -> channel). Every
 * entry has its own time to live; once a write leaves a map with more than `maxEntries` live entries,
 * the surplus goes: in Redis the entries that would expire soonest, in process the least recently
 * written. Maps live apart from the key-value store, counters and locks.
 */
export interface CappedMaps {
  get(map: string, key: string): Promise<string | undefined>;
  /** Stores `value` under `key` for `ttlMs` (replacing it and its time to live), then trims the map. */
  set(map: string, key: string, value: string, ttlMs: number, maxEntries: number): Promise<void>;
  /** The live keys of the map (for statistics: it reads the whole index). */
  keys(map: string): Promise<string[]>;
  /** Removes every entry of the map (only keys starting with `prefix` when given); answers how many were live. */
  clear(map: string, prefix?: string): Promise<number>;
}
