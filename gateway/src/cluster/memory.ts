import { type Budget, memoryBudgets } from './memory-budgets.ts';
import { checkDuration, checkLimit, deliver } from './shared.ts';
import type { Bus, CappedMaps, ClusterState, KeyValueStore, Lease, Locks, SlidingWindowCounters } from './types.ts';

/**
 * In-process cluster state, for a single pod without Redis. Instances created with the same
 * namespace in one process share one state, as pods share one Redis; that is what lets a test
 * run two "pods" side by side. Without a namespace an instance has a state of its own.
 */
export interface MemoryClusterStateOptions {
  namespace?: string;
  /** How often, at most, idle counter keys, expired leases and expired values are swept; set by whoever creates the state first. */
  sweepIntervalMs?: number;
}

export interface MemoryClusterState extends ClusterState {
  readonly kind: 'memory';
  /** Sizes of the shared state, so tests can check that nothing grows without bound. */
  stats(): { channels: number; counterKeys: number; hits: number; locks: number; kvKeys: number; budgetKeys: number };
}

const SWEEP_INTERVAL_MS = 1000;

interface Subscription {
  channel: string;
  handler: (message: string) => void;
  active: boolean;
}

interface Held {
  token: number;
  expiresAt: number;
}

interface Stored {
  value: string;
  expiresAt: number;
}

interface World {
  channels: Map<string, Set<Subscription>>;
  logs: Map<string, HitLog>;
  budgets: Map<string, Budget>;
  leases: Map<string, Held>;
  values: Map<string, Stored>;
  /** Capped maps by name; each Map's order is the order of writes, oldest first. */
  capped: Map<string, Map<string, Stored>>;
  sweepIntervalMs: number;
  nextSweepAt: number;
  users: number;
}

const worlds = new Map<string, World>();
let lastToken = 0;

/** Monotonic, so that a wall-clock jump neither expires nor revives hits and leases. */
const now = (): number => performance.now();

export function createMemoryClusterState(options: MemoryClusterStateOptions = {}): MemoryClusterState {
  const world = joinWorld(options.namespace, options.sweepIntervalMs ?? SWEEP_INTERVAL_MS);
  const mine = new Set<Subscription>();
  let closed = false;
  const ensureOpen = () => {
    if (closed) throw new Error('cluster state is closed');
  };
  return {
    kind: 'memory',
    bus: memoryBus(world, mine, ensureOpen),
    counters: memoryCounters(world, ensureOpen),
    budgets: memoryBudgets(world.budgets, now, ensureOpen, (at) => sweep(world, at)),
    locks: memoryLocks(world, ensureOpen),
    kv: memoryKeyValueStore(world, ensureOpen),
    capped: memoryCappedMaps(world, ensureOpen),
    async ping() {
      ensureOpen();
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const sub of mine) unsubscribe(world, sub);
      leaveWorld(options.namespace, world);
    },
    stats: () => ({
      channels: world.channels.size,
      counterKeys: world.logs.size,
      hits: [...world.logs.values()].reduce((sum, log) => sum + log.size, 0),
      locks: world.leases.size,
      kvKeys: world.values.size,
      budgetKeys: world.budgets.size,
    }),
  };
}

function newWorld(sweepIntervalMs: number): World {
  return {
    channels: new Map(),
    logs: new Map(),
    budgets: new Map(),
    leases: new Map(),
    values: new Map(),
    capped: new Map(),
    sweepIntervalMs,
    nextSweepAt: 0,
    users: 0,
  };
}

function joinWorld(namespace: string | undefined, sweepIntervalMs: number): World {
  if (namespace === undefined) return newWorld(sweepIntervalMs);
  let world = worlds.get(namespace);
  if (!world) {
    world = newWorld(sweepIntervalMs);
    worlds.set(namespace, world);
  }
  world.users++;
  return world;
}

/** The registry forgets a namespace once its last instance closes, leases, counters and values included. */
function leaveWorld(namespace: string | undefined, world: World): void {
  if (namespace === undefined) return;
  world.users--;
  if (world.users === 0 && worlds.get(namespace) === world) worlds.delete(namespace);
}

function memoryBus(world: World, mine: Set<Subscription>, ensureOpen: () => void): Bus {
  return {
    async publish(channel, message) {
      ensureOpen();
      const subs = world.channels.get(channel);
      if (!subs) return;
      const snapshot = [...subs];
      // Later, like a message coming back from Redis: a handler never runs inside publish.
      setImmediate(() => {
        for (const sub of snapshot) if (sub.active) deliver(channel, sub.handler, message);
      });
    },
    async subscribe(channel, handler) {
      ensureOpen();
      const sub: Subscription = { channel, handler, active: true };
      let subs = world.channels.get(channel);
      if (!subs) {
        subs = new Set();
        world.channels.set(channel, subs);
      }
      subs.add(sub);
      mine.add(sub);
      return async () => {
        mine.delete(sub);
        unsubscribe(world, sub);
      };
    },
  };
}

function unsubscribe(world: World, sub: Subscription): void {
  sub.active = false;
  const subs = world.channels.get(sub.channel);
  if (subs?.delete(sub) && subs.size === 0) world.channels.delete(sub.channel);
}

/** Hit times in ascending order. A moving head instead of shift() keeps pruning cheap. */
class HitLog {
  times: number[] = [];
  head = 0;
  /** The window of the latest write: hits older than it are dropped by the sweep. */
  windowMs = 0;

  get size(): number {
    return this.times.length - this.head;
  }

  /** Drops hits at or before `cutoff`. */
  prune(cutoff: number): void {
    while (this.head < this.times.length && this.times[this.head]! <= cutoff) this.head++;
    if (this.head > 64 && this.head * 2 >= this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }

  /** Hits after `cutoff`, by binary search. */
  countAfter(cutoff: number): number {
    let lo = this.head;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.times[mid]! <= cutoff) lo = mid + 1;
      else hi = mid;
    }
    return this.times.length - lo;
  }

  push(at: number, windowMs: number): void {
    this.times.push(at);
    this.windowMs = windowMs;
  }
}

/** Removes counter keys, leases and values nobody touched since they expired; amortised over calls, no timer. */
function sweep(world: World, at: number): void {
  if (at < world.nextSweepAt) return;
  world.nextSweepAt = at + world.sweepIntervalMs;
  for (const [key, log] of world.logs) {
    log.prune(at - log.windowMs);
    if (log.size === 0) world.logs.delete(key);
  }
  for (const [key, budget] of world.budgets) {
    budget.prune(at - budget.windowMs);
    if (budget.charges.size === 0) world.budgets.delete(key);
  }
  for (const [name, held] of world.leases) if (held.expiresAt <= at) world.leases.delete(name);
  for (const [key, stored] of world.values) if (stored.expiresAt <= at) world.values.delete(key);
}

function memoryCounters(world: World, ensureOpen: () => void): SlidingWindowCounters {
  /** The key's log with hits older than the window dropped; a new, unsaved log if it has none. */
  const current = (key: string, windowMs: number, at: number): HitLog => {
    sweep(world, at);
    const log = world.logs.get(key) ?? new HitLog();
    log.prune(at - windowMs);
    if (log.size === 0) world.logs.delete(key);
    return log;
  };
  const record = (key: string, log: HitLog, at: number, windowMs: number): void => {
    log.push(at, windowMs);
    world.logs.set(key, log);
  };
  return {
    async take(key, windowMs, limit) {
      ensureOpen();
      checkDuration('windowMs', windowMs);
      checkLimit(limit);
      const at = now();
      const log = current(key, windowMs, at);
      if (log.size >= limit) return { allowed: false, count: log.size };
      record(key, log, at, windowMs);
      return { allowed: true, count: log.size };
    },
    async add(key, windowMs) {
      ensureOpen();
      checkDuration('windowMs', windowMs);
      const at = now();
      const log = current(key, windowMs, at);
      record(key, log, at, windowMs);
      return log.size;
    },
    async count(key, windowMs) {
      ensureOpen();
      checkDuration('windowMs', windowMs);
      const at = now();
      sweep(world, at);
      return world.logs.get(key)?.countAfter(at - windowMs) ?? 0;
    },
    async takeGated(key, windowMs, limit, gate) {
      ensureOpen();
      checkDuration('windowMs', windowMs);
      checkLimit(limit);
      checkLimit(gate.limit);
      const at = now();
      sweep(world, at);
      if ((world.logs.get(gate.key)?.countAfter(at - windowMs) ?? 0) >= gate.limit) {
        return { allowed: false, refusedBy: 'gate' };
      }
      const log = current(key, windowMs, at);
      if (log.size >= limit) return { allowed: false, refusedBy: 'limit' };
      record(key, log, at, windowMs);
      return { allowed: true };
    },
  };
}

function memoryLocks(world: World, ensureOpen: () => void): Locks {
  return {
    async acquire(name, ttlMs) {
      ensureOpen();
      checkDuration('ttlMs', ttlMs);
      const at = now();
      sweep(world, at);
      const held = world.leases.get(name);
      if (held && held.expiresAt > at) return null;
      const token = ++lastToken;
      world.leases.set(name, { token, expiresAt: at + ttlMs });
      return memoryLease(world, name, token);
    },
  };
}

function memoryLease(world: World, name: string, token: number): Lease {
  return {
    name,
    async renew(ttlMs) {
      checkDuration('ttlMs', ttlMs);
      const at = now();
      const held = world.leases.get(name);
      if (!held || held.token !== token || held.expiresAt <= at) return false;
      held.expiresAt = at + ttlMs;
      return true;
    },
    async release() {
      if (world.leases.get(name)?.token === token) world.leases.delete(name);
    },
  };
}

function memoryKeyValueStore(world: World, ensureOpen: () => void): KeyValueStore {
  /** The key's entry if it has not expired; an expired one is dropped on the spot. Every call starts here. */
  const live = (key: string, at: number): Stored | undefined => {
    sweep(world, at);
    const stored = world.values.get(key);
    if (!stored) return undefined;
    if (stored.expiresAt > at) return stored;
    world.values.delete(key);
    return undefined;
  };
  // Each method runs without awaiting in between, so it is one atomic step across instances.
  return {
    async set(key, value, ttlMs) {
      ensureOpen();
      checkDuration('ttlMs', ttlMs);
      const at = now();
      sweep(world, at);
      world.values.set(key, { value, expiresAt: at + ttlMs });
    },
    async setIfAbsent(key, value, ttlMs) {
      ensureOpen();
      checkDuration('ttlMs', ttlMs);
      const at = now();
      if (live(key, at)) return false;
      world.values.set(key, { value, expiresAt: at + ttlMs });
      return true;
    },
    async get(key) {
      ensureOpen();
      return live(key, now())?.value;
    },
    async take(key) {
      ensureOpen();
      const stored = live(key, now());
      if (stored) world.values.delete(key);
      return stored?.value;
    },
    async delete(key) {
      ensureOpen();
      sweep(world, now());
      world.values.delete(key);
    },
    async ttl(key) {
      ensureOpen();
      const at = now();
      const stored = live(key, at);
      // Whole milliseconds, like Redis; rounded up so that a live key never reports 0.
      return stored && Math.ceil(stored.expiresAt - at);
    },
  };
}

function memoryCappedMaps(world: World, ensureOpen: () => void): CappedMaps {
  const mapOf = (name: string): Map<string, Stored> => {
    let map = world.capped.get(name);
    if (!map) {
      map = new Map();
      world.capped.set(name, map);
    }
    return map;
  };
  const dropExpired = (map: Map<string, Stored>, at: number) => {
    for (const [key, stored] of map) if (stored.expiresAt <= at) map.delete(key);
  };
  return {
    async get(name, key) {
      ensureOpen();
      const map = world.capped.get(name);
      const stored = map?.get(key);
      if (!stored) return undefined;
      if (stored.expiresAt > now()) return stored.value;
      map?.delete(key);
      return undefined;
    },
    async set(name, key, value, ttlMs, maxEntries) {
      ensureOpen();
      checkDuration('ttlMs', ttlMs);
      const map = mapOf(name);
      const at = now();
      // Deleted first so that the entry moves to the end of the write order.
      map.delete(key);
      map.set(key, { value, expiresAt: at + ttlMs });
      if (map.size <= maxEntries) return;
      dropExpired(map, at);
      for (const oldest of map.keys()) {
        if (map.size <= maxEntries) break;
        map.delete(oldest);
      }
    },
    async keys(name) {
      ensureOpen();
      const map = world.capped.get(name);
      if (!map) return [];
      dropExpired(map, now());
      return [...map.keys()];
    },
    async clear(name, prefix = '') {
      ensureOpen();
      const map = world.capped.get(name);
      if (!map) return 0;
      dropExpired(map, now());
      let count = 0;
      for (const key of map.keys()) {
        if (!key.startsWith(prefix)) continue;
        map.delete(key);
        count++;
      }
      if (map.size === 0) world.capped.delete(name);
      return count;
    },
  };
}
