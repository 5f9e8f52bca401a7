/** Helpers both implementations share, so that they fail and validate alike. */

/** Reports an error nobody awaits (a bus handler, a background job) without crashing the process. */
export function warn(what: string, err: unknown): void {
  const detail = err instanceof Error ? err.message : String(err);
  process.emitWarning(`${what}: ${detail}`, { code: 'TOLLGATE_CLUSTER' });
}

/** Calls a bus handler; its failure (thrown or rejected) must not reach the publisher or the transport. */
export function deliver(channel: string, handler: (message: string) => void, message: string): void {
  try {
    const result: unknown = handler(message);
    if (result instanceof Promise) result.catch((err: unknown) => warn(`bus handler on ${channel} failed`, err));
  } catch (err) {
    warn(`bus handler on ${channel} failed`, err);
  }
}

/** Durations must be positive and finite: a zero or NaN window would silently disable a limit. */
export function checkDuration(what: string, ms: number): void {
  if (!Number.isFinite(ms) || ms <= 0)
    throw new RangeError(`${what} must be a positive number of milliseconds, got ${ms}`);
}

export function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 0) throw new RangeError(`limit must be a non-negative integer, got ${limit}`);
}

/** Budget limits and costs are whole non-negative numbers: Redis adds them with HINCRBY. */
export function checkBudgetCharges(charges: readonly { limit: number; cost: number }[]): void {
  for (const { limit, cost } of charges) {
    checkLimit(limit);
    if (!Number.isInteger(cost) || cost < 0) throw new RangeError(`cost must be a non-negative integer, got ${cost}`);
  }
}
