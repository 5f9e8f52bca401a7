import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { checkBudgetCharges, checkDuration } from './shared.ts';
import type { WindowBudgets } from './types.ts';

// Each budget is two keys: a sorted set of tickets scored by admission time (microseconds) and a hash
// of ticket -> cost plus '#sum', the total of the costs in the window. Pruning subtracts the expired
// costs from '#sum', so a check reads one field instead of adding up the window. The clock is Redis's
// TIME, so pods with skewed clocks agree, unless the caller injects one (tests).
const PRELUDE = `
local window = tonumber(ARGV[1]) * 1000
local now
if tonumber(ARGV[2]) > 0 then
  now = tonumber(ARGV[2]) * 1000
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local cutoff = now - window
-- HMGET/HDEL take the expired tickets in slices: unpack() of a long list overflows Lua's stack.
local function prune(log, costs)
  local old = redis.call('ZRANGEBYSCORE', log, '-inf', cutoff)
  if #old == 0 then return end
  local freed = 0
  for from = 1, #old, 500 do
    local slice = {unpack(old, from, math.min(from + 499, #old))}
    for _, cost in ipairs(redis.call('HMGET', costs, unpack(slice))) do freed = freed + (tonumber(cost) or 0) end
    redis.call('HDEL', costs, unpack(slice))
  end
  redis.call('ZREMRANGEBYSCORE', log, '-inf', cutoff)
  redis.call('HINCRBY', costs, '#sum', -freed)
end
`;

export const BUDGET_SCRIPTS = {
  /**
   * KEYS: log1, costs1, log2, costs2, … ARGV: windowMs, at (0: TIME), ticket, then limit and cost per budget.
   * Returns {1} when every charge fits (all recorded), else {0, index of the first refusal, retryAfterMs}.
   */
  tollgateBudgetAdmit: {
    lua: `${PRELUDE}
local n = #KEYS / 2
local sums = {}
for i = 1, n do
  prune(KEYS[2 * i - 1], KEYS[2 * i])
  sums[i] = tonumber(redis.call('HGET', KEYS[2 * i], '#sum') or '0')
end
for i = 1, n do
  local limit = tonumber(ARGV[2 + 2 * i])
  local cost = tonumber(ARGV[3 + 2 * i])
  if sums[i] + cost > limit then
    local waitMs = tonumber(ARGV[1])
    if cost <= limit then
      local need = sums[i] + cost - limit
      local freed = 0
      local entries = redis.call('ZRANGE', KEYS[2 * i - 1], 0, -1, 'WITHSCORES')
      for j = 1, #entries, 2 do
        freed = freed + (tonumber(redis.call('HGET', KEYS[2 * i], entries[j])) or 0)
        if freed >= need then
          waitMs = math.ceil((tonumber(entries[j + 1]) + window - now) / 1000)
          break
        end
      end
    end
    return {0, i - 1, waitMs}
  end
end
for i = 1, n do
  local cost = tonumber(ARGV[3 + 2 * i])
  redis.call('ZADD', KEYS[2 * i - 1], now, ARGV[3])
  redis.call('HSET', KEYS[2 * i], ARGV[3], cost)
  redis.call('HINCRBY', KEYS[2 * i], '#sum', cost)
  redis.call('PEXPIRE', KEYS[2 * i - 1], ARGV[1])
  redis.call('PEXPIRE', KEYS[2 * i], ARGV[1])
end
return {1}`,
  },
  /** KEYS: log1, costs1, … ARGV: windowMs (unused), at, ticket, then delta per budget. */
  tollgateBudgetCorrect: {
    lua: `${PRELUDE}
for i = 1, #KEYS / 2 do
  local costs = KEYS[2 * i]
  local old = tonumber(redis.call('HGET', costs, ARGV[3]))
  if old then
    local new = math.max(0, old + tonumber(ARGV[3 + i]))
    redis.call('HSET', costs, ARGV[3], new)
    redis.call('HINCRBY', costs, '#sum', new - old)
  end
end
return 0`,
  },
};

/** The commands `BUDGET_SCRIPTS` defines (with numberOfKeys left to each call). */
export interface BudgetCommands {
  tollgateBudgetAdmit(numberOfKeys: number, ...args: Array<string | number>): Promise<number[]>;
  tollgateBudgetCorrect(numberOfKeys: number, ...args: Array<string | number>): Promise<number>;
}

export function redisBudgets(client: Redis & BudgetCommands, prefix: string): WindowBudgets {
  const instance = randomUUID();
  let seq = 0;
  const keysOf = (key: string) => [`${prefix}${key}:t`, `${prefix}${key}:c`];
  return {
    async admit(charges, windowMs, at) {
      checkDuration('windowMs', windowMs);
      checkBudgetCharges(charges);
      const ticket = `${instance}:${++seq}`;
      if (charges.length === 0) return { admitted: true, ticket };
      const keys = charges.flatMap((charge) => keysOf(charge.key));
      const args = charges.flatMap((charge) => [charge.limit, charge.cost]);
      const [admitted, refused, retryAfterMs] = await client.tollgateBudgetAdmit(
        keys.length,
        ...keys,
        Math.ceil(windowMs),
        at ?? 0,
        ticket,
        ...args,
      );
      if (admitted === 1) return { admitted: true, ticket };
      return { admitted: false, refused: refused ?? 0, retryAfterMs: Math.max(0, retryAfterMs ?? windowMs) };
    },
    async correct(ticket, corrections, at) {
      const changed = corrections.filter((c) => c.delta !== 0);
      if (changed.length === 0) return;
      const keys = changed.flatMap((c) => keysOf(c.key));
      await client.tollgateBudgetCorrect(
        keys.length,
        ...keys,
        1,
        at ?? 0,
        ticket,
        ...changed.map((c) => Math.round(c.delta)),
      );
    },
  };
}
