import type { SlidingWindowCounters, WindowBudgets } from './types.ts';

/**
 * Rate limits that let requests through while Redis is unreachable (issue 18): refusing every request
 * because the counter store is down would turn a Redis outage into an outage of the gateway. Each failure
 * is reported (`onError`) and answered as "within the limit, nothing counted".
 */
export function failOpenCounters(
  counters: SlidingWindowCounters,
  onError: (err: unknown) => void,
): SlidingWindowCounters {
  const open = <T>(call: Promise<T>, fallback: T): Promise<T> =>
    call.catch((err: unknown) => {
      if (isCallersMistake(err)) throw err;
      onError(err);
      return fallback;
    });
  return {
    take: (key, windowMs, limit) => open(counters.take(key, windowMs, limit), { allowed: true, count: 0 }),
    add: (key, windowMs) => open(counters.add(key, windowMs), 0),
    count: (key, windowMs) => open(counters.count(key, windowMs), 0),
    takeGated: (key, windowMs, limit, gate) => open(counters.takeGated(key, windowMs, limit, gate), { allowed: true }),
  };
}

/** Token and request budgets that admit while Redis is unreachable; the ticket then corrects nothing. */
export function failOpenBudgets(budgets: WindowBudgets, onError: (err: unknown) => void): WindowBudgets {
  return {
    admit: (charges, windowMs, at) =>
      budgets.admit(charges, windowMs, at).catch((err: unknown) => {
        if (isCallersMistake(err)) throw err;
        onError(err);
        return { admitted: true, ticket: UNCOUNTED };
      }),
    correct: (ticket, corrections, at) =>
      ticket === UNCOUNTED
        ? Promise.resolve()
        : budgets.correct(ticket, corrections, at).catch((err: unknown) => onError(err)),
  };
}

/** Bad arguments (a window of 0, a negative limit) are the caller's bug, not an outage: they still throw. */
const isCallersMistake = (err: unknown) => err instanceof RangeError || err instanceof TypeError;

/** The ticket of an admission nothing recorded. */
const UNCOUNTED = 'uncounted';
