import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database } from '../../../store/database.ts';
import type { AccountKind } from '../../../store/repositories/quota-leases.ts';
import type { LedgerLogger } from '../leases.ts';
import { PERIOD_KINDS, type PeriodKind, periodAt, periodKey, periodName } from './calendar.ts';
import { PeriodQuotaExceeded } from './errors.ts';
import { hasPeriodLimits, type PeriodLimits } from './limits.ts';

/** The limits of a request's holders: the user's, and the token's (absent for the playground). */
export interface PeriodHolders {
  userId: number;
  tokenId?: number | undefined;
  user?: PeriodLimits | undefined;
  token?: PeriodLimits | undefined;
}

/** One (holder, period) a request is counted in, with that period's limits. */
interface Counter {
  kind: AccountKind;
  id: number;
  period: PeriodKind;
  /** The `period_usage.period` key of the period the request was admitted in. */
  key: string;
  endsAtMs: number;
  quotaLimit: number;
  requestLimit: number;
}

/** What an admitted request holds in its periods until it is settled or refunded. */
export interface PeriodHold {
  readonly counters: readonly Counter[];
  /** Grown by the ledger when an extension of the reservation was counted (see `extend`). */
  amount: number;
}

/** The current period of one kind as `/api` shows it. */
export interface PeriodUsageView {
  period: string;
  used_quota: number;
  used_requests: number;
  quota_limit: number;
  request_limit: number;
  /** null when the period has no quota (or request) limit. */
  remain_quota: number | null;
  remain_requests: number | null;
  /** Unix seconds: when the next period starts. */
  resets_at: number;
}

export type PeriodUsageViews = Partial<Record<PeriodKind, PeriodUsageView>>;

const silent: LedgerLogger = { info() {}, warn() {}, error() {} };
const DAY_MS = 86_400_000;

/**
 * Daily, weekly and monthly budgets of tokens and users (issue 17). Usage is a row per (holder,
 * period) in `period_usage`, the period named by its start in the configured zone: a new period is a
 * new row starting at zero, so there is no reset to run, race or repeat across pods.
 *
 * Admission is one transaction of conditional upserts (one per counter, in one order, so concurrent
 * admissions never deadlock): each adds the request's reservation and one request only if the sum
 * stays within the limits, and a refused one rolls the others back. Postgres' row lock makes that
 * exact across pods, embedded or not. Settlement adds the difference between the charge and the
 * reservation to the period the request was admitted in (a request that straddles midnight stays in
 * the period it was admitted in); a refund takes back the reservation and the request.
 */
export class PeriodBudget {
  readonly #db: Kysely<Database>;
  readonly #zone: () => string;
  readonly #clock: () => number;
  readonly #log: LedgerLogger;

  constructor(deps: {
    db: Kysely<Database>;
    /** The IANA zone periods are counted in (option `quota_setting.period_timezone`). */
    zone: () => string;
    /** Unix ms; tests move it across midnight. */
    clock?: (() => number) | undefined;
    logger?: LedgerLogger | undefined;
  }) {
    this.#db = deps.db;
    this.#zone = deps.zone;
    this.#clock = deps.clock ?? Date.now;
    this.#log = deps.logger ?? silent;
  }

  /**
   * Counts a request of `amount` reserved quota in every period its holders have a limit for, or
   * refuses it (PeriodQuotaExceeded) and counts nothing. Even a 0 reservation needs a unit left, as
   * the wallet does. Answers undefined, touching nothing, when no holder has a limit.
   */
  async admit(holders: PeriodHolders, amount: number): Promise<PeriodHold | undefined> {
    const counters = this.#counters(holders);
    if (counters.length === 0) return undefined;
    const need = Math.max(amount, 1);
    for (const counter of counters) {
      if (counter.quotaLimit > 0 && need > counter.quotaLimit) throw this.#refusal(counter, 'quota');
    }
    await this.#db.transaction().execute(async (trx) => {
      for (const counter of counters) {
        if (!(await take(trx, counter, amount, need))) {
          const row = await usageRow(trx, counter);
          const byRequests = counter.requestLimit > 0 && (row?.requests ?? 0) + 1 > counter.requestLimit;
          throw this.#refusal(counter, byRequests ? 'requests' : 'quota');
        }
      }
    });
    return { counters, amount };
  }

  /**
   * Adds `amount` more to every period the request was admitted in, if each still fits its quota
   * limit (requests are not counted again), else adds nothing: for a reservation that grows while
   * its stream runs. The caller adds `amount` to the hold once it knows the request is still open.
   */
  async extend(hold: PeriodHold, amount: number): Promise<boolean> {
    if (amount === 0) return true;
    try {
      await this.#db.transaction().execute(async (trx) => {
        for (const counter of hold.counters) {
          if (!(await grow(trx, counter, amount))) throw new PeriodBudgetShort();
        }
      });
      return true;
    } catch (error) {
      if (error instanceof PeriodBudgetShort) return false;
      throw error;
    }
  }

  /** Takes back an extension counted for a request that ended meanwhile. */
  async retract(hold: PeriodHold, amount: number): Promise<void> {
    if (amount > 0) await this.#adjust(hold.counters, -amount, 0);
  }

  /** Corrects the admitted periods from the reservation to the charge. */
  async settle(hold: PeriodHold | undefined, actualQuota: number): Promise<void> {
    if (!hold || actualQuota === hold.amount) return;
    await this.#adjust(hold.counters, actualQuota - hold.amount, 0);
  }

  /** Takes back the reservation and the request: a refunded request used nothing. */
  async refund(hold: PeriodHold | undefined): Promise<void> {
    if (hold) await this.#adjust(hold.counters, -hold.amount, -1);
  }

  /** Adds quota charged with no reservation (work an upstream already did) to the current periods. */
  async charge(holders: PeriodHolders, quota: number): Promise<void> {
    const counters = this.#counters(holders);
    if (counters.length === 0 || quota === 0) return;
    await this.#db.transaction().execute(async (trx) => {
      for (const counter of counters) await add(trx, counter, quota, 0);
    });
  }

  /** The current periods of holders of one kind, by holder id (only periods with a limit). */
  async current(kind: AccountKind, holders: ReadonlyArray<{ id: number; limits: PeriodLimits }>) {
    const views = new Map<number, PeriodUsageViews>();
    const counters = holders.flatMap(({ id, limits }) =>
      this.#counters(kind === 'user' ? { userId: id, user: limits } : { userId: 0, tokenId: id, token: limits }),
    );
    if (counters.length === 0) return views;
    const rows = await this.#db
      .selectFrom('period_usage')
      .select(['holder_id', 'period', 'quota', 'requests'])
      .where('holder_kind', '=', kind)
      .where(
        'holder_id',
        'in',
        counters.map((c) => c.id),
      )
      .where(
        'period',
        'in',
        counters.map((c) => c.key),
      )
      .execute();
    const used = new Map(rows.map((row) => [`${row.holder_id} ${row.period}`, row]));
    for (const counter of counters) {
      const row = used.get(`${counter.id} ${counter.key}`);
      const quota = Number(row?.quota ?? 0);
      const requests = Number(row?.requests ?? 0);
      const view = views.get(counter.id) ?? {};
      view[counter.period] = {
        period: counter.key.slice(2),
        used_quota: quota,
        used_requests: requests,
        quota_limit: counter.quotaLimit,
        request_limit: counter.requestLimit,
        remain_quota: counter.quotaLimit > 0 ? Math.max(0, counter.quotaLimit - quota) : null,
        remain_requests: counter.requestLimit > 0 ? Math.max(0, counter.requestLimit - requests) : null,
        resets_at: Math.floor(counter.endsAtMs / 1000),
      };
      views.set(counter.id, view);
    }
    return views;
  }

  /**
   * Deletes the rows of periods long over (days older than a week, weeks than five, months than three):
   * nothing reads them, and a late settlement of one simply writes its row again. Answers how many.
   */
  async prune(): Promise<number> {
    const at = this.#clock();
    const zone = this.#zone();
    const cutoffs: Array<[PeriodKind, number]> = [
      ['daily', at - 7 * DAY_MS],
      ['weekly', at - 35 * DAY_MS],
      ['monthly', at - 92 * DAY_MS],
    ];
    let deleted = 0;
    for (const [kind, before] of cutoffs) {
      // Keys of one kind sort by time: `d:2026-11-26`, `w:2026-W48`, `m:2026-11`.
      const prefix = periodKey(kind, '');
      const result = await this.#db
        .deleteFrom('period_usage')
        .where('period', '>=', prefix)
        .where('period', '<', periodKey(kind, periodName(kind, before, zone)))
        .executeTakeFirst();
      deleted += Number(result.numDeletedRows);
    }
    return deleted;
  }

  /** The counters of the current periods, in lock order (kind, id, key) so admissions never deadlock. */
  #counters(holders: PeriodHolders): Counter[] {
    const counters: Counter[] = [];
    let now: { at: number; zone: string } | undefined;
    const addHolder = (kind: AccountKind, id: number | undefined, limits: PeriodLimits | undefined) => {
      if (id === undefined || !hasPeriodLimits(limits)) return;
      now ??= { at: this.#clock(), zone: this.#zone() };
      const { at, zone } = now;
      for (const period of PERIOD_KINDS) {
        const limit = limits[period];
        if (!limit) continue;
        const { name, endsAtMs } = periodAt(period, at, zone);
        counters.push({
          kind,
          id,
          period,
          key: periodKey(period, name),
          endsAtMs,
          quotaLimit: limit.quota,
          requestLimit: limit.requests,
        });
      }
    };
    addHolder('token', holders.tokenId, holders.token);
    addHolder('user', holders.userId, holders.user);
    return counters.sort(
      (a, b) => a.kind.localeCompare(b.kind) || a.id - b.id || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
    );
  }

  /** One statement per counter, each its own transaction: a correction holds one row lock at a time. */
  async #adjust(counters: readonly Counter[], quota: number, requests: number): Promise<void> {
    for (const counter of counters) {
      try {
        await add(this.#db, counter, quota, requests);
      } catch (err) {
        // The period keeps counting the reservation: in the holder's disfavour, by at most that.
        this.#log.warn(
          { err, holder: counter.kind, id: counter.id, period: counter.key },
          'period usage not corrected',
        );
      }
    }
  }

  #refusal(counter: Counter, limit: 'quota' | 'requests'): PeriodQuotaExceeded {
    const seconds = Math.max(1, Math.ceil((counter.endsAtMs - this.#clock()) / 1000));
    return new PeriodQuotaExceeded(counter.kind, counter.period, limit, seconds);
  }
}

/**
 * Adds the request to the counter's row if it fits both limits (creating the row at its first
 * request, which the caller checked fits), and answers whether it did. When it does not fit, Postgres
 * still locks the row, so the caller may read what it holds.
 */
async function take(trx: Transaction<Database>, counter: Counter, amount: number, need: number): Promise<boolean> {
  const fits = [
    counter.quotaLimit > 0 ? sql`period_usage.quota + ${need}::bigint <= ${counter.quotaLimit}::bigint` : sql`true`,
    counter.requestLimit > 0 ? sql`period_usage.requests + 1 <= ${counter.requestLimit}::bigint` : sql`true`,
  ];
  const row = await trx
    .insertInto('period_usage')
    .values({ holder_kind: counter.kind, holder_id: counter.id, period: counter.key, quota: amount, requests: 1 })
    .onConflict((conflict) =>
      conflict
        .columns(['holder_kind', 'holder_id', 'period'])
        .doUpdateSet({
          quota: sql`period_usage.quota + excluded.quota`,
          requests: sql`period_usage.requests + 1`,
        })
        .where(sql<boolean>`${fits[0]} and ${fits[1]}`),
    )
    .returning('quota')
    .executeTakeFirst();
  return row !== undefined;
}

function usageRow(db: Kysely<Database> | Transaction<Database>, counter: Counter) {
  return db
    .selectFrom('period_usage')
    .select(['quota', 'requests'])
    .where('holder_kind', '=', counter.kind)
    .where('holder_id', '=', counter.id)
    .where('period', '=', counter.key)
    .executeTakeFirst();
}

/** Rolls an extension back: one of the periods cannot take it. */
class PeriodBudgetShort extends Error {}

/** Adds `amount` to a counter's row if it stays within the quota limit; answers whether it did. */
async function grow(trx: Transaction<Database>, counter: Counter, amount: number): Promise<boolean> {
  let query = trx
    .updateTable('period_usage')
    .set({ quota: sql`quota + ${amount}::bigint` })
    .where('holder_kind', '=', counter.kind)
    .where('holder_id', '=', counter.id)
    .where('period', '=', counter.key);
  if (counter.quotaLimit > 0)
    query = query.where(sql<boolean>`quota + ${amount}::bigint <= ${counter.quotaLimit}::bigint`);
  return (await query.executeTakeFirst()).numUpdatedRows > 0n;
}

/** Adds to a counter's row (creating it if a charge comes first), without any check. */
function add(db: Kysely<Database> | Transaction<Database>, counter: Counter, quota: number, requests: number) {
  return db
    .insertInto('period_usage')
    .values({ holder_kind: counter.kind, holder_id: counter.id, period: counter.key, quota, requests })
    .onConflict((conflict) =>
      conflict.columns(['holder_kind', 'holder_id', 'period']).doUpdateSet({
        quota: sql`period_usage.quota + excluded.quota`,
        requests: sql`period_usage.requests + excluded.requests`,
      }),
    )
    .execute();
}
