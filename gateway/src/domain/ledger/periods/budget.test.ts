import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore } from '../../../../../tests/support/database.ts';
import type { Database } from '../../../store/database.ts';
import { migrateToLatest, openStore } from '../../../store/index.ts';
import { QuotaLedger } from '../ledger.ts';
import { PeriodBudget } from './budget.ts';
import { PeriodQuotaExceeded } from './errors.ts';
import type { PeriodLimits } from './limits.ts';

/** Period budgets on a real database: admission, settlement and refunds, across midnights of the zone. */

let store: Awaited<ReturnType<typeof createTestStore>>;
let db: Kysely<Database>;
let now = 0;
let zone = 'UTC';

beforeAll(async () => {
  store = await createTestStore();
  db = store.store.db;
});
afterAll(() => store?.dispose());

const at = (iso: string) => Date.parse(iso);
const budget = () => new PeriodBudget({ db, zone: () => zone, clock: () => now });

async function seed(quota = 10_000_000) {
  const user = await db
    .insertInto('users')
    .values({ username: `u${randomUUID().slice(0, 8)}`, password: 'x', created_at: 0, quota })
    .returning('id')
    .executeTakeFirstOrThrow();
  const token = await db
    .insertInto('tokens')
    .values({
      user_id: user.id,
      key_hmac: randomUUID(),
      key_encrypted: 'x',
      name: 't',
      created_time: 0,
      remain_quota: quota,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { userId: user.id, tokenId: token.id };
}

async function usage(kind: 'user' | 'token', id: number) {
  const rows = await db
    .selectFrom('period_usage')
    .select(['period', 'quota', 'requests'])
    .where('holder_kind', '=', kind)
    .where('holder_id', '=', id)
    .orderBy('period')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.period, { quota: Number(r.quota), requests: Number(r.requests) }]));
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('admitted, expected a refusal');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(PeriodQuotaExceeded);
      return error as PeriodQuotaExceeded;
    },
  );

describe('period budgets', () => {
  it('admits up to the daily quota, refuses with 429 until midnight of the zone, then starts the new day at zero', async () => {
    zone = 'Asia/Shanghai';
    now = at('2026-11-26T15:00:00Z'); // 23:00 in Shanghai
    const { userId, tokenId } = await seed();
    const periods = budget();
    const holders = { userId, tokenId, token: { daily: { quota: 1000, requests: 0 } } };
    await periods.admit(holders, 600);
    await periods.admit(holders, 400);
    const refused = await refusal(periods.admit(holders, 1));
    expect(refused.status).toBe(429);
    expect(refused.code).toBe('period_quota_exceeded');
    expect(refused.retryAfterSeconds).toBe(3600);
    expect(refused.localized('en')).toBe("The token's daily quota limit is used up; it resets in 3600 s");
    // A zero reservation needs a unit left too.
    await refusal(periods.admit(holders, 0));
    now = at('2026-11-26T16:00:00Z'); // midnight in Shanghai
    await periods.admit(holders, 1000);
    expect(await usage('token', tokenId)).toEqual({
      'd:2026-11-26': { quota: 1000, requests: 2 },
      'd:2026-11-27': { quota: 1000, requests: 1 },
    });
    expect(await usage('user', userId)).toEqual({});
  });

  it('refuses a reservation larger than the whole limit without counting it', async () => {
    zone = 'UTC';
    now = at('2026-11-26T10:00:00Z');
    const { userId } = await seed();
    await refusal(budget().admit({ userId, user: { monthly: { quota: 500, requests: 0 } } }, 501));
    expect(await usage('user', userId)).toEqual({});
  });

  it('counts requests per period; a refund gives the request and its reservation back', async () => {
    zone = 'UTC';
    now = at('2026-11-26T10:00:00Z');
    const { userId, tokenId } = await seed();
    const periods = budget();
    const holders = { userId, tokenId, user: { daily: { quota: 0, requests: 2 } } };
    const first = await periods.admit(holders, 50);
    await periods.admit(holders, 50);
    const refused = await refusal(periods.admit(holders, 50));
    expect(refused.localized('en')).toContain('daily request limit');
    expect(refused.localized('zh')).toContain('每日请求次数上限');
    await periods.refund(first);
    await periods.admit(holders, 70);
    expect(await usage('user', userId)).toEqual({ 'd:2026-11-26': { quota: 120, requests: 2 } });
  });

  it('never admits past the limit under concurrent requests', async () => {
    zone = 'UTC';
    now = at('2026-11-26T10:00:00Z');
    const { userId, tokenId } = await seed();
    const periods = budget();
    const holders = {
      userId,
      tokenId,
      token: { daily: { quota: 1000, requests: 0 } },
      user: { weekly: { quota: 0, requests: 7 } },
    };
    const results = await Promise.allSettled(Array.from({ length: 30 }, () => periods.admit(holders, 100)));
    const admitted = results.filter((r) => r.status === 'fulfilled').length;
    // The user's 7 requests a week bind before the token's 10 × 100 a day.
    expect(admitted).toBe(7);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(PeriodQuotaExceeded);
    expect(await usage('token', tokenId)).toEqual({ 'd:2026-11-26': { quota: 700, requests: 7 } });
    expect(await usage('user', userId)).toEqual({ 'w:2026-W48': { quota: 700, requests: 7 } });
  });

  it('resets weekly quotas at Monday midnight and monthly ones on the first, in the zone', async () => {
    zone = 'Europe/Berlin';
    const { userId } = await seed();
    const periods = budget();
    const limits: PeriodLimits = { weekly: { quota: 100, requests: 0 }, monthly: { quota: 150, requests: 0 } };
    now = at('2026-11-29T22:59:59Z'); // Sunday 23:59:59 in Berlin (UTC+1)
    await periods.admit({ userId, user: limits }, 100);
    const weekly = await refusal(periods.admit({ userId, user: limits }, 1));
    expect(weekly.retryAfterSeconds).toBe(1);
    now = at('2026-11-29T23:00:00Z'); // Monday 30 November 00:00
    await periods.admit({ userId, user: limits }, 50);
    const monthly = await refusal(periods.admit({ userId, user: limits }, 1));
    expect(monthly.localized('en')).toContain('monthly quota limit');
    expect(monthly.retryAfterSeconds).toBe(24 * 3600); // until 1 December 00:00 in Berlin
    now = at('2026-11-30T23:00:00Z');
    await periods.admit({ userId, user: limits }, 50);
    expect(await usage('user', userId)).toEqual({
      'm:2026-11': { quota: 150, requests: 2 },
      'm:2026-12': { quota: 50, requests: 1 },
      'w:2026-W48': { quota: 100, requests: 1 },
      'w:2026-W49': { quota: 100, requests: 2 },
    });
  });

  it('resets a daily quota at midnight across a DST change (New York, 8 March 2026: a 23-hour day)', async () => {
    zone = 'America/New_York';
    const { userId } = await seed();
    const periods = budget();
    const limits: PeriodLimits = { daily: { quota: 100, requests: 0 } };
    now = at('2026-03-08T05:00:00Z'); // 00:00 EST, the day that loses an hour
    await periods.admit({ userId, user: limits }, 100);
    const refused = await refusal(periods.admit({ userId, user: limits }, 1));
    expect(refused.retryAfterSeconds).toBe(23 * 3600);
    now = at('2026-03-09T03:59:59Z'); // 23:59:59 EDT: still the 8th
    await refusal(periods.admit({ userId, user: limits }, 1));
    now = at('2026-03-09T04:00:00Z'); // 00:00 EDT on the 9th
    await periods.admit({ userId, user: limits }, 100);
    expect(await usage('user', userId)).toEqual({
      'd:2026-03-08': { quota: 100, requests: 1 },
      'd:2026-03-09': { quota: 100, requests: 1 },
    });
  });

  it('reports the current periods with what is left and when they reset', async () => {
    zone = 'UTC';
    now = at('2026-11-26T10:00:00Z');
    const { userId } = await seed();
    const periods = budget();
    const limits: PeriodLimits = { daily: { quota: 1000, requests: 10 } };
    await periods.admit({ userId, user: limits }, 300);
    const views = await periods.current('user', [
      { id: userId, limits },
      { id: userId + 1000, limits: {} },
    ]);
    expect(views.get(userId)).toEqual({
      daily: {
        period: '2026-11-26',
        used_quota: 300,
        used_requests: 1,
        quota_limit: 1000,
        request_limit: 10,
        remain_quota: 700,
        remain_requests: 9,
        resets_at: at('2026-11-27T00:00:00Z') / 1000,
      },
    });
    expect(views.has(userId + 1000)).toBe(false);
  });
});

describe('pruning', () => {
  it('deletes the rows of periods long over and keeps the recent ones of every kind', async () => {
    zone = 'UTC';
    const { userId } = await seed();
    const periods = budget();
    const limits: PeriodLimits = {
      daily: { quota: 0, requests: 100 },
      weekly: { quota: 0, requests: 100 },
      monthly: { quota: 0, requests: 100 },
    };
    for (const day of ['2026-07-01', '2026-11-10', '2026-11-20', '2026-11-26']) {
      now = at(`${day}T12:00:00Z`);
      await periods.admit({ userId, user: limits }, 1);
    }
    now = at('2026-11-26T12:00:00Z');
    await periods.prune();
    expect(Object.keys(await usage('user', userId))).toEqual([
      'd:2026-11-20',
      'd:2026-11-26',
      'm:2026-11',
      'w:2026-W46',
      'w:2026-W47',
      'w:2026-W48',
    ]);
  });
});

describe('period budgets through the quota ledger', () => {
  it('corrects the period to the charge on settle, to nothing on refund, and bills a request that straddles midnight to the day it was admitted in', async () => {
    zone = 'UTC';
    now = at('2026-11-26T23:59:00Z');
    const { userId, tokenId } = await seed(5_000_000);
    const ledger = await QuotaLedger.start({ db, holder: 'test', periods: budget() });
    const periodLimits = {
      token: { daily: { quota: 10_000, requests: 0 } },
      user: { daily: { quota: 0, requests: 5 } },
    };
    const reserve = (amount: number, periodAmount?: number) =>
      ledger.reserve({ userId, tokenId, amount, periodLimits, periodAmount });

    const settled = await reserve(1000);
    const refunded = await reserve(2000);
    const straddling = await reserve(3000);
    // A trust bypass reserves 0 of the wallet but still holds its estimate in the period.
    const trusted = await reserve(0, 4000);
    await expect(reserve(1)).rejects.toBeInstanceOf(PeriodQuotaExceeded);
    expect(ledger.balance(userId)).toBeGreaterThan(0); // the refusal held nothing of the wallet

    await ledger.settle(settled, 1500); // above its reservation
    await ledger.refund(refunded);
    now = at('2026-11-27T00:00:01Z');
    await ledger.settle(straddling, 2500);
    await ledger.settle(trusted, 3999);
    await ledger.close();

    expect(await usage('token', tokenId)).toEqual({ 'd:2026-11-26': { quota: 1500 + 2500 + 3999, requests: 3 } });
    expect(await usage('user', userId)).toEqual({ 'd:2026-11-26': { quota: 1500 + 2500 + 3999, requests: 3 } });
    // The wallet and the token were charged the same, to the unit.
    const user = await db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow();
    const token = await db
      .selectFrom('tokens')
      .select('remain_quota')
      .where('id', '=', tokenId)
      .executeTakeFirstOrThrow();
    expect(5_000_000 - Number(user.quota)).toBe(1500 + 2500 + 3999);
    expect(5_000_000 - Number(token.remain_quota)).toBe(1500 + 2500 + 3999);
  });

  it('corrects the period after a durable charge commits, and refunds it when the charge rolls back', async () => {
    zone = 'UTC';
    now = at('2026-11-26T12:00:00Z');
    const { userId, tokenId } = await seed(1_000_000);
    const ledger = await QuotaLedger.start({ db, holder: 'test', periods: budget() });
    const periodLimits = { token: { monthly: { quota: 10_000, requests: 10 } } };
    const committed = await ledger.reserve({ userId, tokenId, amount: 3000, periodLimits });
    await ledger.settleWithin(committed, 2000, async (_trx, chargeBalances) => {
      await chargeBalances();
    });
    const failed = await ledger.reserve({ userId, tokenId, amount: 3000, periodLimits });
    await expect(
      ledger.settleWithin(failed, 2000, async () => {
        throw new Error('the task row could not be written');
      }),
    ).rejects.toThrow('the task row');
    await ledger.close();
    expect(await usage('token', tokenId)).toEqual({ 'm:2026-11': { quota: 2000, requests: 1 } });
  });

  it('grows the period with an extended reservation, refuses an extension past the limit, and settles to the charge', async () => {
    zone = 'UTC';
    now = at('2026-11-26T12:00:00Z');
    const { userId, tokenId } = await seed(1_000_000);
    const ledger = await QuotaLedger.start({ db, holder: 'test', periods: budget() });
    const periodLimits = { token: { daily: { quota: 1000, requests: 0 } } };
    const reservation = await ledger.reserve({ userId, tokenId, amount: 300, periodLimits });
    expect(await ledger.extend(reservation, 500)).toBe(true);
    expect(await usage('token', tokenId)).toEqual({ 'd:2026-11-26': { quota: 800, requests: 1 } });
    const balance = ledger.balance(userId);
    expect(await ledger.extend(reservation, 300)).toBe(false);
    expect(ledger.balance(userId)).toBe(balance); // the refused extension holds nothing of the wallet
    expect(await usage('token', tokenId)).toEqual({ 'd:2026-11-26': { quota: 800, requests: 1 } });
    await ledger.settle(reservation, 750);
    await ledger.close();
    expect(await usage('token', tokenId)).toEqual({ 'd:2026-11-26': { quota: 750, requests: 1 } });
    const user = await db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow();
    expect(Number(user.quota)).toBe(1_000_000 - 750);
  });

  it('holds nothing of the wallet when a period refuses, and adds charges owed without a reservation', async () => {
    zone = 'UTC';
    now = at('2026-11-26T12:00:00Z');
    const { userId, tokenId } = await seed(1_000_000);
    const ledger = await QuotaLedger.start({ db, holder: 'test', periods: budget() });
    const periodLimits = { user: { daily: { quota: 100, requests: 0 } } };
    await expect(ledger.reserve({ userId, tokenId, amount: 101, periodLimits })).rejects.toBeInstanceOf(
      PeriodQuotaExceeded,
    );
    await ledger.chargeOwed({ userId, tokenId, periodLimits }, 250);
    await ledger.close();
    expect(await usage('user', userId)).toEqual({ 'd:2026-11-26': { quota: 250, requests: 0 } });
    const user = await db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow();
    expect(Number(user.quota)).toBe(1_000_000 - 250);
  });
});

describe('period budgets on the embedded database', () => {
  it('admits exactly up to the limit under concurrent requests and starts the next day at zero', async () => {
    const embedded = await openStore({ dataDir: 'memory://' });
    try {
      await migrateToLatest(embedded.db);
      let clock = at('2026-11-26T23:59:59Z');
      const periods = new PeriodBudget({ db: embedded.db, zone: () => 'UTC', clock: () => clock });
      const holders = { userId: 1, user: { daily: { quota: 500, requests: 0 } } };
      const results = await Promise.allSettled(Array.from({ length: 12 }, () => periods.admit(holders, 100)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
      clock = at('2026-11-27T00:00:00Z');
      await periods.admit(holders, 500);
      const rows = await embedded.db.selectFrom('period_usage').select(['period', 'quota']).orderBy('period').execute();
      expect(rows.map((r) => [r.period, Number(r.quota)])).toEqual([
        ['d:2026-11-26', 500],
        ['d:2026-11-27', 500],
      ]);
    } finally {
      await embedded.close();
    }
  });
});
