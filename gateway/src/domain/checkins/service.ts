import { randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import { AppError } from '../../errors.ts';
import type { Database, UserRow } from '../../store/database.ts';
import { insertLog, LOG_TYPE } from '../../store/repositories/logs.ts';
import { addQuota } from '../../store/repositories/users.ts';
import { periodName } from '../ledger/periods/calendar.ts';
import type { OptionsService } from '../options/index.ts';
import { describeQuota } from '../redemptions/rules.ts';
import { CHECKIN_ERRORS } from './errors.ts';

export interface CheckinRecord {
  checkin_date: string;
  quota_awarded: number;
}

export interface CheckinStats {
  total_quota: number;
  total_checkins: number;
  /** Check-ins in the month asked for. */
  checkin_count: number;
  checked_in_today: boolean;
  /** The month's check-ins, newest first. */
  records: CheckinRecord[];
}

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/**
 * The daily check-in: once per user and calendar day (in quota_setting.period_timezone, the zone of
 * daily quotas) a random reward between checkin_setting.min_quota and max_quota is credited and logged.
 */
export class CheckinService {
  readonly #db: Kysely<Database>;
  readonly #options: OptionsService;
  readonly #now: () => number;

  constructor(deps: { db: Kysely<Database>; options: OptionsService; now?: () => number }) {
    this.#db = deps.db;
    this.#options = deps.options;
    this.#now = deps.now ?? Date.now;
  }

  /** Reward bounds as configured; inverted bounds are read in order, so saving one before the other never breaks check-in. */
  settings(): { enabled: boolean; min_quota: number; max_quota: number } {
    const a = this.#options.getNumber('checkin_setting.min_quota');
    const b = this.#options.getNumber('checkin_setting.max_quota');
    return {
      enabled: this.#options.getBoolean('checkin_setting.enabled'),
      min_quota: Math.min(a, b),
      max_quota: Math.max(a, b),
    };
  }

  async checkIn(user: Pick<UserRow, 'id' | 'username'>): Promise<CheckinRecord> {
    const { enabled, min_quota, max_quota } = this.settings();
    if (!enabled) throw new AppError(CHECKIN_ERRORS.CHECKIN_DISABLED);
    const now = this.#now();
    const record: CheckinRecord = {
      checkin_date: this.#today(now),
      quota_awarded: randomInt(min_quota, max_quota + 1),
    };
    return this.#db.transaction().execute(async (trx) => {
      // The primary key decides a race between two requests (or pods): only one insert returns a row.
      const inserted = await trx
        .insertInto('checkins')
        .values({ user_id: user.id, ...record, created_at: Math.floor(now / 1000) })
        .onConflict((c) => c.columns(['user_id', 'checkin_date']).doNothing())
        .returning('user_id')
        .executeTakeFirst();
      if (!inserted) throw new AppError(CHECKIN_ERRORS.CHECKIN_ALREADY_DONE);
      await addQuota(trx, user.id, record.quota_awarded);
      const amount = describeQuota(
        record.quota_awarded,
        this.#options.getBoolean('DisplayInCurrencyEnabled'),
        this.#options.getNumber('QuotaPerUnit'),
      );
      await insertLog(trx, {
        user_id: user.id,
        username: user.username,
        created_at: Math.floor(now / 1000),
        // A system log, as new-api writes it; the quota field keeps the amount for audits.
        type: LOG_TYPE.system,
        quota: record.quota_awarded,
        content: `用户签到，获得额度 ${amount}`,
      });
      return record;
    });
  }

  /** `month` is YYYY-MM; omitted, the current month. */
  async stats(userId: number, month?: string): Promise<CheckinStats> {
    if (!this.settings().enabled) throw new AppError(CHECKIN_ERRORS.CHECKIN_DISABLED);
    const now = this.#now();
    const wanted = month === undefined || month === '' ? this.#today(now).slice(0, 7) : month;
    if (!MONTH.test(wanted)) throw new AppError(CHECKIN_ERRORS.CHECKIN_MONTH_INVALID);
    const records = await this.#db
      .selectFrom('checkins')
      .select(['checkin_date', 'quota_awarded'])
      .where('user_id', '=', userId)
      .where('checkin_date', 'like', `${wanted}-%`)
      .orderBy('checkin_date', 'desc')
      .execute();
    const totals = await this.#db
      .selectFrom('checkins')
      .select((eb) => [eb.fn.countAll<string>().as('count'), eb.fn.sum<string | null>('quota_awarded').as('quota')])
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    const today = await this.#db
      .selectFrom('checkins')
      .select('user_id')
      .where('user_id', '=', userId)
      .where('checkin_date', '=', this.#today(now))
      .executeTakeFirst();
    return {
      total_quota: Number(totals.quota ?? 0),
      total_checkins: Number(totals.count),
      checkin_count: records.length,
      checked_in_today: today !== undefined,
      records: records.map((r) => ({ checkin_date: r.checkin_date, quota_awarded: Number(r.quota_awarded) })),
    };
  }

  #today(nowMs: number): string {
    return periodName('daily', nowMs, this.#options.get('quota_setting.period_timezone'));
  }
}
