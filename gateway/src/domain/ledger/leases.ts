import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../store/database.ts';
import {
  AccountMissingError,
  chargeAccount,
  findLease,
  LeaseLostError,
  type LeaseWriteResult,
  renewLeases,
  returnLease,
  spendFromLease,
  trackedTransaction,
  transactionStatus,
  writeLease,
} from '../../store/repositories/quota-leases.ts';
import type { AccountLease, UncertainWrite } from './account.ts';

/** The subset of pino's logger the ledger uses. */
export interface LedgerLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface LeaseWriterConfig {
  db: Kysely<Database>;
  holder: string;
  logger: LedgerLogger;
  sliceQuota: number;
  ttlSeconds: number;
}

/** One account's part of a charge written together with the caller's rows. */
export interface DirectCharge {
  account: AccountLease;
  amount: number;
}

/**
 * Writes the ledger's side of a charge inside the caller's transaction; the caller calls it after its
 * log and dashboard rows and before the counter rows of users, tokens and channels (the order every
 * writer of those rows locks them in, so the transaction cannot deadlock with the usage writer).
 */
export type ChargeBalances = () => Promise<void>;

/** One account's part of a charge written in a caller's transaction. */
interface ChargePlan {
  account: AccountLease;
  amount: number;
  leaseId: string | undefined;
  /** What comes out of the lease row; the rest comes off the balance. */
  fromLease: number;
  /** The lease row was gone: all of it came off the balance. */
  lost: boolean;
  balance: number | undefined;
}

/** A lease never takes more than this share of what is left, so other pods still find some. */
const BALANCE_SHARE = 0.25;

const now = () => performance.now();

/**
 * Every database write of the ledger, each on one account's lease (the caller holds that
 * account's lock; `renew` takes many at once). Each write moves quota between the balance, the
 * lease row, flushed spending and charged debt in one transaction, and the account's in-memory
 * state follows only once the write is known to have committed.
 */
export class LeaseWriter {
  readonly #db: Kysely<Database>;
  readonly #holder: string;
  readonly #log: LedgerLogger;
  readonly #sliceQuota: number;
  readonly #ttlSeconds: number;
  /** How long after a write a lease may still back new reservations: inside its expiry, with margin. */
  readonly #validMs: number;
  #generationCounter = 0;

  constructor(config: LeaseWriterConfig) {
    this.#db = config.db;
    this.#holder = config.holder;
    this.#log = config.logger;
    this.#sliceQuota = config.sliceQuota;
    this.#ttlSeconds = config.ttlSeconds;
    const ttlMs = config.ttlSeconds * 1000;
    // The row's expiry is floor(db now) + ttl: up to a second less than ttl after the write began.
    this.#validMs = ttlMs - 1000 - ttlMs / 10;
  }

  /** A new lease generation: holds of an older one were given back with their lease. */
  nextGeneration(): number {
    return ++this.#generationCounter;
  }

  /**
   * One write on the account's lease (caller holds its lock): charges its debt, flushes its spending,
   * renews it and takes at least `need` more (a slice when `grow`). A lost lease is replaced.
   */
  async take(account: AccountLease, need: number, mode: { force: boolean; grow: boolean }): Promise<LeaseWriteResult> {
    for (;;) {
      if (account.uncertain) await this.reconcile(account);
      const exists = account.leaseId !== undefined;
      const leaseId = account.leaseId ?? randomUUID();
      const flushed = account.unflushed;
      const debt = account.debt;
      const amount = exists ? account.rowAmount - flushed : 0;
      const sentAt = now();
      let result: LeaseWriteResult;
      try {
        result = await this.#tracked(
          [account],
          () => ({ op: 'take', leaseId, flushed, debt }),
          (trx) =>
            writeLease(trx, {
              account: account.ref,
              holder: this.#holder,
              leaseId,
              exists,
              amount,
              debt,
              need: Math.max(0, need),
              slice: (balance) => (mode.grow ? Math.min(this.#sliceQuota, Math.floor(balance * BALANCE_SHARE)) : 0),
              force: mode.force,
              ttlSeconds: this.#ttlSeconds,
            }),
        );
      } catch (error) {
        if (error instanceof LeaseLostError) {
          this.#lose(account);
          continue;
        }
        if (error instanceof AccountMissingError) {
          // Nothing can be charged to or returned into an account that is gone (its lease row goes with the sweeper).
          this.#log.error({ account: account.ref, debt: account.debt }, 'quota account no longer exists');
          account.retire(this.nextGeneration(), 0);
          account.debt = 0;
        }
        throw error;
      }
      const rowAmount = amount + (result.status === 'taken' ? result.taken : 0);
      account.unflushed -= flushed;
      account.debt -= debt;
      account.balance = result.balance;
      if (result.status === 'taken' && result.taken > 0) account.slice = result.taken;
      if (exists || rowAmount > 0) {
        account.leaseId = leaseId;
        account.rowAmount = rowAmount;
        account.renewedAt = sentAt;
        account.usableUntil = sentAt + this.#validMs;
      }
      return result;
    }
  }

  /**
   * Charges each account `amount` in one transaction that also runs the caller's `write` (the caller
   * holds every account's lock, in the ledger's order). Per account, what its lease has available is
   * taken out of the lease row (spent, like a flush of it); only the rest (a lease lost or given back
   * meanwhile, or a charge above what was reserved) comes off the balance, which then may go below
   * zero exactly as `settle` lets it. Either way `initial = balance + Σ lease rows + Σ spent + debt`
   * holds at COMMIT, and a crash right after it loses nothing: the sweeper returns the row as written.
   * The in-memory lease follows only once the transaction committed. `release` gives the request's
   * reservation back to the leases; it runs in the same turn as the charge is planned, so that nothing
   * else can be promised the quota in between.
   */
  async chargeWithin<T>(
    charges: DirectCharge[],
    release: () => void,
    write: (trx: Transaction<Database>, chargeBalances: ChargeBalances) => Promise<T>,
  ): Promise<T> {
    for (const { account } of charges) if (account.uncertain) await this.reconcile(account);
    release();
    const plans = charges.map(({ account, amount }): ChargePlan => {
      const fromLease = account.leaseId === undefined ? 0 : Math.min(amount, Math.max(0, account.available));
      // Held while the transaction runs, so no reservation is promised out of it meanwhile.
      account.reserved += fromLease;
      return {
        account,
        amount,
        leaseId: account.leaseId,
        fromLease,
        lost: false,
        balance: undefined,
      };
    });
    try {
      const result = await this.#tracked(
        charges.map((c) => c.account),
        (account) => ({ op: 'within', leaseId: account.leaseId, flushed: 0, debt: 0 }),
        async (trx) => {
          let charged = false;
          const value = await write(trx, async () => {
            if (charged) throw new Error('the balances of this charge were already written');
            for (const plan of plans) {
              await this.#chargePlan(trx, plan);
              if (plan.balance === undefined) {
                throw new AccountMissingError(`${plan.account.ref.kind} ${plan.account.ref.id} does not exist`);
              }
            }
            charged = true;
          });
          if (!charged) throw new Error('the transaction of a charge did not write its balances');
          return value;
        },
      );
      for (const plan of plans) {
        plan.account.reserved -= plan.fromLease;
        plan.account.balance = plan.balance;
        if (plan.lost) this.#lose(plan.account);
        else plan.account.rowAmount -= plan.fromLease;
      }
      return result;
    } catch (error) {
      for (const plan of plans) {
        plan.account.reserved -= plan.fromLease;
        // COMMIT's reply lost: counted as spent until reconcile reads the row, so that nothing is
        // promised meanwhile out of quota that may be gone.
        if (plan.account.uncertain) plan.account.rowAmount -= plan.fromLease;
      }
      throw error;
    }
  }

  /**
   * Writes spending settled with its consume logs (`withLog`) in the transaction `write` runs (the usage
   * batch with those logs; the caller holds every account's lock, in the ledger's order): per account, what
   * this pod spent out of its lease and has not logged comes out of the lease row, the rest (spending of a
   * lease given back or swept since, which took it back to the balance) off the balance. So the logs, the
   * used-quota counters and the balance change reach Postgres together or not at all, and the books hold
   * after a crash at any moment: `initial = balance + Σ lease rows + Σ logged spending`.
   * `onXid` learns the transaction's id before anything is written (a lost COMMIT reply is resolved by it).
   */
  async chargeLogged(
    charges: DirectCharge[],
    write: (trx: Transaction<Database>, chargeBalances: ChargeBalances) => Promise<void>,
    onXid: (xid: string) => void,
  ): Promise<void> {
    for (const { account } of charges) if (account.uncertain) await this.reconcile(account);
    const plans = charges.map(
      ({ account, amount }): ChargePlan => ({
        account,
        amount,
        leaseId: account.leaseId,
        fromLease: account.leaseId === undefined ? 0 : Math.min(amount, account.unlogged),
        lost: false,
        balance: undefined,
      }),
    );
    const byAccount = new Map(plans.map((plan) => [plan.account, plan]));
    await this.#tracked(
      charges.map((c) => c.account),
      (account) => ({
        op: 'logged',
        leaseId: account.leaseId,
        flushed: 0,
        debt: 0,
        logged: byAccount.get(account)!.fromLease,
      }),
      async (trx) => {
        let charged = false;
        await write(trx, async () => {
          if (charged) throw new Error('the balances of this batch were already written');
          for (const plan of plans) await this.#chargePlan(trx, plan);
          charged = true;
        });
        if (!charged) throw new Error('the transaction of a usage batch did not write its balances');
      },
      onXid,
    );
    for (const plan of plans) {
      // A deleted account (a token removed meanwhile) has nothing left to charge; its logs are written all the same.
      if (plan.balance === undefined)
        this.#log.warn({ account: plan.account.ref }, 'logged spending of a vanished account');
      else plan.account.balance = plan.balance;
      plan.account.unloggedDirect = Math.max(0, plan.account.unloggedDirect - (plan.amount - plan.fromLease));
      if (plan.lost) {
        this.#lose(plan.account);
        continue;
      }
      plan.account.unlogged -= plan.fromLease;
      plan.account.rowAmount -= plan.fromLease;
    }
  }

  /** One account's part of a charge in `trx`: `fromLease` out of its lease row (if still there), the rest off the balance. */
  async #chargePlan(trx: Transaction<Database>, plan: ChargePlan): Promise<void> {
    plan.lost =
      plan.fromLease > 0 &&
      !(await spendFromLease(trx, { id: plan.leaseId!, holder: this.#holder, amount: plan.fromLease }));
    const direct = plan.lost ? plan.amount : plan.amount - plan.fromLease;
    // Written even when 0: it locks the balance row before the next account's lease row.
    plan.balance = await chargeAccount(trx, plan.account.ref, direct);
  }

  /** The lease row is gone (swept): what the row did not reflect yet was never charged, so it is owed. */
  #lose(account: AccountLease): void {
    this.#log.warn(
      { account: account.ref, lease: account.leaseId, unflushed: account.unflushed, orphaned: account.reserved },
      'quota lease was returned by the sweeper while still held',
    );
    account.retire(this.nextGeneration(), account.unflushed);
  }

  /** Gives the lease back (caller holds its lock). Unless `final`, only if nobody holds part of it. */
  async giveBack(account: AccountLease, final: boolean): Promise<void> {
    if (account.uncertain) await this.reconcile(account);
    if (!final && account.holds > 0) return;
    account.usableUntil = 0;
    const leaseId = account.leaseId;
    if (leaseId !== undefined) {
      const flushed = account.unflushed;
      const debt = account.debt;
      const result = await this.#tracked(
        [account],
        () => ({ op: 'return', leaseId, flushed, debt }),
        (trx) => returnLease(trx, { id: leaseId, holder: this.#holder, account: account.ref, spent: flushed, debt }),
      );
      if (result.status === 'lost') {
        this.#lose(account);
      } else {
        account.unflushed -= flushed;
        account.debt -= debt;
        account.balance = result.balance;
        // Spending recorded while the return was in flight was not part of it.
        account.retire(this.nextGeneration(), account.unflushed);
      }
    }
    if (account.debt > 0) await this.chargeDebt(account);
  }

  async chargeDebt(account: AccountLease): Promise<void> {
    const debt = account.debt;
    const balance = await this.#tracked(
      [account],
      () => ({ op: 'charge', leaseId: undefined, flushed: 0, debt }),
      (trx) => chargeAccount(trx, account.ref, debt),
    );
    account.debt -= debt;
    if (balance === undefined) this.#log.error({ account: account.ref, debt }, 'debt of a vanished account dropped');
    else account.balance = balance;
  }

  /**
   * Runs a write in a transaction whose id is known before COMMIT. If COMMIT fails in flight the
   * write may or may not have happened: the accounts remember it and `#reconcile` asks Postgres.
   */
  async #tracked<T>(
    accounts: AccountLease[],
    describe: (account: AccountLease) => Omit<UncertainWrite, 'xid'>,
    run: (trx: Transaction<Database>) => Promise<T>,
    onXid?: (xid: string) => void,
  ): Promise<T> {
    let xid: string | undefined;
    let ran = false;
    try {
      return await trackedTransaction(
        this.#db,
        (id) => {
          xid = id;
          onXid?.(id);
        },
        async (trx) => {
          const result = await run(trx);
          ran = true;
          return result;
        },
      );
    } catch (error) {
      if (ran && xid !== undefined) {
        for (const account of accounts) account.uncertain = { xid, ...describe(account) };
      }
      throw error;
    }
  }

  async reconcile(account: AccountLease): Promise<void> {
    const write = account.uncertain!;
    const status = await transactionStatus(this.#db, write.xid);
    if (status === 'in progress') throw new Error(`ledger write ${write.xid} is still in progress`);
    account.uncertain = undefined;
    if (status !== 'committed') {
      if (status === null)
        this.#log.error({ write, account: account.ref }, 'ledger write outcome unknown; assumed lost');
      // A charge within was counted as spent meanwhile: the row below says what it really holds.
      if (write.op !== 'within') return;
    } else {
      account.unflushed -= write.flushed;
      account.unlogged -= write.logged ?? 0;
      account.debt -= write.debt;
      if (write.op === 'charge') return;
      if (write.op === 'return') {
        account.retire(this.nextGeneration(), account.unflushed);
        return;
      }
    }
    const row = write.leaseId === undefined ? undefined : await findLease(this.#db, write.leaseId);
    if (row && row.holder === this.#holder) {
      account.leaseId = row.id;
      account.rowAmount = row.amount;
    } else if (account.leaseId !== undefined) {
      this.#lose(account);
    }
  }

  async repair(account: AccountLease): Promise<void> {
    if (account.uncertain) await this.reconcile(account);
    if (account.leaseId !== undefined) await this.take(account, 0, { force: false, grow: false });
    else if (account.debt > 0) await this.chargeDebt(account);
  }

  async renew(batch: AccountLease[]): Promise<void> {
    if (batch.length === 0) return;
    const entries = batch.map((account) => ({
      account,
      id: account.leaseId!,
      flushed: account.unflushed,
      amount: account.rowAmount - account.unflushed,
    }));
    const byAccount = new Map(entries.map((entry) => [entry.account, entry]));
    const sentAt = now();
    const kept = await this.#tracked(
      batch,
      (account) => {
        const entry = byAccount.get(account)!;
        return { op: 'flush', leaseId: entry.id, flushed: entry.flushed, debt: 0 };
      },
      (trx) => renewLeases(trx, this.#holder, entries, this.#ttlSeconds),
    );
    for (const { account, id, flushed, amount } of entries) {
      if (!kept.has(id)) {
        this.#lose(account);
        continue;
      }
      account.rowAmount = amount;
      account.unflushed -= flushed;
      account.renewedAt = sentAt;
      account.usableUntil = sentAt + this.#validMs;
    }
  }
}
