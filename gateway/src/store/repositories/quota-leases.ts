import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../database.ts';

/**
 * Quota leases (DESIGN.md §3): slices of a balance that one pod took from Postgres and spends in
 * memory. A lease row's `amount` is quota taken from the account and not yet spent as far as the
 * database knows; `expires_at` is Unix seconds by the database clock (pods never compare their own
 * clocks with it). Every function that moves quota between an account and a lease does so in one
 * transaction, so the account's balance plus its leases plus what was spent never drifts.
 */

type Db = Kysely<Database> | Transaction<Database>;

export type AccountKind = 'user' | 'token';

/** A balance of record: a user's wallet (`users.quota`) or a token's `remain_quota`. */
export interface AccountRef {
  kind: AccountKind;
  id: number;
}

export interface LeaseRow {
  id: string;
  account_type: AccountKind;
  account_id: number;
  holder: string;
  amount: number;
}

/** Whole seconds on the database clock: the only clock lease expiry is ever measured with. */
const dbNowSeconds = sql<number>`floor(extract(epoch from now()))::bigint`;

async function lockBalance(trx: Transaction<Database>, account: AccountRef): Promise<number | undefined> {
  const row =
    account.kind === 'user'
      ? await trx
          .selectFrom('users')
          .select('quota as balance')
          .where('id', '=', account.id)
          .forUpdate()
          .executeTakeFirst()
      : await trx
          .selectFrom('tokens')
          .select('remain_quota as balance')
          .where('id', '=', account.id)
          .forUpdate()
          .executeTakeFirst();
  return row?.balance;
}

/**
 * Subtracts `amount` (adds when negative) and answers the new balance. With `atLeast`, only if
 * the balance is at least that much: the atomic condition that makes overspending impossible.
 */
async function moveBalance(db: Db, account: AccountRef, amount: number, atLeast?: number): Promise<number | undefined> {
  if (account.kind === 'user') {
    let query = db
      .updateTable('users')
      .set((eb) => ({ quota: eb('quota', '-', amount) }))
      .where('id', '=', account.id);
    if (atLeast !== undefined) query = query.where('quota', '>=', atLeast);
    return (await query.returning('quota as balance').executeTakeFirst())?.balance;
  }
  let query = db
    .updateTable('tokens')
    .set((eb) => ({ remain_quota: eb('remain_quota', '-', amount) }))
    .where('id', '=', account.id);
  if (atLeast !== undefined) query = query.where('remain_quota', '>=', atLeast);
  return (await query.returning('remain_quota as balance').executeTakeFirst())?.balance;
}

/** Thrown inside a transaction to roll it back: the lease row is gone (the sweeper returned it). */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
}

/** Thrown inside a transaction to roll it back: the account row does not exist. */
export class AccountMissingError extends Error {
  override name = 'AccountMissingError';
}

/**
 * Runs `run` in a transaction whose id is reported (through `onXid`) before anything is written,
 * so that a caller whose COMMIT failed in flight can ask `transactionStatus` what became of it.
 */
export async function trackedTransaction<T>(
  db: Kysely<Database>,
  onXid: (xid: string) => void,
  run: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ xid: string }>`select txid_current()::text as xid`.execute(trx);
    onXid(rows[0]!.xid);
    return run(trx);
  });
}

/** What became of a transaction: null when the database no longer knows (far too old). */
export async function transactionStatus(
  db: Kysely<Database>,
  xid: string,
): Promise<'committed' | 'aborted' | 'in progress' | null> {
  const { rows } = await sql<{ status: string | null }>`select txid_status(${xid}::bigint) as status`.execute(db);
  return (rows[0]?.status ?? null) as 'committed' | 'aborted' | 'in progress' | null;
}

export interface LeaseWrite {
  account: AccountRef;
  holder: string;
  leaseId: string;
  /** False when the row is to be created (only if the take brings something). */
  exists: boolean;
  /** The row's amount before the take, with the holder's spending so far already subtracted. */
  amount: number;
  /** Spending no lease covers any more: charged to the account unconditionally. */
  debt: number;
  /** The least the take must bring; 0 only renews the lease and flushes. */
  need: number;
  /** How much to take when the balance (after the debt) allows: clamped to [need, balance]. */
  slice: (balance: number) => number;
  /** Take `need` even if the balance does not cover it (a charge already incurred). */
  force: boolean;
  ttlSeconds: number;
}

export type LeaseWriteResult =
  /** The row now holds `amount + taken` with a fresh expiry; the debt was charged. */
  | { status: 'taken'; taken: number; balance: number }
  /** Nothing taken (the balance could not cover `need`); the debt was charged and the row renewed. */
  | { status: 'refused'; balance: number };

/**
 * Takes a slice of the balance into the holder's lease, flushes its spending and renews its
 * expiry, in one transaction. The balance is read under a row lock to size the slice; the
 * decrement itself still carries the condition `balance >= debt + slice`.
 * Throws LeaseLostError when an existing lease row has gone, AccountMissingError when the account has.
 */
export async function writeLease(trx: Transaction<Database>, write: LeaseWrite): Promise<LeaseWriteResult> {
  const { account, debt, need } = write;
  // Lease row first, then the balance: the order the sweeper and returnLease lock them in (no deadlock).
  if (write.exists) {
    const held = await trx
      .selectFrom('quota_leases')
      .select('id')
      .where('id', '=', write.leaseId)
      .where('holder', '=', write.holder)
      .forUpdate()
      .executeTakeFirst();
    if (!held) throw new LeaseLostError(`lease ${write.leaseId} is gone`);
  }
  const before = await lockBalance(trx, account);
  if (before === undefined) throw new AccountMissingError(`${account.kind} ${account.id} does not exist`);
  const free = before - debt;
  let taken = 0;
  let forced = false;
  if (free >= need) {
    taken = Math.min(free, Math.max(need, Math.floor(write.slice(free))));
  } else if (write.force) {
    taken = need;
    forced = true;
  }
  let balance = before;
  if (debt + taken > 0) {
    const after = await moveBalance(trx, account, debt + taken, forced || taken === 0 ? undefined : debt + taken);
    if (after === undefined) throw new Error(`the balance of ${account.kind} ${account.id} changed under its lock`);
    balance = after;
  }
  const amount = write.amount + taken;
  if (write.exists) {
    const renewed = await trx
      .updateTable('quota_leases')
      .set({ amount, expires_at: sql<number>`${dbNowSeconds} + ${write.ttlSeconds}` })
      .where('id', '=', write.leaseId)
      .returning('id')
      .executeTakeFirst();
    if (!renewed) throw new Error(`lease ${write.leaseId} vanished under its lock`);
  } else if (amount > 0) {
    await trx
      .insertInto('quota_leases')
      .values({
        id: write.leaseId,
        account_type: account.kind,
        account_id: account.id,
        holder: write.holder,
        amount,
        created_at: sql<number>`${dbNowSeconds}`,
        expires_at: sql<number>`${dbNowSeconds} + ${write.ttlSeconds}`,
      })
      .execute();
  }
  return need > 0 && taken < need ? { status: 'refused', balance } : { status: 'taken', taken, balance };
}

/**
 * Flushes and renews many leases of one holder in one statement: each row's amount becomes the
 * given one. Answers the ids that were still there; a missing one was returned by the sweeper.
 */
export async function renewLeases(
  db: Db,
  holder: string,
  leases: ReadonlyArray<{ id: string; amount: number }>,
  ttlSeconds: number,
): Promise<Set<string>> {
  if (leases.length === 0) return new Set();
  const values = sql.join(leases.map((l) => sql`(${l.id}::text, ${l.amount}::bigint)`));
  const { rows } = await sql<{ id: string }>`
    update quota_leases as l
    set amount = v.amount, expires_at = ${dbNowSeconds} + ${ttlSeconds}
    from (values ${values}) as v(id, amount)
    where l.id = v.id and l.holder = ${holder}
    returning l.id`.execute(db);
  return new Set(rows.map((r) => r.id));
}

export type LeaseReturnResult = { status: 'returned'; credited: number; balance: number } | { status: 'lost' };

/**
 * Gives a lease back: deletes the row and credits the account with what it held minus what the
 * holder spent since its last flush (`spent`) and minus uncovered spending (`debt`), atomically.
 */
export async function returnLease(
  trx: Transaction<Database>,
  lease: { id: string; holder: string; account: AccountRef; spent: number; debt: number },
): Promise<LeaseReturnResult> {
  const row = await trx
    .deleteFrom('quota_leases')
    .where('id', '=', lease.id)
    .where('holder', '=', lease.holder)
    .returning('amount')
    .executeTakeFirst();
  if (!row) return { status: 'lost' };
  const credited = row.amount - lease.spent - lease.debt;
  const balance = await moveBalance(trx, lease.account, -credited);
  if (balance === undefined) throw new AccountMissingError(`${lease.account.kind} ${lease.account.id} does not exist`);
  return { status: 'returned', credited, balance };
}

/** Charges spending that no lease covers, unconditionally (the balance may go negative). */
export async function chargeAccount(db: Db, account: AccountRef, amount: number): Promise<number | undefined> {
  return moveBalance(db, account, amount);
}

export async function findLease(db: Db, id: string): Promise<LeaseRow | undefined> {
  const row = await db
    .selectFrom('quota_leases')
    .select(['id', 'account_type', 'account_id', 'holder', 'amount'])
    .where('id', '=', id)
    .executeTakeFirst();
  return row as LeaseRow | undefined;
}

export interface SweptLease {
  id: string;
  account_type: AccountKind;
  account_id: number;
  holder: string;
  amount: number;
}

/**
 * Returns leases that expired more than `graceSeconds` ago (by the database clock) to their
 * accounts, each in its own transaction: the row is deleted and the balance credited together or
 * not at all, and a lease is returned once even if two sweepers race. One account row per
 * transaction, locked after the lease row as everywhere else, so a sweep never deadlocks with the
 * ledger or with batched counter updates. A holder renewing concurrently either renews first (and
 * the row no longer matches) or finds it gone.
 */
export async function sweepExpiredLeases(
  db: Kysely<Database>,
  graceSeconds: number,
  options: { limit?: number; signal?: AbortSignal } = {},
): Promise<SweptLease[]> {
  const expired = await db
    .selectFrom('quota_leases')
    .select('id')
    .where('expires_at', '<', sql<number>`${dbNowSeconds} - ${graceSeconds}`)
    .orderBy('expires_at')
    .limit(options.limit ?? 1000)
    .execute();
  const swept: SweptLease[] = [];
  for (const { id } of expired) {
    if (options.signal?.aborted) break;
    const lease = await db.transaction().execute(async (trx) => {
      const row = await trx
        .deleteFrom('quota_leases')
        .where('id', '=', id)
        .where('expires_at', '<', sql<number>`${dbNowSeconds} - ${graceSeconds}`)
        .returning(['id', 'account_type', 'account_id', 'holder', 'amount'])
        .executeTakeFirst();
      if (!row) return undefined;
      const account: AccountRef = { kind: row.account_type as AccountKind, id: row.account_id };
      // A vanished account takes its lease with it.
      await moveBalance(trx, account, -row.amount);
      return row as SweptLease;
    });
    if (lease) swept.push(lease);
  }
  return swept;
}

/**
 * Quota currently held in leases, per account: what a balance of record does not show while pods
 * hold slices of it (a view of "what is left" adds it back).
 */
export async function leasedQuota(db: Db, kind: AccountKind, ids: readonly number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('quota_leases')
    .select(['account_id', sql<number>`sum(amount)::bigint`.as('amount')])
    .where('account_type', '=', kind)
    .where('account_id', 'in', ids)
    .groupBy('account_id')
    .execute();
  return new Map(rows.map((r) => [r.account_id, r.amount]));
}

/**
 * Takes `amount` out of a holder's lease row as spent (a charge written in the caller's transaction,
 * not by the next flush), without renewing it. Answers false when the row is gone: the sweeper
 * returned it, the amount with it, so the caller charges the balance instead.
 */
export async function spendFromLease(db: Db, lease: { id: string; holder: string; amount: number }): Promise<boolean> {
  const row = await db
    .updateTable('quota_leases')
    .set((eb) => ({ amount: eb('amount', '-', lease.amount) }))
    .where('id', '=', lease.id)
    .where('holder', '=', lease.holder)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** The balance column of each kind of account. */
const BALANCE_COLUMN = { user: 'quota', token: 'remain_quota' } as const;
type BalanceColumn<K extends AccountKind> = (typeof BALANCE_COLUMN)[K];

/**
 * Rows of users or tokens with their balance as their owners should see it: the balance of record plus
 * what active leases hold of it (quota pods took and may not have spent). Every view of "quota left"
 * goes through this one function, so a user never sees less than is truly left (at most, for the second
 * before a usage batch writes it, spending not yet logged). One query for all the rows.
 */
export async function withLeasedQuota<
  K extends AccountKind,
  R extends { id: number } & Record<BalanceColumn<K>, number>,
>(db: Db, kind: K, rows: R[]): Promise<R[]> {
  const leased = await leasedQuota(
    db,
    kind,
    rows.map((row) => row.id),
  );
  if (leased.size === 0) return rows;
  const column: BalanceColumn<K> = BALANCE_COLUMN[kind];
  return rows.map((row) => {
    const held = Number(leased.get(row.id) ?? 0);
    return held === 0 ? row : { ...row, [column]: Number(row[column]) + held };
  });
}
