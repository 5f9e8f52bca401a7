import type { Kysely, Transaction } from 'kysely';
import type { ClusterState } from '../../cluster/index.ts';
import { AppError } from '../../errors.ts';
import type { Database } from '../../store/database.ts';
import {
  AccountMissingError,
  type AccountRef,
  type LeaseWriteResult,
  transactionStatus,
} from '../../store/repositories/quota-leases.ts';
import { isStoreUnavailable } from '../../store/unavailable.ts';
import { AccountLease, accountKey } from './account.ts';
import { defaultFormatQuota, LEDGER_ERRORS, USER_QUOTA_BELOW_RESERVE } from './errors.ts';
import { type ChargeBalances, LeaseWriter, type LedgerLogger } from './leases.ts';
import type { PeriodBudget, PeriodHold } from './periods/budget.ts';
import { hasPeriodLimits, type PeriodLimits } from './periods/limits.ts';
import { type LeaseSweeper, startLeaseSweeper } from './sweeper.ts';

export type { ChargeBalances, LedgerLogger } from './leases.ts';

export interface QuotaLedgerConfig {
  db: Kysely<Database>;
  /** This pod's name, recorded on its leases (for operators; leases are told apart by their ids). */
  holder: string;
  /** Runs the sweeper of expired leases on one pod at a time; without it this instance sweeps nothing. */
  cluster?: ClusterState | undefined;
  /** The most a lease takes at once (500,000 = 1 USD); it also never takes more than a quarter of the balance. */
  leaseSliceQuota?: number | undefined;
  /** Lifetime of a lease row without renewal (whole seconds, at least 3 s). */
  leaseTtlMs?: number | undefined;
  /** How often settled spending is written to the lease rows (the most a crash can lose). */
  flushIntervalMs?: number | undefined;
  /** A lease nobody used for this long is given back. */
  idleReturnMs?: number | undefined;
  sweepIntervalMs?: number | undefined;
  /** How long past its expiry a lease is left to its holder before the sweeper returns it. */
  sweepGraceMs?: number | undefined;
  /** How long `close` waits for open reservations before giving every lease back. */
  drainTimeoutMs?: number | undefined;
  /** Renders quota in refusal messages (new-api's FormatQuota); the relay passes one that follows the options. */
  formatQuota?: ((quota: number) => string) | undefined;
  logger?: LedgerLogger | undefined;
  /** Daily, weekly and monthly budgets (periods/): checked and counted with every reservation. */
  periods?: PeriodBudget | undefined;
}

export interface ReserveRequest {
  userId: number;
  /** Absent for requests without an API token (the playground): only the wallet is reserved from. */
  tokenId?: number | undefined;
  /** An unlimited token has no balance to reserve from. */
  tokenUnlimited?: boolean | undefined;
  /** Quota to hold for the request (0 is allowed: trust bypass still needs a positive balance). */
  amount: number;
  /** The user's and the token's period limits (none: no period accounting). */
  periodLimits?: { user?: PeriodLimits | undefined; token?: PeriodLimits | undefined } | undefined;
  /** What the request holds against period budgets, when more than `amount` (a trust bypass reserves 0). */
  periodAmount?: number | undefined;
}

/**
 * How a settlement reaches Postgres. Without `withLog` the ledger writes it into its lease rows at the
 * next flush. With it, the caller's consume record carries the charge (`chargedAccounts`) and the usage
 * batch that writes the record's log takes it off the balances in the same transaction (`writeLogged`):
 * a crash then loses both or neither.
 */
export interface SpendOptions {
  withLog?: boolean | undefined;
}

/** One account's logged spending in a usage batch (summed over its records). */
export interface LoggedCharge {
  account: AccountRef;
  amount: number;
}

/** The accounts a request's quota is charged to: the wallet, and a token unless it is unlimited (or absent). */
export function chargedAccounts(request: Omit<ReserveRequest, 'amount'>): AccountRef[] {
  const refs: AccountRef[] = [{ kind: 'user', id: request.userId }];
  if (request.tokenId !== undefined && !request.tokenUnlimited) refs.push({ kind: 'token', id: request.tokenId });
  return refs;
}

/** What a request holds until it is settled or refunded. */
export interface Reservation {
  readonly userId: number;
  readonly tokenId: number | undefined;
  readonly amount: number;
}

export interface LedgerStats {
  /** Accounts this pod tracks, and how many hold a lease. */
  accounts: number;
  leases: number;
  /** Quota held in this pod's leases and not yet spent (reserved included). */
  leasedQuota: number;
  reservedQuota: number;
  openReservations: number;
  /** Spending not yet written to the lease rows, and spending no lease covers yet. */
  unflushedQuota: number;
  debtQuota: number;
}

interface Hold {
  ref: AccountRef;
  generation: number;
  amount: number;
}

interface ReservationState {
  /** The accounts the reservation holds quota of: the wallet, and a limited token. */
  refs: AccountRef[];
  holds: Hold[];
  done: boolean;
  period?: PeriodHold | undefined;
}

/** A lease is topped up in the background once what it has left falls below this share of its last slice. */
const LOW_WATER = 0.25;
const MIN_TTL_SECONDS = 3;

const silent: LedgerLogger = { info() {}, warn() {}, error() {} };
const now = () => performance.now();

function checkQuota(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer quota`);
}

/** Whose period budgets a request counts in: an unlimited token's limits still apply. */
function periodHolders(request: Omit<ReserveRequest, 'amount'>) {
  return {
    userId: request.userId,
    tokenId: request.tokenId,
    user: request.periodLimits?.user,
    token: request.periodLimits?.token,
  };
}

/** Whether the request's user or token has any period limit (a token's only when the request has one). */
const hasAnyPeriodLimits = (request: ReserveRequest) =>
  hasPeriodLimits(request.periodLimits?.user) ||
  (request.tokenId !== undefined && hasPeriodLimits(request.periodLimits?.token));

/** The order in which a caller holding several account locks takes them: wallets first, then by id. */
function byLockOrder(a: AccountLease, b: AccountLease): number {
  return (a.ref.kind === b.ref.kind ? 0 : a.ref.kind === 'user' ? -1 : 1) || a.ref.id - b.ref.id;
}

/** Runs `fn` holding the locks of all `accounts`, taken one after another in lock order. */
async function lockedInOrder<T>(accounts: AccountLease[], fn: () => Promise<T>): Promise<T> {
  const sorted = [...accounts].sort(byLockOrder);
  const held: AccountLease[] = [];
  try {
    for (const account of sorted) {
      await account.lock.acquire();
      held.push(account);
    }
    return await fn();
  } finally {
    for (const account of held.reverse()) account.lock.release();
  }
}

/**
 * The quota ledger (DESIGN.md §3). Balances of record live in Postgres; this pod spends only
 * quota it took from them. Per account it holds a lease: a slice taken in one transaction with a
 * conditional UPDATE, recorded in `quota_leases`. Reservations and settlements are in memory;
 * the database is written when a lease is taken or topped up, every `flushIntervalMs` (spending and
 * renewal, all leases in one statement), and when a lease is given back (idle, or on close).
 *
 * Why the books always balance, per account:
 *   initial == balance of record + Σ lease rows + Σ flushed spending + Σ charged debt
 * Every write moves quota between two of these terms in one transaction, and the in-memory side
 * applies a write's effect only once it is known to have committed (a COMMIT lost in flight is
 * resolved by its transaction id). After a graceful close no lease row is left, so
 * `initial == balance + Σ settled` exactly.
 *
 * Why no overspend: a reservation is only ever promised out of a lease's unreserved remainder,
 * and a lease only ever holds quota the conditional UPDATE took. The only charges that can take a
 * balance below zero are costs above what was reserved (new-api does the same: upstream already
 * spent that quota), and further reservations are then refused. A settling request spends its
 * own reservation first, in the same turn, so the overrun is at most the sum of those extras, plus
 * the cost of reservations still open when their lease was lost or `close` stopped waiting.
 */
export class QuotaLedger {
  readonly #leases: LeaseWriter;
  readonly #log: LedgerLogger;
  readonly #renewEveryMs: number;
  readonly #flushEveryMs: number;
  readonly #idleMs: number;
  readonly #drainTimeoutMs: number;
  readonly #format: (quota: number) => string;
  readonly #periods: PeriodBudget | undefined;
  readonly #sliceQuota: number;
  readonly #accounts = new Map<string, AccountLease>();
  /** Usage batches whose last write's COMMIT reply was lost: the transaction id that may have written them. */
  readonly #unresolvedBatches = new WeakMap<object, string>();
  readonly #db: Kysely<Database>;
  readonly #reservations = new WeakMap<Reservation, ReservationState>();
  /** Reservations being made or not yet settled. */
  #open = 0;
  #onDrained: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #sweeper: LeaseSweeper | undefined;
  #syncing: Promise<void> | undefined;
  #accepting = true;
  /** Set once close starts giving leases back: from then on charges go straight to the balances. */
  #returning = false;
  #closing: Promise<void> | undefined;

  private constructor(config: QuotaLedgerConfig) {
    this.#log = config.logger ?? silent;
    this.#db = config.db;
    const sliceQuota = config.leaseSliceQuota ?? 500_000;
    checkQuota(sliceQuota, 'leaseSliceQuota');
    if (sliceQuota < 1) throw new RangeError('leaseSliceQuota must be at least 1');
    const ttlSeconds = Math.max(MIN_TTL_SECONDS, Math.ceil((config.leaseTtlMs ?? 60_000) / 1000));
    const ttlMs = ttlSeconds * 1000;
    this.#leases = new LeaseWriter({ db: config.db, holder: config.holder, logger: this.#log, sliceQuota, ttlSeconds });
    this.#renewEveryMs = ttlMs / 3;
    this.#flushEveryMs = Math.min(config.flushIntervalMs ?? 5_000, this.#renewEveryMs);
    this.#idleMs = config.idleReturnMs ?? ttlMs;
    this.#drainTimeoutMs = config.drainTimeoutMs ?? 10_000;
    this.#format = config.formatQuota ?? defaultFormatQuota;
    this.#periods = config.periods;
    this.#sliceQuota = sliceQuota;
  }

  static async start(config: QuotaLedgerConfig): Promise<QuotaLedger> {
    const ledger = new QuotaLedger(config);
    ledger.#timer = setInterval(() => {
      ledger.#sync(false).catch((err: unknown) => ledger.#log.error({ err }, 'quota ledger sync failed'));
    }, ledger.#flushEveryMs);
    // Leases expire on their own if the process dies: the timer must not keep it alive.
    ledger.#timer.unref();
    if (config.cluster) {
      ledger.#sweeper = startLeaseSweeper({
        db: config.db,
        cluster: config.cluster,
        intervalMs: config.sweepIntervalMs ?? 30_000,
        graceMs: config.sweepGraceMs ?? 10_000,
        logger: ledger.#log,
      });
    }
    return ledger;
  }

  /**
   * Holds `amount` of the user's wallet and, for a limited token, of the token's quota. Refuses
   * (AppError, 403) if either cannot cover it: the wallet is checked first, as new-api does, and a
   * refusal holds nothing. Waits for the database only when this pod's lease runs short.
   */
  async reserve(request: ReserveRequest): Promise<Reservation> {
    const { userId, tokenId, amount } = request;
    checkQuota(amount, 'amount');
    if (!this.#accepting) throw new AppError(LEDGER_ERRORS.quota_ledger_closed);
    this.#open++;
    try {
      const refs = chargedAccounts(request);
      const holds = await this.#holdAll(refs, amount);
      let period: PeriodHold | undefined;
      // Only a holder with limits costs a trip to the database (and a turn of the event loop).
      if (this.#periods && hasAnyPeriodLimits(request)) {
        try {
          period = await this.#periods.admit(periodHolders(request), Math.max(amount, request.periodAmount ?? 0));
        } catch (error) {
          for (const hold of holds) this.#release(hold);
          throw error;
        }
      }
      const reservation: Reservation = Object.freeze({ userId, tokenId, amount });
      this.#reservations.set(reservation, { refs, holds, done: false, period });
      return reservation;
    } catch (error) {
      this.#finished();
      throw error;
    }
  }

  /**
   * Holds `amount` more for an open reservation (a stream whose output outgrew it), on the same
   * accounts and exactly as `reserve` holds: out of the lease, which only ever holds quota a
   * conditional UPDATE took, so an extension is never promised beyond the balance on any pod.
   * Answers false, holding nothing, when the wallet or the token cannot cover it (or the reservation
   * ended meanwhile); `settle` and `refund` release the extensions with the rest.
   */
  async extend(reservation: Reservation, amount: number): Promise<boolean> {
    checkQuota(amount, 'amount');
    const state = this.#reservations.get(reservation);
    if (!state) throw new Error('not a reservation of this ledger');
    if (state.done) return false;
    let holds: Hold[];
    try {
      holds = await this.#holdAll(state.refs, amount);
    } catch (error) {
      if (error instanceof AppError) return false;
      throw error;
    }
    if (state.done) {
      // Settled or refunded while the extension waited for a take: nothing may hold it any more.
      for (const hold of holds) this.#release(hold);
      return false;
    }
    if (state.period) {
      // The period budgets grow with it, or the extension is refused (the stream is cut at the limit).
      if (!(await this.#periods?.extend(state.period, amount))) {
        for (const hold of holds) this.#release(hold);
        return false;
      }
      if (state.done) {
        // Settled meanwhile against what the period held before: take the extension back out.
        for (const hold of holds) this.#release(hold);
        await this.#periods?.retract(state.period, amount);
        return false;
      }
      // In the same turn as the check, so a settlement sees either both or neither.
      state.period.amount += amount;
    }
    state.holds.push(...holds);
    return true;
  }

  /**
   * Charges exactly `actualQuota` for the request, whatever it reserved: the unused part goes back
   * to the lease, an extra charge is taken from the lease, topped up, or (when the balance cannot
   * cover it) charged anyway. Answers the quota charged, for the usage recorder.
   */
  async settle(reservation: Reservation, actualQuota: number, options: SpendOptions = {}): Promise<number> {
    checkQuota(actualQuota, 'actualQuota');
    const state = this.#claim(reservation);
    if (!state) throw new Error('this reservation was already settled or refunded');
    try {
      for (const hold of state.holds) this.#release(hold);
      await Promise.all(state.refs.map((ref) => this.#spend(ref, actualQuota, options)));
      if (state.period) await this.#periods?.settle(state.period, actualQuota);
      return actualQuota;
    } finally {
      this.#finished();
    }
  }

  /**
   * Charges exactly `actualQuota` for the request like `settle`, but durably: in one database
   * transaction together with the caller's `write` (a task row, its consume log and counters), which
   * calls `chargeBalances` at its place in the lock order (see ChargeBalances). The charge comes out
   * of the lease the reservation was promised from (its row, not just memory), so a crash right after
   * COMMIT neither loses nor repeats it, and nothing else is charged through the ledger. Rejects, and
   * charges nothing, if the transaction does; the reservation is over either way.
   */
  async settleWithin<T>(
    reservation: Reservation,
    actualQuota: number,
    write: (trx: Transaction<Database>, chargeBalances: ChargeBalances) => Promise<T>,
  ): Promise<T> {
    checkQuota(actualQuota, 'actualQuota');
    const state = this.#claim(reservation);
    if (!state) throw new Error('this reservation was already settled or refunded');
    try {
      const accounts = state.refs.map((ref) => this.#account(ref));
      const written = await lockedInOrder(accounts, () =>
        this.#leases.chargeWithin(
          accounts.map((account) => ({ account, amount: actualQuota })),
          () => {
            for (const hold of state.holds) this.#release(hold);
          },
          write,
        ),
      ).catch(async (error: unknown) => {
        if (state.period) await this.#periods?.refund(state.period);
        throw error;
      });
      if (state.period) await this.#periods?.settle(state.period, actualQuota);
      return written;
    } finally {
      this.#finished();
    }
  }

  /**
   * Charges `quota` with no reservation and no balance check, as the part of a settlement above its
   * reservation is charged: for work an upstream already did that nothing held for (a Realtime
   * response that finished after its session was refused more, or after its client left).
   */
  async chargeOwed(
    account: Omit<ReserveRequest, 'amount'>,
    quota: number,
    options: SpendOptions = {},
  ): Promise<number> {
    checkQuota(quota, 'quota');
    this.#open++;
    try {
      await Promise.all(chargedAccounts(account).map((ref) => this.#spend(ref, quota, options)));
      await this.#periods?.charge(periodHolders(account), quota);
      return quota;
    } finally {
      this.#finished();
    }
  }

  /** The accounts a settlement of this reservation charges (for its consume record's `ledgerCharge`). */
  chargedAccounts(reservation: Reservation): AccountRef[] {
    const state = this.#reservations.get(reservation);
    if (!state) throw new Error('not a reservation of this ledger');
    return state.refs;
  }

  /**
   * Runs `write` (a usage batch: its consume logs and counters) in one transaction that, at its place in
   * the lock order (`chargeBalances`, see ChargeBalances), takes the batch's logged spending off the
   * accounts: out of this pod's lease rows as far as they hold it, the rest off the balances. `batch` names
   * the attempt across retries: when an earlier attempt's COMMIT reply was lost, its transaction id says
   * whether it committed, and a committed batch is not written twice.
   */
  async writeLogged(
    batch: object,
    charges: readonly LoggedCharge[],
    write: (trx: Transaction<Database>, chargeBalances: ChargeBalances) => Promise<void>,
  ): Promise<void> {
    const earlier = this.#unresolvedBatches.get(batch);
    if (earlier !== undefined) {
      const status = await transactionStatus(this.#db, earlier);
      if (status === 'in progress') throw new Error(`usage batch write ${earlier} is still in progress`);
      this.#unresolvedBatches.delete(batch);
      if (status === 'committed') return;
      if (status === null) this.#log.error({ xid: earlier }, 'usage batch outcome unknown; written again');
    }
    const accounts = charges.map((charge) => ({ account: this.#account(charge.account), amount: charge.amount }));
    await lockedInOrder(
      accounts.map((c) => c.account),
      () =>
        this.#leases.chargeLogged(
          accounts.sort((a, b) => byLockOrder(a.account, b.account)),
          write,
          (xid) => this.#unresolvedBatches.set(batch, xid),
        ),
    );
    this.#unresolvedBatches.delete(batch);
  }

  /** Charges nothing: everything reserved goes back to the lease. Idempotent. */
  async refund(reservation: Reservation): Promise<void> {
    const state = this.#claim(reservation);
    if (!state) return;
    for (const hold of state.holds) this.#release(hold);
    try {
      if (state.period) await this.#periods?.refund(state.period);
    } finally {
      this.#finished();
    }
  }

  /** What the user has left as this pod sees it: the balance of record plus its lease, minus what is reserved. */
  balance(userId: number): number | undefined {
    return this.#view({ kind: 'user', id: userId });
  }

  tokenBalance(tokenId: number): number | undefined {
    return this.#view({ kind: 'token', id: tokenId });
  }

  stats(): LedgerStats {
    const stats: LedgerStats = {
      accounts: this.#accounts.size,
      leases: 0,
      leasedQuota: 0,
      reservedQuota: 0,
      openReservations: this.#open,
      unflushedQuota: 0,
      debtQuota: 0,
    };
    for (const account of this.#accounts.values()) {
      if (account.leaseId !== undefined) stats.leases++;
      stats.leasedQuota += account.rowAmount - account.unflushed - account.unlogged;
      stats.reservedQuota += account.reserved;
      stats.unflushedQuota += account.unflushed + account.unlogged;
      stats.debtQuota += account.debt + account.unloggedDirect;
    }
    return stats;
  }

  /** Writes all spending to the lease rows and renews them now (the timer does it every flush interval). */
  flush(): Promise<void> {
    return this.#sync(true);
  }

  /**
   * Stops taking reservations, waits (up to the drain timeout) for open ones, then gives every
   * lease back. A reservation settled after that is charged to its balances directly. `writeLogs`
   * (the usage recorder's flush) runs before the leases go back, up to the drain timeout: spending
   * settled `withLog` is still in the lease rows, and a lease given back with it would hand quota
   * already spent back to the balance, for another pod to promise before the batch charges it.
   */
  close(writeLogs?: () => Promise<void>): Promise<void> {
    this.#closing ??= this.#shutdown(writeLogs);
    return this.#closing;
  }

  async #shutdown(writeLogs: (() => Promise<void>) | undefined): Promise<void> {
    this.#accepting = false;
    clearInterval(this.#timer);
    await this.#sweeper?.stop();
    if (!(await this.#drained())) {
      this.#log.warn({ open: this.#open }, 'quota ledger closing with reservations still open');
    }
    await this.#syncing?.catch(() => {});
    if (writeLogs) await this.#within(writeLogs(), 'usage logs not written before the quota leases go back');
    this.#returning = true;
    await Promise.all(
      [...this.#accounts.values()].map((account) =>
        account.lock
          .run(() => this.#leases.giveBack(account, true))
          .catch((err: unknown) => this.#log.error({ err, account: account.ref }, 'could not give a quota lease back')),
      ),
    );
  }

  /** Waits for `work` up to the drain timeout; a failure or the timeout is logged, not thrown. */
  async #within(work: Promise<void>, failure: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not done within ${this.#drainTimeoutMs} ms`)), this.#drainTimeoutMs);
    });
    try {
      await Promise.race([work, timedOut]);
    } catch (err) {
      this.#log.warn({ err }, failure);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Resolves once no reservation is open, one macrotask after the last settled: what its caller does
   * in the same turn as the settlement (queueing the usage record) is done by then, so whatever closes
   * after the ledger (the usage recorder) still takes it.
   */
  #drained(): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), this.#drainTimeoutMs);
      this.#onDrained = () => {
        clearTimeout(timer);
        resolve(true);
      };
      if (this.#open === 0) this.#notifyDrained();
    });
  }

  #finished(): void {
    this.#open--;
    if (this.#open === 0) this.#notifyDrained();
  }

  #notifyDrained(): void {
    if (!this.#onDrained) return;
    setImmediate(() => {
      if (this.#open === 0) this.#onDrained?.();
    });
  }

  #claim(reservation: Reservation): ReservationState | undefined {
    const state = this.#reservations.get(reservation);
    if (!state) throw new Error('not a reservation of this ledger');
    if (state.done) return undefined;
    state.done = true;
    return state;
  }

  #account(ref: AccountRef): AccountLease {
    const key = accountKey(ref);
    let account = this.#accounts.get(key);
    if (!account) {
      account = new AccountLease(ref, this.#leases.nextGeneration(), now());
      this.#accounts.set(key, account);
    }
    // Any use keeps the account (and its lease) from being dropped as idle.
    account.lastActive = now();
    return account;
  }

  #view(ref: AccountRef): number | undefined {
    const account = this.#accounts.get(accountKey(ref));
    if (account?.balance === undefined) return undefined;
    return account.balance + (account.leaseId === undefined ? 0 : account.available) - account.debt;
  }

  /** A reservation out of the lease if it can be promised without the database. */
  #tryHold(account: AccountLease, amount: number): Hold | undefined {
    const at = now();
    // Even a zero reservation needs something left: new-api refuses a balance <= 0.
    if (!account.usable(at) || account.available < Math.max(amount, 1)) return undefined;
    account.reserved += amount;
    account.holds++;
    account.lastActive = at;
    return { ref: account.ref, generation: account.generation, amount };
  }

  async #hold(ref: AccountRef, amount: number): Promise<Hold> {
    const account = this.#account(ref);
    const fast = this.#tryHold(account, amount);
    if (fast) {
      this.#topUpIfLow(account);
      return fast;
    }
    return account.lock.run(async () => {
      try {
        return await this.#holdLocked(account, amount);
      } catch (error) {
        if (!isStoreUnavailable(error)) throw error;
        // The database is unreachable: known accounts keep being served on outage credit.
        const credit = this.#tryOutageHold(account, amount);
        if (credit) return credit;
        throw error;
      }
    });
  }

  async #holdLocked(account: AccountLease, amount: number): Promise<Hold> {
    // Taking may race with reservations served from the lease meanwhile: take again, a few times.
    for (let attempt = 0; ; attempt++) {
      if (account.uncertain) await this.#leases.reconcile(account);
      const hold = this.#tryHold(account, amount);
      if (hold) return hold;
      if (this.#returning) throw new AppError(LEDGER_ERRORS.quota_ledger_closed);
      // Short of quota: take a slice. Only past its renewal: renew, taking nothing.
      const need = Math.max(amount, 1) - account.available;
      let result: LeaseWriteResult;
      try {
        result = await this.#leases.take(account, need, { force: false, grow: need > 0 });
      } catch (error) {
        if (!(error instanceof AccountMissingError)) throw error;
        result = { status: 'refused', balance: 0 };
      }
      if (result.status === 'refused' || attempt >= 5) throw this.#refusal(account, amount);
    }
  }

  /**
   * A hold while the database is unreachable (issue 18): out of what the lease has left even past its
   * renewal (nobody can sweep it meanwhile), and beyond it up to an outage credit of at most one slice,
   * never more than the balance last seen. What is spent beyond the lease becomes debt, charged by the
   * sync loop once the database is back; the debt counts against the credit, so the exposure of each
   * account on this pod stays within it for the whole outage.
   */
  #tryOutageHold(account: AccountLease, amount: number): Hold | undefined {
    if (this.#returning) return undefined;
    const credit = Math.min(this.#sliceQuota, Math.max(0, account.balance ?? 0));
    const owed = account.debt + account.unloggedDirect;
    if (account.available + credit - owed < Math.max(amount, 1)) return undefined;
    account.reserved += amount;
    account.holds++;
    return { ref: account.ref, generation: account.generation, amount };
  }

  /** Holds `amount` on every account in order (the wallet first), or on none: a refusal releases what it held. */
  async #holdAll(refs: AccountRef[], amount: number): Promise<Hold[]> {
    const holds: Hold[] = [];
    try {
      for (const ref of refs) holds.push(await this.#hold(ref, amount));
      return holds;
    } catch (error) {
      for (const hold of holds) this.#release(hold);
      throw error;
    }
  }

  #refusal(account: AccountLease, amount: number): AppError {
    const remain = (account.balance ?? 0) + (account.leaseId === undefined ? 0 : account.available) - account.debt;
    const params = { remain: this.#format(remain), need: this.#format(amount) };
    if (account.ref.kind === 'token') return new AppError(LEDGER_ERRORS.pre_consume_token_quota_failed, params);
    return new AppError(remain <= 0 ? LEDGER_ERRORS.insufficient_user_quota : USER_QUOTA_BELOW_RESERVE, params);
  }

  #release(hold: Hold): void {
    const account = this.#accounts.get(accountKey(hold.ref));
    // An older generation's lease was given back whole, this reservation included.
    if (!account || account.generation !== hold.generation) return;
    account.reserved -= hold.amount;
    account.holds--;
  }

  /**
   * Records `amount` as spent by the account. What the lease has left is spent at once, in the same
   * turn as the release before it, so no other request can take a settling request's own
   * reservation meanwhile; only the rest (at most the charge above the reservation) waits for a take.
   */
  async #spend(ref: AccountRef, amount: number, options: SpendOptions): Promise<void> {
    if (amount === 0) return;
    const account = this.#account(ref);
    const spendFromLease = (part: number) =>
      options.withLog ? this.#logFromLease(account, part) : this.#spendFromLease(account, part);
    let owed = amount - spendFromLease(amount);
    if (owed === 0) return;
    await account.lock.run(async () => {
      try {
        for (;;) {
          owed -= spendFromLease(owed);
          if (owed === 0) return;
          // Logged spending no lease covers is charged off the balance by the batch that logs it.
          if (options.withLog && this.#returning) return;
          if (this.#returning) {
            account.debt += owed;
            owed = 0;
            await this.#leases.chargeDebt(account);
            return;
          }
          await this.#leases.take(account, owed, { force: true, grow: true });
        }
      } catch (err) {
        if (err instanceof AccountMissingError) return;
        if (options.withLog) {
          account.unloggedDirect += owed;
          return;
        }
        // The charge is owed either way: the next write on this account (or close) charges it.
        account.debt += owed;
        // While the database is away this is every request past the lease: the debt gauge shows it.
        if (isStoreUnavailable(err)) return;
        this.#log.warn({ err, account: ref, amount: owed }, 'quota charge deferred: the database did not take it');
      }
    });
  }

  /**
   * Spends up to `amount` out of the lease and answers how much. A lease past its renewal is fine
   * here: if it was swept meanwhile, the loss turns this spending into debt.
   */
  #spendFromLease(account: AccountLease, amount: number): number {
    if (account.leaseId === undefined) return 0;
    // Holds on outage credit can leave less than nothing available.
    const part = Math.max(0, Math.min(amount, account.available));
    account.unflushed += part;
    return part;
  }

  /** Like #spendFromLease, for spending the usage batch writes with its log (writeLogged), never the flush. */
  #logFromLease(account: AccountLease, amount: number): number {
    if (account.leaseId === undefined) return 0;
    // Holds on outage credit can leave less than nothing available.
    const part = Math.max(0, Math.min(amount, account.available));
    account.unlogged += part;
    return part;
  }

  /** Tops a lease up in the background before it runs dry, so requests rarely wait for the database. */
  #topUpIfLow(account: AccountLease): void {
    if (account.lock.locked || this.#returning) return;
    if (account.balance !== undefined && account.balance <= 0) return;
    if (account.available >= account.slice * LOW_WATER) return;
    account.lock
      .run(() => this.#leases.take(account, 0, { force: false, grow: true }))
      .catch((err: unknown) => {
        if (!isStoreUnavailable(err)) this.#log.warn({ err, account: account.ref }, 'quota lease top-up failed');
      });
  }

  /**
   * Flushes spending and renews leases (one statement for all), gives idle leases back and repairs
   * accounts with debt or an uncertain write. `all` (flush) waits for every account; the timer only
   * takes accounts that are free and due.
   */
  #sync(all: boolean): Promise<void> {
    if (this.#syncing && !all) return this.#syncing;
    const run = (this.#syncing ?? Promise.resolve())
      .catch(() => {})
      .then(() => this.#syncOnce(all))
      .finally(() => {
        if (this.#syncing === run) this.#syncing = undefined;
      });
    this.#syncing = run;
    return run;
  }

  async #syncOnce(all: boolean): Promise<void> {
    const at = now();
    const batch: AccountLease[] = [];
    const singles: Array<Promise<unknown>> = [];
    const alone = (account: AccountLease, write: () => Promise<void>) =>
      singles.push(write().finally(() => account.lock.release()));
    // Locks that are waited for are taken in one order (byLockOrder), as settleWithin takes them.
    for (const [key, account] of [...this.#accounts].sort(([, a], [, b]) => byLockOrder(a, b))) {
      if (all) await account.lock.acquire();
      else if (!account.lock.tryAcquire()) continue;
      // Not while spending waits for its log: given back, it would return quota already spent.
      const idle = account.holds === 0 && account.unlogged === 0 && at - account.lastActive >= this.#idleMs;
      if (account.uncertain || account.debt > 0) {
        alone(account, () => this.#leases.repair(account));
      } else if (account.leaseId === undefined) {
        // Forget accounts nobody asked about for a while (a settlement later simply starts afresh).
        if (idle) this.#accounts.delete(key);
        account.lock.release();
      } else if (idle && !this.#returning) {
        alone(account, () => this.#leases.giveBack(account, false));
      } else if (all || account.unflushed > 0 || at - account.renewedAt >= this.#renewEveryMs) {
        batch.push(account);
      } else {
        account.lock.release();
      }
    }
    singles.push(
      this.#leases.renew(batch).finally(() => {
        for (const account of batch) account.lock.release();
      }),
    );
    const failed = (await Promise.allSettled(singles)).filter((r) => r.status === 'rejected');
    for (const failure of failed) this.#log.warn({ err: failure.reason }, 'quota ledger write failed; will retry');
  }
}
