import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { failOpenBudgets, failOpenCounters } from './fail-open.ts';
import { BUDGET_SCRIPTS, type BudgetCommands, redisBudgets } from './redis-budgets.ts';
import { checkDuration, checkLimit, deliver } from './shared.ts';
import { TurnBatcher } from './turn-batch.ts';
import type { Bus, CappedMaps, ClusterState, KeyValueStore, Lease, Locks, SlidingWindowCounters } from './types.ts';
import { kvUnavailableAs503 } from './unavailable.ts';

export interface RedisClusterStateOptions {
  /** `redis://` or `rediss://` connection string. */
  url: string;
  /** Prefix of every key and channel (`<namespace>:…`), so several installs can share one Redis. */
  namespace: string;
  /** Connection errors after startup (Redis reconnects on its own); startup errors reject instead. */
  onError?: (err: Error) => void;
}

const CONNECT_TIMEOUT_MS = 5000;
/** A command Redis does not answer fails after this long, so a request never waits longer on it. */
const COMMAND_TIMEOUT_MS = 2000;
const QUIT_TIMEOUT_MS = 1000;

// Every script reads the clock with TIME, so pods with skewed clocks agree. Scores are
// microseconds; a hit counts while its score is above now - window.
const CLOCK = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[1]) * 1000
`;

const SCRIPTS = {
  /** KEYS: log. ARGV: windowMs, limit, member. Returns {allowed 0|1, count}. */
  tollgateTake: {
    numberOfKeys: 1,
    lua: `${CLOCK}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= tonumber(ARGV[2]) then return {0, count} end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return {1, count + 1}`,
  },
  /**
   * KEYS: log, gate. ARGV: windowMs, limit, gate limit, member… Per member, in order: 0 taken, 1 refused
   * by the limit, 2 by the gate (read once: nothing here adds to it).
   */
  tollgateTakeGated: {
    numberOfKeys: 2,
    lua: `${CLOCK}
local results = {}
if redis.call('ZCOUNT', KEYS[2], now - window + 1, '+inf') >= tonumber(ARGV[3]) then
  for i = 4, #ARGV do results[#results + 1] = 2 end
  return results
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local limit = tonumber(ARGV[2])
for i = 4, #ARGV do
  if count >= limit then
    results[#results + 1] = 1
  else
    redis.call('ZADD', KEYS[1], now, ARGV[i])
    count = count + 1
    results[#results + 1] = 0
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return results`,
  },
  /** KEYS: log. ARGV: windowMs, member… Per member, in order: the count, its hit included. */
  tollgateAdd: {
    numberOfKeys: 1,
    lua: `${CLOCK}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local counts = {}
for i = 2, #ARGV do
  count = count + redis.call('ZADD', KEYS[1], now, ARGV[i])
  counts[#counts + 1] = count
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return counts`,
  },
  /** KEYS: log. ARGV: windowMs. Scores are whole microseconds, so "above cutoff" is ">= cutoff + 1". */
  tollgateCount: {
    numberOfKeys: 1,
    readOnly: true,
    lua: `${CLOCK}
return redis.call('ZCOUNT', KEYS[1], now - window + 1, '+inf')`,
  },
  /** KEYS: lease. ARGV: token, ttlMs. Extends the lease only for its holder. */
  tollgateRenew: {
    numberOfKeys: 1,
    lua: `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`,
  },
  /**
   * KEYS: index (member key, score = expiry in ms), value. ARGV: value, ttlMs, max entries, member, value
   * key prefix. Stores, drops expired members, then the ones expiring soonest while the map is over its cap.
   */
  tollgateCappedSet: {
    numberOfKeys: 2,
    lua: `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if over > 0 then
  local gone = redis.call('ZPOPMIN', KEYS[1], over)
  for i = 1, #gone, 2 do redis.call('DEL', ARGV[5] .. gone[i]) end
end
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1`,
  },
  /** KEYS: index. Drops expired members and answers the live ones. */
  tollgateCappedKeys: {
    numberOfKeys: 1,
    lua: `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZRANGE', KEYS[1], 0, -1)`,
  },
  /** KEYS: lease. ARGV: token. Deletes the lease only for its holder. */
  tollgateRelease: {
    numberOfKeys: 1,
    lua: `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
  },
};

/** The commands `SCRIPTS` defines on the command connection. */
interface ScriptCommands {
  tollgateTake(key: string, windowMs: number, limit: number, member: string): Promise<[number, number]>;
  tollgateTakeGated(
    key: string,
    gate: string,
    windowMs: number,
    limit: number,
    gateLimit: number,
    ...members: string[]
  ): Promise<number[]>;
  tollgateAdd(key: string, windowMs: number, ...members: string[]): Promise<number[]>;
  tollgateCount(key: string, windowMs: number): Promise<number>;
  tollgateRenew(key: string, token: string, ttlMs: number): Promise<number>;
  tollgateRelease(key: string, token: string): Promise<number>;
  tollgateCappedSet(
    index: string,
    key: string,
    value: string,
    ttlMs: number,
    maxEntries: number,
    member: string,
    valuePrefix: string,
  ): Promise<number>;
  tollgateCappedKeys(index: string): Promise<string[]>;
}

type Commands = Redis & ScriptCommands & BudgetCommands;

/** Connects both connections (commands, and the bus subscriber); rejects if Redis does not answer. */
export async function createRedisClusterState(options: RedisClusterStateOptions): Promise<ClusterState> {
  const client = connection(options, 'tollgate', true) as Commands;
  // Failures the state answers for itself (fail-open limits, lost bus messages) are reported like connection errors.
  const reportError = (err: unknown) => options.onError?.(err instanceof Error ? err : new Error(String(err)));
  const subscriber = connection(options, 'tollgate-bus', false);
  try {
    await Promise.all([connect(client, options.url), connect(subscriber, options.url)]);
  } catch (err) {
    client.disconnect();
    subscriber.disconnect();
    throw err;
  }
  const prefix = `${options.namespace}:`;
  const bus = redisBus(client, subscriber, prefix, reportError);
  let closed = false;
  return {
    kind: 'redis',
    bus,
    counters: failOpenCounters(redisCounters(client, `${prefix}counter:`), reportError),
    budgets: failOpenBudgets(redisBudgets(client, `${prefix}budget:`), reportError),
    locks: redisLocks(client, `${prefix}lock:`),
    kv: kvUnavailableAs503(redisKeyValueStore(client, `${prefix}kv:`)),
    capped: redisCappedMaps(client, `${prefix}capped:`),
    async ping() {
      await Promise.all([client.ping(), subscriber.ping()]);
    },
    async close() {
      if (closed) return;
      closed = true;
      bus.stop();
      await Promise.all([quit(client), quit(subscriber)]);
    },
  };
}

function connection(options: RedisClusterStateOptions, name: string, withScripts: boolean): Redis {
  let connected = false;
  const redis = new Redis(options.url, {
    lazyConnect: true,
    connectionName: name,
    connectTimeout: CONNECT_TIMEOUT_MS,
    // While Redis is unreachable a command fails at once instead of waiting in a queue for the reconnect.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 2,
    ...(withScripts ? { commandTimeout: COMMAND_TIMEOUT_MS, scripts: { ...SCRIPTS, ...BUDGET_SCRIPTS } } : {}),
    // The first connect fails at once (the gateway then refuses to start); later drops reconnect with backoff.
    retryStrategy: (times) => (connected ? Math.min(50 * 2 ** times, 2000) : null),
  });
  redis.once('ready', () => {
    connected = true;
  });
  redis.on('error', (err: Error) => {
    if (connected) options.onError?.(err);
  });
  return redis;
}

async function connect(redis: Redis, url: string): Promise<void> {
  let cause: Error | undefined;
  const remember = (err: Error) => {
    cause ??= err;
  };
  redis.on('error', remember);
  try {
    await redis.connect();
  } catch (err) {
    const reason = cause ?? (err as Error);
    throw new Error(`Redis at ${redact(url)} does not answer: ${explain(reason)}`, { cause: reason });
  } finally {
    redis.off('error', remember);
  }
}

/** Connection errors can be AggregateErrors with an empty message (one per address tried). */
function explain(err: Error): string {
  const code = (err as { code?: unknown }).code;
  const message = err.message || (err instanceof AggregateError ? err.errors.map(String).join('; ') : '');
  return [code, message].filter(Boolean).join(' ') || String(err);
}

function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured URL';
  }
}

/** QUIT lets pending replies arrive; a Redis that is gone gets a hard disconnect instead of a hang. */
async function quit(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  const timer = setTimeout(() => redis.disconnect(), QUIT_TIMEOUT_MS);
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  } finally {
    clearTimeout(timer);
  }
}

interface Subscription {
  handler: (message: string) => void;
  active: boolean;
}

interface Channel {
  subs: Set<Subscription>;
  /** The SUBSCRIBE command; later subscribers to the channel wait for it too. */
  ready: Promise<unknown>;
}

function redisBus(
  client: Redis,
  subscriber: Redis,
  prefix: string,
  onError: (err: unknown) => void,
): Bus & { stop(): void } {
  const channels = new Map<string, Channel>();
  subscriber.on('message', (name: string, message: string) => {
    const channel = channels.get(name);
    if (!channel) return;
    const local = name.slice(prefix.length);
    for (const sub of [...channel.subs]) if (sub.active) deliver(local, sub.handler, message);
  });

  /** Drops a subscription; the last one on a channel unsubscribes the connection. */
  const drop = async (name: string, channel: Channel, sub: Subscription) => {
    sub.active = false;
    channel.subs.delete(sub);
    if (channel.subs.size > 0 || channels.get(name) !== channel) return;
    channels.delete(name);
    // Commands on one connection run in order, so a later SUBSCRIBE to the same channel wins.
    await subscriber.unsubscribe(name);
  };

  return {
    // A message lost while Redis is down is reported, not thrown: the change it announces is already
    // written, and the other pods' caches catch up by their time-to-live.
    async publish(channel, message) {
      await client.publish(prefix + channel, message).catch(onError);
    },
    async subscribe(local, handler) {
      const name = prefix + local;
      let channel = channels.get(name);
      if (!channel) {
        channel = { subs: new Set(), ready: subscriber.subscribe(name) };
        channels.set(name, channel);
      }
      const sub: Subscription = { handler, active: true };
      channel.subs.add(sub);
      try {
        await channel.ready;
      } catch (err) {
        await drop(name, channel, sub).catch(() => {});
        throw err;
      }
      const joined = channel;
      return () => (sub.active ? drop(name, joined, sub) : Promise.resolve());
    },
    stop() {
      for (const channel of channels.values()) for (const sub of channel.subs) sub.active = false;
      channels.clear();
    },
  };
}

function redisCounters(client: Commands, prefix: string): SlidingWindowCounters {
  // Members only need to be unique: a random id per instance and a sequence number.
  const instance = randomUUID();
  let seq = 0;
  const member = () => `${instance}:${++seq}`;
  // PEXPIRE takes whole milliseconds.
  const window = (windowMs: number) => {
    checkDuration('windowMs', windowMs);
    return Math.ceil(windowMs);
  };
  // The relay's two calls per request: joined per turn of the event loop (turn-batch.ts).
  const adds = new TurnBatcher<number>(([key, windowMs], members) =>
    client.tollgateAdd(String(key), Number(windowMs), ...members),
  );
  const gatedTakes = new TurnBatcher<number>(([key, gate, windowMs, limit, gateLimit], members) =>
    client.tollgateTakeGated(String(key), String(gate), Number(windowMs), Number(limit), Number(gateLimit), ...members),
  );
  return {
    async take(key, windowMs, limit) {
      checkLimit(limit);
      const [allowed, count] = await client.tollgateTake(prefix + key, window(windowMs), limit, member());
      return { allowed: allowed === 1, count };
    },
    async add(key, windowMs) {
      return adds.call([prefix + key, window(windowMs)], member());
    },
    async count(key, windowMs) {
      return client.tollgateCount(prefix + key, window(windowMs));
    },
    async takeGated(key, windowMs, limit, gate) {
      checkLimit(limit);
      checkLimit(gate.limit);
      const refused = await gatedTakes.call(
        [prefix + key, prefix + gate.key, window(windowMs), limit, gate.limit],
        member(),
      );
      if (refused === 0) return { allowed: true };
      return { allowed: false, refusedBy: refused === 2 ? 'gate' : 'limit' };
    },
  };
}

function redisLocks(client: Commands, prefix: string): Locks {
  return {
    async acquire(name, ttlMs) {
      checkDuration('ttlMs', ttlMs);
      const token = randomUUID();
      const key = prefix + name;
      const taken = await client.set(key, token, 'PX', Math.ceil(ttlMs), 'NX');
      return taken === 'OK' ? redisLease(client, name, key, token) : null;
    },
  };
}

function redisLease(client: Commands, name: string, key: string, token: string): Lease {
  return {
    name,
    async renew(ttlMs) {
      checkDuration('ttlMs', ttlMs);
      return (await client.tollgateRenew(key, token, Math.ceil(ttlMs))) === 1;
    },
    async release() {
      await client.tollgateRelease(key, token);
    },
  };
}

/** Plain string keys with PX expiry; GETDEL (Redis 6.2+) makes `take` one atomic command. */
function redisKeyValueStore(client: Redis, prefix: string): KeyValueStore {
  // PX takes whole milliseconds.
  const ttl = (ttlMs: number) => {
    checkDuration('ttlMs', ttlMs);
    return Math.ceil(ttlMs);
  };
  return {
    async set(key, value, ttlMs) {
      await client.set(prefix + key, value, 'PX', ttl(ttlMs));
    },
    async setIfAbsent(key, value, ttlMs) {
      return (await client.set(prefix + key, value, 'PX', ttl(ttlMs), 'NX')) === 'OK';
    },
    async get(key) {
      return (await client.get(prefix + key)) ?? undefined;
    },
    async take(key) {
      return (await client.getdel(prefix + key)) ?? undefined;
    },
    async delete(key) {
      await client.del(prefix + key);
    },
    async ttl(key) {
      // -2: no such key. -1: a key without expiry, which only a write from outside this store can make.
      const left = await client.pttl(prefix + key);
      if (left === -2) return undefined;
      return left === -1 ? Number.POSITIVE_INFINITY : left;
    },
  };
}

/**
 * A capped map is a sorted set of its keys scored by expiry (the index) and one string key per entry
 * with PX expiry, so that an entry vanishes on time even if the index is never trimmed again.
 */
function redisCappedMaps(client: Commands, prefix: string): CappedMaps {
  const index = (map: string) => `${prefix}${map}:index`;
  const values = (map: string) => `${prefix}${map}:v:`;
  const CLEAR_BATCH = 500;
  return {
    async get(map, key) {
      return (await client.get(values(map) + key)) ?? undefined;
    },
    async set(map, key, value, ttlMs, maxEntries) {
      checkDuration('ttlMs', ttlMs);
      await client.tollgateCappedSet(
        index(map),
        values(map) + key,
        value,
        Math.ceil(ttlMs),
        Math.max(0, Math.floor(maxEntries)),
        key,
        values(map),
      );
    },
    async keys(map) {
      return client.tollgateCappedKeys(index(map));
    },
    async clear(map, prefix = '') {
      const keys = (await client.tollgateCappedKeys(index(map))).filter((key) => key.startsWith(prefix));
      for (let i = 0; i < keys.length; i += CLEAR_BATCH) {
        const batch = keys.slice(i, i + CLEAR_BATCH);
        await client.del(...batch.map((key) => values(map) + key));
        await client.zrem(index(map), ...batch);
      }
      return keys.length;
    },
  };
}
