import { checkBudgetCharges, checkDuration } from './shared.ts';
import type { WindowBudgets } from './types.ts';

/** One budget: its charges in admission order (so oldest first) and their total. */
export class Budget {
  readonly charges = new Map<string, { at: number; cost: number }>();
  sum = 0;
  windowMs = 0;

  /** Drops the charges at or before `cutoff`. */
  prune(cutoff: number): void {
    for (const [ticket, charge] of this.charges) {
      if (charge.at > cutoff) break;
      this.sum -= charge.cost;
      this.charges.delete(ticket);
    }
  }

  /** Milliseconds from `at` until `need` units have left the window. */
  freedAfter(need: number, at: number): number {
    let freed = 0;
    for (const charge of this.charges.values()) {
      freed += charge.cost;
      if (freed >= need) return Math.ceil(charge.at + this.windowMs - at);
    }
    return this.windowMs;
  }
}

let lastTicket = 0;

/**
 * In-process budgets over a map shared by the instances of one namespace. Each call runs without
 * awaiting, so it is one atomic step. `now` is the default clock (monotonic).
 */
export function memoryBudgets(
  budgets: Map<string, Budget>,
  now: () => number,
  ensureOpen: () => void,
  sweep: (at: number) => void,
): WindowBudgets {
  const current = (key: string, windowMs: number, at: number): Budget => {
    const budget = budgets.get(key) ?? new Budget();
    budget.prune(at - windowMs);
    return budget;
  };
  return {
    async admit(charges, windowMs, at = now()) {
      ensureOpen();
      checkDuration('windowMs', windowMs);
      checkBudgetCharges(charges);
      sweep(at);
      const ticket = `m${++lastTicket}`;
      const held = charges.map((charge) => current(charge.key, windowMs, at));
      for (const [i, charge] of charges.entries()) {
        const budget = held[i]!;
        if (budget.sum + charge.cost <= charge.limit) continue;
        budget.windowMs = windowMs;
        const retryAfterMs =
          charge.cost > charge.limit ? windowMs : budget.freedAfter(budget.sum + charge.cost - charge.limit, at);
        return { admitted: false, refused: i, retryAfterMs: Math.max(0, retryAfterMs) };
      }
      for (const [i, charge] of charges.entries()) {
        const budget = held[i]!;
        budget.charges.set(ticket, { at, cost: charge.cost });
        budget.sum += charge.cost;
        budget.windowMs = windowMs;
        budgets.set(charge.key, budget);
      }
      return { admitted: true, ticket };
    },
    async correct(ticket, corrections) {
      ensureOpen();
      for (const { key, delta } of corrections) {
        const charge = budgets.get(key)?.charges.get(ticket);
        if (!charge) continue;
        const cost = Math.max(0, charge.cost + Math.round(delta));
        budgets.get(key)!.sum += cost - charge.cost;
        charge.cost = cost;
      }
    },
  };
}
