import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore } from '../../../../tests/support/database.ts';
import type { Database } from '../../store/database.ts';
import { sweepExpiredLeases } from '../../store/repositories/quota-leases.ts';
import { type ConsumeRecord, databaseUsageWriter, UsageRecorder, writeUsageBatch } from '../usage/index.ts';
import { QuotaLedger } from './index.ts';

/**
 * settleWithin: a charge written in the caller's transaction, out of the lease row the reservation
 * was promised from, so that what committed is on the books even if the pod dies right after.
 */

let store: Awaited<ReturnType<typeof createTestStore>>;
let db: Kysely<Database>;

beforeAll(async () => {
  store = await createTestStore();
  db = store.store.db;
});
afterAll(() => store?.dispose());

async function seed(userQuota: number, tokenQuota: number) {
  const user = await db
    .insertInto('users')
    .values({ username: `u${randomUUID().slice(0, 8)}`, password: 'x', created_at: 0, quota: userQuota })
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
      remain_quota: tokenQuota,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { userId: user.id, tokenId: token.id };
}

/** Balance of record plus what leases hold: what the account has as far as the database knows. */
async function owned(kind: 'user' | 'token', id: number): Promise<{ balance: number; leased: number; total: number }> {
  const balance =
    kind === 'user'
      ? (await db.selectFrom('users').select('quota as q').where('id', '=', id).executeTakeFirstOrThrow()).q
      : (await db.selectFrom('tokens').select('remain_quota as q').where('id', '=', id).executeTakeFirstOrThrow()).q;
  const rows = await db
    .selectFrom('quota_leases')
    .select('amount')
    .where('account_type', '=', kind)
    .where('account_id', '=', id)
    .execute();
  const leased = rows.reduce((sum, row) => sum + Number(row.amount), 0);
  return { balance: Number(balance), leased, total: Number(balance) + leased };
}

/** No flush or renewal during a test: what the database shows is what the charge itself wrote. */
const start = () =>
  QuotaLedger.start({ db, holder: `pod-${randomUUID()}`, leaseSliceQuota: 1_000, leaseTtlMs: 60_000 });

/** A pod killed: nobody gives its leases back; the sweeper returns them as last written. */
const sweepAll = () => sweepExpiredLeases(db, -3600);

describe('ledger.settleWithin', () => {
  it('takes the charge out of the lease row in the caller’s transaction, before any flush', async () => {
    const ids = await seed(10_000, 5_000);
    const ledger = await start();
    const reservation = await ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 300 });
    const before = await owned('user', ids.userId);
    const answer = await ledger.settleWithin(reservation, 300, async (trx, chargeBalances) => {
      await trx.updateTable('users').set({ used_quota: 300 }).where('id', '=', ids.userId).execute();
      await chargeBalances();
      return 'written';
    });
    expect(answer).toBe('written');
    // The lease row paid; the balance of record was not touched.
    expect(await owned('user', ids.userId)).toEqual({ ...before, leased: before.leased - 300, total: 9_700 });
    expect((await owned('token', ids.tokenId)).total).toBe(4_700);
    expect(ledger.balance(ids.userId)).toBe(9_700);
    expect(ledger.tokenBalance(ids.tokenId)).toBe(4_700);
    // Killed now: the sweeper returns the leases as written, and the charge stays.
    await sweepAll();
    expect(await owned('user', ids.userId)).toEqual({ balance: 9_700, leased: 0, total: 9_700 });
    expect(await owned('token', ids.tokenId)).toEqual({ balance: 4_700, leased: 0, total: 4_700 });
    await ledger.close();
    expect((await owned('user', ids.userId)).total).toBe(9_700);
  });

  it('charges a wallet held entirely in the lease without taking its balance below zero', async () => {
    const ids = await seed(200, 200);
    const ledger = await start();
    const reservation = await ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 200 });
    expect(await owned('user', ids.userId)).toEqual({ balance: 0, leased: 200, total: 200 });
    await ledger.settleWithin(reservation, 200, (_trx, chargeBalances) => chargeBalances());
    expect(await owned('user', ids.userId)).toEqual({ balance: 0, leased: 0, total: 0 });
    expect(await owned('token', ids.tokenId)).toEqual({ balance: 0, leased: 0, total: 0 });
    expect(ledger.balance(ids.userId)).toBe(0);
    // Spent is spent: the lease promises nothing more.
    await expect(ledger.reserve({ userId: ids.userId, amount: 1 })).rejects.toMatchObject({ status: 403 });
    await ledger.close();
    expect((await owned('user', ids.userId)).balance).toBe(0);
  });

  it('charges nothing when the transaction rolls back, and the reservation is over', async () => {
    const ids = await seed(1_000, 1_000);
    const ledger = await start();
    const reservation = await ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 1_000 });
    const failing = ledger.settleWithin(reservation, 1_000, async (_trx, chargeBalances) => {
      await chargeBalances();
      throw new Error('task row refused');
    });
    await expect(failing).rejects.toThrow('task row refused');
    expect((await owned('user', ids.userId)).total).toBe(1_000);
    expect(ledger.balance(ids.userId)).toBe(1_000);
    await ledger.refund(reservation); // a no-op: the reservation ended with the failed charge
    // Its quota went back to the lease: the whole wallet can be reserved again.
    const again = await ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 1_000 });
    await expect(ledger.settleWithin(again, 1_000, async () => {})).rejects.toThrow(/did not write its balances/);
    expect((await owned('user', ids.userId)).total).toBe(1_000);
    await ledger.close();
    expect(await owned('user', ids.userId)).toEqual({ balance: 1_000, leased: 0, total: 1_000 });
    expect(await owned('token', ids.tokenId)).toEqual({ balance: 1_000, leased: 0, total: 1_000 });
  });

  it('charges the balance when the lease was swept while the charge was reserved', async () => {
    const ids = await seed(1_000, 1_000);
    const ledger = await start();
    const reservation = await ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 400 });
    await sweepAll();
    expect(await owned('user', ids.userId)).toEqual({ balance: 1_000, leased: 0, total: 1_000 });
    await ledger.settleWithin(reservation, 400, (_trx, chargeBalances) => chargeBalances());
    expect(await owned('user', ids.userId)).toEqual({ balance: 600, leased: 0, total: 600 });
    expect(await owned('token', ids.tokenId)).toEqual({ balance: 600, leased: 0, total: 600 });
    expect(ledger.balance(ids.userId)).toBe(600);
    await ledger.close();
    expect((await owned('user', ids.userId)).total).toBe(600);
    expect((await owned('token', ids.tokenId)).total).toBe(600);
  });

  it('keeps the books exact with settlements, task charges and flushes interleaved on one lease', async () => {
    const ids = await seed(100_000, 100_000);
    const ledger = await start();
    const work = Array.from({ length: 60 }, async (_, i) => {
      const reservation = await ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 50 });
      if (i % 2 === 0) await ledger.settle(reservation, 30);
      else await ledger.settleWithin(reservation, 50, (_trx, chargeBalances) => chargeBalances());
      // A flush waits for every account's lock, as settleWithin does for two: never a deadlock.
      if (i % 10 === 0) await ledger.flush();
    });
    await Promise.all(work);
    await ledger.flush();
    const spent = 30 * 30 + 30 * 50;
    expect((await owned('user', ids.userId)).total).toBe(100_000 - spent);
    expect((await owned('token', ids.tokenId)).total).toBe(100_000 - spent);
    await ledger.close();
    expect(await owned('user', ids.userId)).toEqual({ balance: 100_000 - spent, leased: 0, total: 100_000 - spent });
  });

  it('never deadlocks with the usage writer and other charges on the same user, token and channel', async () => {
    const ids = await seed(1_000_000, 1_000_000);
    const channel = await db
      .insertInto('channels')
      .values({ type: 1, name: 'c', key_encrypted: 'x', created_time: 0 })
      .returning('id')
      .executeTakeFirstOrThrow();
    const never = () => false;
    const always = () => true;
    // Flushing at every record: its transactions lock buckets, users, tokens and channels all the time.
    const recorder = new UsageRecorder({
      writer: databaseUsageWriter(db),
      settings: { logConsumeEnabled: always, dataExportEnabled: always, errorLogEnabled: never },
      flushIntervalMs: 1,
      batchSize: 1,
    });
    const record = (i: number, quota: number): ConsumeRecord => ({
      userId: ids.userId,
      username: 'u',
      tokenId: ids.tokenId,
      tokenName: 't',
      channelId: channel.id,
      channelName: 'c',
      modelName: 'task-model',
      group: 'default',
      useTimeSeconds: 0,
      isStream: false,
      ip: '',
      requestId: `r${i}`,
      content: '',
      other: {},
      quota,
      promptTokens: 0,
      completionTokens: 0,
      clientType: 'curl',
    });
    const ledger = await start();
    await Promise.all(
      Array.from({ length: 80 }, async (_, i) => {
        const reservation = await ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 100 });
        if (i % 2 === 0) {
          await ledger.settle(reservation, 70);
          recorder.recordConsume(record(i, 70));
        } else {
          const batch = recorder.batchOf(record(i, 100));
          await ledger.settleWithin(reservation, 100, (trx, chargeBalances) =>
            writeUsageBatch(trx, batch, chargeBalances),
          );
        }
      }),
    );
    await recorder.close();
    // A deadlock would have aborted one side: a charge (rejected above) or a usage batch (retried, counted here).
    expect(recorder.stats()).toMatchObject({ failedFlushes: 0 });
    await ledger.close();
    const spent = 40 * 70 + 40 * 100;
    expect(await owned('user', ids.userId)).toEqual({
      balance: 1_000_000 - spent,
      leased: 0,
      total: 1_000_000 - spent,
    });
    expect((await owned('token', ids.tokenId)).total).toBe(1_000_000 - spent);
    const user = await db.selectFrom('users').selectAll().where('id', '=', ids.userId).executeTakeFirstOrThrow();
    expect({ used: Number(user.used_quota), requests: user.request_count }).toEqual({ used: spent, requests: 80 });
    const used = await db
      .selectFrom('channels')
      .select('used_quota')
      .where('id', '=', channel.id)
      .executeTakeFirstOrThrow();
    expect(Number(used.used_quota)).toBe(spent);
    const logs = await db
      .selectFrom('logs')
      .select((eb) => eb.fn.sum<number>('quota').as('quota'))
      .where('user_id', '=', ids.userId)
      .executeTakeFirstOrThrow();
    expect(Number(logs.quota)).toBe(spent);
  });
});
