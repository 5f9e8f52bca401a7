import type { AccountRef } from '../../store/repositories/quota-leases.ts';
import { Mutex } from './mutex.ts';

/** A database write whose COMMIT failed in flight: its transaction id tells what became of it. */
export interface UncertainWrite {
  xid: string;
  /**
   * `within`: a charge written in the caller's transaction (settleWithin), out of the lease row;
   * `logged`: spending written with its consume logs (writeLogged), `logged` of it out of the lease row.
   */
  op: 'take' | 'flush' | 'return' | 'charge' | 'within' | 'logged';
  leaseId: string | undefined;
  /** Spending the write subtracted from the row (`unflushed` at the time). */
  flushed: number;
  /** Debt the write charged. */
  debt: number;
  /** Spending awaiting its consume log that the write took out of the row (`logged` only). */
  logged?: number;
}

/**
 * This pod's share of one account: the lease it holds and what it promised out of it.
 *
 *   available = rowAmount - unflushed - unlogged - reserved      (never negative)
 *
 * `rowAmount` is what the lease row holds as last written; `unflushed` is settled spending the row
 * does not reflect yet (the ledger's flush writes it); `unlogged` is settled spending the usage batch
 * will take out of the row together with its consume logs (writeLogged), never the flush; `reserved`
 * is what open reservations may still spend. Spending that no lease
 * covers (its lease was swept while this pod still counted on it) is `debt`, charged to the account
 * by the next write. So for every account, at every moment:
 *
 *   initial balance == balance of record + Σ row amounts + Σ flushed spending + Σ charged debt
 */
export class AccountLease {
  readonly ref: AccountRef;
  readonly lock = new Mutex();
  /** Changes whenever the lease is given back or lost: holds of an older generation are orphans. */
  generation: number;
  leaseId: string | undefined = undefined;
  rowAmount = 0;
  unflushed = 0;
  unlogged = 0;
  reserved = 0;
  /** Open reservations of this generation. */
  holds = 0;
  debt = 0;
  /**
   * Logged spending no lease covered because its take failed (the database away): the usage batch that
   * logs it charges it off the balance; until then it counts against outage credit like debt.
   */
  unloggedDirect = 0;
  /** The last slice taken: the lease is topped up once it has less than a share of it left. */
  slice = 0;
  /** Monotonic ms until which the lease may back new reservations (well inside its expiry). */
  usableUntil = 0;
  /** Monotonic ms of the last write that renewed the row. */
  renewedAt = 0;
  lastActive: number;
  /** The balance of record (outside every lease) as last seen. */
  balance: number | undefined = undefined;
  uncertain: UncertainWrite | undefined = undefined;

  constructor(ref: AccountRef, generation: number, now: number) {
    this.ref = ref;
    this.generation = generation;
    this.lastActive = now;
  }

  get available(): number {
    return this.rowAmount - this.unflushed - this.unlogged - this.reserved;
  }

  /**
   * Whether new reservations may be promised out of the lease without asking the database. An
   * uncertain take or flush does not matter here: either outcome leaves at least `available` in it.
   */
  usable(now: number): boolean {
    return this.leaseId !== undefined && now < this.usableUntil;
  }

  /**
   * The lease is gone (given back or swept) as of `generation`. `leftover` is spending the row did
   * not reflect when it went: a given-back lease accounted for what it flushed, a swept one for nothing.
   * Unlogged spending went back with the row: its consume records charge the balance instead.
   */
  retire(generation: number, leftover: number): void {
    this.debt += leftover;
    this.generation = generation;
    this.leaseId = undefined;
    this.rowAmount = 0;
    this.unflushed = 0;
    this.unlogged = 0;
    this.reserved = 0;
    this.holds = 0;
    this.usableUntil = 0;
  }
}

export function accountKey(ref: AccountRef): string {
  return `${ref.kind}:${ref.id}`;
}
