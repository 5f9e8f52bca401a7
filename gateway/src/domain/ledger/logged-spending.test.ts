import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore, hasPostgres } from '../../../../tests/support/database.ts';
import type { Database } from '../../store/database.ts';
import { migrateToLatest, openStore } from '../../store/index.ts';
import { sweepExpiredLeases } from '../../store/repositories/quota-leases.ts';
import { type ConsumeRecord, databaseUsageWriter, UsageRecorder } from '../usage/index.ts';
import { QuotaLedger, type Reservation } from './index.ts';

/**
 * Spending settled `withLog`: the usage batch that writes a request's consume log takes its quota off
 * the balances in the same transaction (QuotaLedger.writeLogged), so a pod killed at any moment leaves
 * `balance + used == initial` and `Σ logs == used` once the sweeper has returned its leases.
 */

/** Postgres (when the tests have one) and the embedded PGlite, each test file's database of its own. */
const backends = [...(hasPostgres() ? ['postgres' as const] : []), 'pglite' as const];
let db: Kysely<Database>;

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

/** What the database says about an account: balance, leases, used quota and the sum of its consume logs. */
async function books(ids: { userId: number; tokenId: number }) {
  const user = await db
    .selectFrom('users')
    .select(['quota', 'used_quota'])
    .where('id', '=', ids.userId)
    .executeTakeFirstOrThrow();
  const token = await db
    .selectFrom('tokens')
    .select(['remain_quota', 'used_quota'])
    .where('id', '=', ids.tokenId)
    .executeTakeFirstOrThrow();
  const leased = async (kind: 'user' | 'token', id: number) =>
    (
      await db
        .selectFrom('quota_leases')
        .select('amount')
        .where('account_type', '=', kind)
        .where('account_id', '=', id)
        .execute()
    ).reduce((sum, row) => sum + Number(row.amount), 0);
  const logs = await db
    .selectFrom('logs')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('quota'), eb.lit(0)).as('quota'))
    .where('user_id', '=', ids.userId)
    .where('type', '=', 2)
    .executeTakeFirstOrThrow();
  return {
    user: { balance: Number(user.quota), leased: await leased('user', ids.userId), used: Number(user.used_quota) },
    token: {
      balance: Number(token.remain_quota),
      leased: await leased('token', ids.tokenId),
      used: Number(token.used_quota),
    },
    logged: Number(logs.quota),
  };
}

const settings = {
  logConsumeEnabled: () => true,
  dataExportEnabled: () => false,
  errorLogEnabled: () => false,
};

/** A pod: its ledger (no timer flush during a test) and a recorder whose batches charge through it. */
async function pod() {
  const ledger = await QuotaLedger.start({
    db,
    holder: `pod-${randomUUID()}`,
    leaseSliceQuota: 10_000,
    leaseTtlMs: 60_000,
  });
  const recorder = new UsageRecorder({
    writer: databaseUsageWriter(db, ledger),
    settings,
    flushIntervalMs: 60_000,
    batchSize: 10_000,
  });
  return { ledger, recorder };
}

function record(ids: { userId: number; tokenId: number }, quota: number, charged?: ConsumeRecord['ledgerCharge']) {
  return {
    userId: ids.userId,
    username: 'u',
    tokenId: ids.tokenId,
    tokenName: 't',
    channelId: 0,
    channelName: '',
    modelName: 'm',
    group: 'default',
    useTimeSeconds: 1,
    isStream: false,
    ip: '',
    requestId: randomUUID(),
    content: '',
    quota,
    promptTokens: 1,
    completionTokens: 1,
    other: {},
    ledgerCharge: charged,
  } satisfies ConsumeRecord;
}

/** A pod killed: nobody gives its leases back; the sweeper returns them as last written. */
const sweepAll = () => sweepExpiredLeases(db, -3600);

async function settleLogged(
  p: Awaited<ReturnType<typeof pod>>,
  ids: { userId: number; tokenId: number },
  reservation: Reservation,
  quota: number,
) {
  await p.ledger.settle(reservation, quota, { withLog: true });
  p.recorder.recordConsume(record(ids, quota, p.ledger.chargedAccounts(reservation)));
}

describe.each(backends)('spending written with its consume logs (%s)', (backend) => {
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    if (backend === 'postgres') {
      const test = await createTestStore();
      db = test.store.db;
      dispose = test.dispose;
    } else {
      const store = await openStore({ dataDir: 'memory://' });
      await migrateToLatest(store.db);
      db = store.db;
      dispose = () => store.close();
    }
  });
  afterAll(() => dispose?.());

  it('reaches Postgres only with its log, out of the lease row, and survives a kill right after', async () => {
    const ids = await seed(100_000, 50_000);
    const p = await pod();
    const reservation = await p.ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 700 });
    await settleLogged(p, ids, reservation, 400);
    // Memory knows at once (no reservation can be promised the spent quota) …
    expect(p.ledger.balance(ids.userId)).toBe(99_600);
    expect(p.ledger.tokenBalance(ids.tokenId)).toBe(49_600);
    // … but the ledger's own flush does not write it: it waits for its log.
    await p.ledger.flush();
    const flushed = await books(ids);
    expect(flushed.user.balance + flushed.user.leased).toBe(100_000);
    expect(flushed.logged).toBe(0);
    await p.recorder.flush();
    const written = await books(ids);
    expect(written.logged).toBe(400);
    expect(written.user).toEqual({ balance: flushed.user.balance, leased: flushed.user.leased - 400, used: 400 });
    expect(written.token).toEqual({ balance: flushed.token.balance, leased: flushed.token.leased - 400, used: 400 });
    // Killed now: the sweeper returns the leases as written; the charge stays, matching its log.
    await sweepAll();
    const after = await books(ids);
    expect(after.user).toEqual({ balance: 99_600, leased: 0, used: 400 });
    expect(after.token).toEqual({ balance: 49_600, leased: 0, used: 400 });
  });

  it('loses spending and log together when the pod dies before the batch', async () => {
    const ids = await seed(100_000, 50_000);
    const p = await pod();
    for (const quota of [300, 500]) {
      const reservation = await p.ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 600 });
      await settleLogged(p, ids, reservation, quota);
    }
    await p.ledger.flush();
    await sweepAll(); // the pod is gone with its queued records
    expect(await books(ids)).toEqual({
      user: { balance: 100_000, leased: 0, used: 0 },
      token: { balance: 50_000, leased: 0, used: 0 },
      logged: 0,
    });
  });

  it('charges the balance when the lease went back before the batch, and leaves other records alone', async () => {
    const ids = await seed(100_000, 50_000);
    const p = await pod();
    const reservation = await p.ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 1_000 });
    await settleLogged(p, ids, reservation, 900);
    // A record without a ledger charge (a task's, a channel test's) only counts.
    p.recorder.recordConsume(record(ids, 50));
    await p.ledger.close(); // every lease given back, the unlogged spending with it
    const returned = await books(ids);
    expect(returned.user).toEqual({ balance: 100_000, leased: 0, used: 0 });
    await p.recorder.close();
    const after = await books(ids);
    expect(after.logged).toBe(950);
    expect(after.user).toEqual({ balance: 99_100, leased: 0, used: 950 });
    expect(after.token).toEqual({ balance: 49_100, leased: 0, used: 950 });
  });

  it('writes the logged spending before giving leases back on close, so no spent quota goes back', async () => {
    const ids = await seed(100_000, 50_000);
    const p = await pod();
    const reservation = await p.ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 1_000 });
    await settleLogged(p, ids, reservation, 600);
    await p.ledger.close(() => p.recorder.flush());
    // What another pod could take now is what is really left.
    expect(await books(ids)).toEqual({
      user: { balance: 99_400, leased: 0, used: 600 },
      token: { balance: 49_400, leased: 0, used: 600 },
      logged: 600,
    });
    await p.recorder.close();
    expect((await books(ids)).user).toEqual({ balance: 99_400, leased: 0, used: 600 });
  });

  it('keeps an idle lease while its spending waits for the batch', async () => {
    const ids = await seed(100_000, 50_000);
    const ledger = await QuotaLedger.start({
      db,
      holder: `pod-${randomUUID()}`,
      leaseSliceQuota: 10_000,
      leaseTtlMs: 60_000,
      idleReturnMs: 0,
    });
    const recorder = new UsageRecorder({
      writer: databaseUsageWriter(db, ledger),
      settings,
      flushIntervalMs: 60_000,
      batchSize: 10_000,
    });
    const reservation = await ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 1_000 });
    await settleLogged({ ledger, recorder }, ids, reservation, 300);
    await ledger.flush(); // idle at once: given back only once nothing waits for its log
    expect((await books(ids)).user.leased).toBeGreaterThan(0);
    await recorder.flush();
    await ledger.flush();
    expect(await books(ids)).toEqual({
      user: { balance: 99_700, leased: 0, used: 300 },
      token: { balance: 49_700, leased: 0, used: 300 },
      logged: 300,
    });
    await ledger.close();
    await recorder.close();
  });

  it('charges the balance when the lease was swept while the pod still held it', async () => {
    const ids = await seed(100_000, 50_000);
    const p = await pod();
    const reservation = await p.ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 1_000 });
    await settleLogged(p, ids, reservation, 250);
    await sweepAll(); // a partition: the lease row went back to the balance, spending included
    await p.recorder.flush();
    const after = await books(ids);
    expect(after.user).toEqual({ balance: 99_750, leased: 0, used: 250 });
    expect(after.token).toEqual({ balance: 49_750, leased: 0, used: 250 });
    await p.ledger.close();
    await p.recorder.close();
    expect((await books(ids)).user).toEqual({ balance: 99_750, leased: 0, used: 250 });
  });

  it('does not write a batch twice when the reply to its COMMIT was lost', async () => {
    const ids = await seed(100_000, 50_000);
    // The next transaction commits, then its caller hears an error (a connection dropped after COMMIT).
    let loseReply = false;
    const losing = new Proxy(db, {
      get(target, property) {
        if (property === 'transaction' && loseReply) {
          return () => ({
            execute: async (run: Parameters<ReturnType<Kysely<Database>['transaction']>['execute']>[0]) => {
              await target.transaction().execute(run);
              loseReply = false;
              throw new Error('Connection terminated unexpectedly');
            },
          });
        }
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const ledger = await QuotaLedger.start({ db: losing, holder: `pod-${randomUUID()}`, leaseSliceQuota: 10_000 });
    const recorder = new UsageRecorder({
      writer: databaseUsageWriter(losing, ledger),
      settings,
      flushIntervalMs: 60_000,
      batchSize: 10_000,
      retryInitialMs: 10,
    });
    const reservation = await ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 1_000 });
    await settleLogged({ ledger, recorder }, ids, reservation, 400);
    loseReply = true;
    await recorder.flush(); // the first attempt committed; the retry asks, and writes nothing more
    expect(recorder.stats().failedFlushes).toBe(1);
    expect(loseReply).toBe(false);
    const written = await books(ids);
    expect({ logged: written.logged, used: written.user.used, tokenUsed: written.token.used }).toEqual({
      logged: 400,
      used: 400,
      tokenUsed: 400,
    });
    // The ledger learns the outcome too: what it gives back is exactly what is left.
    await ledger.close();
    await recorder.close();
    expect(await books(ids)).toEqual({
      user: { balance: 99_600, leased: 0, used: 400 },
      token: { balance: 49_600, leased: 0, used: 400 },
      logged: 400,
    });
  });

  it('costs a batch three statements for a wallet it charges: its transaction id, the lease row, the balance', async () => {
    const ids = await seed(100_000, 50_000);
    let statements = 0;
    const counted = db.withPlugin({
      transformQuery: (args) => {
        statements++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const ledger = await QuotaLedger.start({ db: counted, holder: `pod-${randomUUID()}`, leaseSliceQuota: 10_000 });
    const recorder = new UsageRecorder({
      writer: databaseUsageWriter(counted, ledger),
      settings,
      flushIntervalMs: 60_000,
      batchSize: 10_000,
    });
    // The writer of before: no ledger, nothing charged.
    const before = new UsageRecorder({ writer: databaseUsageWriter(counted), settings, flushIntervalMs: 60_000 });
    const batchStatements = async (record: ConsumeRecord, writer = recorder) => {
      writer.recordConsume(record);
      const start = statements;
      await writer.flush();
      return statements - start;
    };
    // The wallet's lease is taken first, so that the batches below are all the database sees.
    const reservation = await ledger.reserve({ userId: ids.userId, amount: 100 });
    await ledger.settle(reservation, 100, { withLog: true });
    const charged = await batchStatements(record(ids, 100, ledger.chargedAccounts(reservation)));
    const plain = await batchStatements(record(ids, 100), before);
    expect(charged - plain).toBe(3);
    await ledger.close();
    await recorder.close();
    await before.close();
    expect((await books(ids)).user).toEqual({ balance: 99_900, leased: 0, used: 200 });
  });

  it('writes a batch again only when its earlier transaction did not commit', async () => {
    const ids = await seed(100_000, 50_000);
    const p = await pod();
    const reservation = await p.ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, amount: 100 });
    await p.ledger.settle(reservation, 100, { withLog: true });
    const batch = {};
    const charges = p.ledger.chargedAccounts(reservation).map((account) => ({ account, amount: 100 }));
    const writeUsed = async (trx: Parameters<Parameters<QuotaLedger['writeLogged']>[2]>[0]) =>
      trx
        .updateTable('users')
        .set((eb) => ({ used_quota: eb('used_quota', '+', 100) }))
        .where('id', '=', ids.userId)
        .execute();
    const failing = p.ledger.writeLogged(batch, charges, async (trx, chargeBalances) => {
      await chargeBalances();
      await writeUsed(trx);
      throw new Error('connection lost');
    });
    await expect(failing).rejects.toThrow('connection lost');
    expect((await books(ids)).user.used).toBe(0);
    // The retry finds the earlier transaction aborted and writes the batch once.
    await p.ledger.writeLogged(batch, charges, async (trx, chargeBalances) => {
      await chargeBalances();
      await writeUsed(trx);
    });
    await p.ledger.close();
    expect((await books(ids)).user).toEqual({ balance: 99_900, leased: 0, used: 100 });
  });
});
