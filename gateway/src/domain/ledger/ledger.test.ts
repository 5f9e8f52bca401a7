import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore, hasPostgres } from '../../../../tests/support/database.ts';
import { sleep } from '../../../../tests/support/wait.ts';
import { createMemoryClusterState } from '../../cluster/index.ts';
import { AppError } from '../../errors.ts';
import type { Database } from '../../store/database.ts';
import { QuotaLedger, type QuotaLedgerConfig } from './index.ts';

let store: Awaited<ReturnType<typeof createTestStore>>;
let db: Kysely<Database>;

beforeAll(async () => {
  store = await createTestStore();
  db = store.store.db;
});
afterAll(() => store?.dispose());

async function seed(userQuota: number, tokenQuota = 0, unlimited = false) {
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
      unlimited_quota: unlimited,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { userId: user.id, tokenId: token.id };
}

async function balances(ids: { userId: number; tokenId: number }) {
  const user = await db.selectFrom('users').select('quota').where('id', '=', ids.userId).executeTakeFirstOrThrow();
  const token = await db
    .selectFrom('tokens')
    .select('remain_quota')
    .where('id', '=', ids.tokenId)
    .executeTakeFirstOrThrow();
  return { user: user.quota, token: token.remain_quota };
}

function leasesOf(kind: 'user' | 'token', id: number) {
  return db
    .selectFrom('quota_leases')
    .selectAll()
    .where('account_type', '=', kind)
    .where('account_id', '=', id)
    .execute();
}

function recordingLogger() {
  const warnings: string[] = [];
  const errors: string[] = [];
  return {
    warnings,
    errors,
    logger: {
      info() {},
      warn: (_: object, msg: string) => warnings.push(msg),
      error: (_: object, msg: string) => errors.push(msg),
    },
  };
}

/**
 * The database behind a connection that fails the next transaction: 'commit-lost' commits and then
 * reports an error (the reply was lost); 'rolled-back' fails just before COMMIT; 'unreachable'
 * fails before anything is sent.
 */
function unreliable(target: Kysely<Database>) {
  const control: { fail: 'commit-lost' | 'rolled-back' | 'unreachable' | undefined } = { fail: undefined };
  const proxy = new Proxy(target, {
    get(object, prop) {
      if (prop === 'transaction') {
        return () => ({
          async execute<T>(run: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
            const mode = control.fail;
            control.fail = undefined;
            if (mode === 'unreachable') throw new Error('connection refused');
            if (mode === 'rolled-back') {
              return object.transaction().execute(async (trx) => {
                await run(trx);
                throw new Error('connection reset before COMMIT');
              });
            }
            const result = await object.transaction().execute(run);
            if (mode === 'commit-lost') throw new Error('connection reset during COMMIT');
            return result;
          },
        });
      }
      const value = Reflect.get(object, prop, object);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
  return { db: proxy, control };
}

function start(overrides: Partial<QuotaLedgerConfig> = {}) {
  return QuotaLedger.start({ db, holder: 'pod-a', leaseSliceQuota: 100_000, leaseTtlMs: 3_000, ...overrides });
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('quota ledger on one pod', () => {
  it('reserves, settles and refunds to the unit, and gives the rest back on close', async () => {
    const ids = await seed(1_000_000, 200_000);
    const ledger = await start();
    const request = { userId: ids.userId, tokenId: ids.tokenId, tokenUnlimited: false };

    const first = await ledger.reserve({ ...request, amount: 30_000 });
    // Slices: the configured 100,000 of the wallet, a quarter (50,000) of the token's 200,000.
    expect(await balances(ids)).toEqual({ user: 900_000, token: 150_000 });
    expect(ledger.balance(ids.userId)).toBe(970_000);
    expect(ledger.tokenBalance(ids.tokenId)).toBe(170_000);

    expect(await ledger.settle(first, 12_345)).toBe(12_345);
    expect(ledger.balance(ids.userId)).toBe(1_000_000 - 12_345);
    expect(ledger.tokenBalance(ids.tokenId)).toBe(200_000 - 12_345);

    const refunded = await ledger.reserve({ ...request, amount: 10_000 });
    expect(ledger.balance(ids.userId)).toBe(1_000_000 - 12_345 - 10_000);
    await ledger.refund(refunded);
    await ledger.refund(refunded);
    expect(ledger.balance(ids.userId)).toBe(1_000_000 - 12_345);
    await expect(ledger.settle(refunded, 1)).rejects.toThrow(/already settled/);

    // A charge above the reservation is taken all the same.
    const extra = await ledger.reserve({ ...request, amount: 5_000 });
    expect(await ledger.settle(extra, 7_000)).toBe(7_000);
    const spent = 12_345 + 7_000;
    expect(ledger.balance(ids.userId)).toBe(1_000_000 - spent);

    // No database write per request: the rows only learn the spending when flushed.
    expect((await leasesOf('user', ids.userId)).map((l) => l.amount)).toEqual([100_000]);
    await ledger.flush();
    expect((await leasesOf('user', ids.userId)).map((l) => l.amount)).toEqual([100_000 - spent]);
    expect((await leasesOf('token', ids.tokenId)).map((l) => l.amount)).toEqual([50_000 - spent]);

    await ledger.close();
    expect(await balances(ids)).toEqual({ user: 1_000_000 - spent, token: 200_000 - spent });
    expect(await leasesOf('user', ids.userId)).toEqual([]);
    expect(await leasesOf('token', ids.tokenId)).toEqual([]);
    await expect(ledger.reserve({ ...request, amount: 1 })).rejects.toMatchObject({ code: 'quota_ledger_closed' });
  });

  it('refuses what the wallet cannot cover, with new-api code and wording, and takes nothing', async () => {
    const ids = await seed(1_000);
    const ledger = await start();
    const error = await refusal(ledger.reserve({ userId: ids.userId, amount: 1_500 }));
    expect([error.code, error.status]).toEqual(['insufficient_user_quota', 403]);
    expect(error.localized('zh')).toBe('预扣费额度失败, 用户剩余额度: ＄0.002000, 需要预扣费额度: ＄0.003000');
    expect((await balances(ids)).user).toBe(1_000);
    expect(await leasesOf('user', ids.userId)).toEqual([]);

    // Exactly what is left can be reserved; then even a zero reservation is refused.
    const all = await ledger.reserve({ userId: ids.userId, amount: 1_000 });
    const empty = await refusal(ledger.reserve({ userId: ids.userId, amount: 0 }));
    expect([empty.code, empty.status]).toEqual(['insufficient_user_quota', 403]);
    expect(empty.localized('zh')).toBe('用户额度不足, 剩余额度: ＄0.000000');
    await ledger.settle(all, 1_000);

    // A negative wallet (an earlier overrun) is refused too.
    const negative = await seed(-10);
    const owing = await refusal(ledger.reserve({ userId: negative.userId, amount: 0 }));
    expect(owing.localized('en')).toBe('user quota is not enough, remaining quota: ＄-0.000020');
    await ledger.close();
    expect((await balances(ids)).user).toBe(0);
    expect((await balances(negative)).user).toBe(-10);
  });

  it('refuses what a limited token cannot cover, holding nothing of the wallet', async () => {
    const ids = await seed(1_000_000, 1_000);
    const ledger = await start();
    const error = await refusal(
      ledger.reserve({ userId: ids.userId, tokenId: ids.tokenId, tokenUnlimited: false, amount: 1_500 }),
    );
    expect([error.code, error.status]).toEqual(['pre_consume_token_quota_failed', 403]);
    expect(error.localized('en')).toBe(
      'token quota is not enough, token remain quota: ＄0.002000, need quota: ＄0.003000',
    );
    expect(ledger.balance(ids.userId)).toBe(1_000_000);
    expect(ledger.stats()).toMatchObject({ reservedQuota: 0, openReservations: 0 });
    await ledger.close();
    expect(await balances(ids)).toEqual({ user: 1_000_000, token: 1_000 });
  });

  it('leaves unlimited tokens and token-less requests to the wallet alone', async () => {
    const ids = await seed(100_000, 0, true);
    const ledger = await start();
    const viaToken = await ledger.reserve({
      userId: ids.userId,
      tokenId: ids.tokenId,
      tokenUnlimited: true,
      amount: 500,
    });
    const playground = await ledger.reserve({ userId: ids.userId, amount: 500 });
    await ledger.settle(viaToken, 400);
    await ledger.settle(playground, 600);
    expect(await leasesOf('token', ids.tokenId)).toEqual([]);
    await ledger.close();
    expect(await balances(ids)).toEqual({ user: 99_000, token: 0 });
  });

  it('charges a settlement above its reservation even past zero, then refuses', async () => {
    const ids = await seed(1_000);
    const ledger = await start();
    const all = await ledger.reserve({ userId: ids.userId, amount: 1_000 });
    expect(await ledger.settle(all, 1_500)).toBe(1_500);
    expect(ledger.balance(ids.userId)).toBe(-500);
    await expect(ledger.reserve({ userId: ids.userId, amount: 0 })).rejects.toMatchObject({
      code: 'insufficient_user_quota',
    });
    await ledger.close();
    expect((await balances(ids)).user).toBe(-500);
  });

  it('overruns by no more than the extra charge: a request arriving meanwhile cannot take the settling one', async () => {
    const ids = await seed(1_500);
    const ledger = await start({ leaseSliceQuota: 1_000 });
    const first = await ledger.reserve({ userId: ids.userId, amount: 1_000 });
    // Settling 600 above the reservation while another request asks for what the lease holds.
    const settling = ledger.settle(first, 1_600);
    const second = ledger.reserve({ userId: ids.userId, amount: 1_000 });
    expect(await settling).toBe(1_600);
    await expect(second).rejects.toMatchObject({ code: 'insufficient_user_quota' });
    await ledger.close();
    expect((await balances(ids)).user).toBe(-100);
  });

  it('tops the lease up as it runs low, in one lease row', async () => {
    const ids = await seed(1_000_000);
    const ledger = await start({ leaseSliceQuota: 1_000 });
    let spent = 0;
    for (let i = 0; i < 40; i++) {
      const reservation = await ledger.reserve({ userId: ids.userId, amount: 300 });
      await ledger.settle(reservation, 250);
      spent += 250;
    }
    await ledger.flush();
    const rows = await leasesOf('user', ids.userId);
    expect(rows).toHaveLength(1);
    // 10,000 spent out of 1,000-quota slices: the lease was topped up again and again.
    const { user } = await balances(ids);
    expect(user).toBeLessThanOrEqual(1_000_000 - spent);
    expect(user + rows[0]!.amount).toBe(1_000_000 - spent);
    await ledger.close();
    expect((await balances(ids)).user).toBe(1_000_000 - spent);
  });

  it('never promises more than the balance to concurrent requests', async () => {
    const ids = await seed(5_000);
    const ledger = await start({ leaseSliceQuota: 700 });
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, () => ledger.reserve({ userId: ids.userId, amount: 100 })),
    );
    const granted = results.filter((r) => r.status === 'fulfilled');
    expect(granted).toHaveLength(50);
    for (const r of results) {
      if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'insufficient_user_quota' });
    }
    await Promise.all(granted.map((r) => ledger.settle(r.value, 100)));
    await ledger.close();
    expect((await balances(ids)).user).toBe(0);
  });

  it('renews a lease in use, so that the sweeper never takes it', async () => {
    const ids = await seed(1_000_000);
    const cluster = createMemoryClusterState({ namespace: `ledger-${randomUUID()}` });
    const log = recordingLogger();
    const ledger = await start({ cluster, sweepIntervalMs: 200, sweepGraceMs: 0, logger: log.logger });
    const first = await ledger.reserve({ userId: ids.userId, amount: 100 });
    const [lease] = await leasesOf('user', ids.userId);
    let spent = 0;
    const until = Date.now() + 5_500; // well past the 3-second lifetime
    while (Date.now() < until) {
      const reservation = await ledger.reserve({ userId: ids.userId, amount: 100 });
      await sleep(50);
      await ledger.settle(reservation, 40);
      spent += 40;
    }
    await ledger.settle(first, 100);
    spent += 100;
    const [renewed] = await leasesOf('user', ids.userId);
    expect(renewed?.id).toBe(lease!.id);
    expect(renewed!.expires_at).toBeGreaterThanOrEqual(lease!.expires_at + 4);
    expect(log.warnings).toEqual([]);
    await ledger.close();
    await cluster.close();
    expect((await balances(ids)).user).toBe(1_000_000 - spent);
  });

  it('on close, waits for open reservations before giving the leases back', async () => {
    const ids = await seed(10_000);
    const ledger = await start();
    const open = await ledger.reserve({ userId: ids.userId, amount: 1_000 });
    const closing = ledger.close();
    await expect(ledger.reserve({ userId: ids.userId, amount: 1 })).rejects.toMatchObject({
      code: 'quota_ledger_closed',
      status: 503,
    });
    await sleep(200);
    expect(await leasesOf('user', ids.userId)).toHaveLength(1);
    await ledger.settle(open, 900);
    await closing;
    expect(await leasesOf('user', ids.userId)).toEqual([]);
    expect((await balances(ids)).user).toBe(10_000 - 900);
  });

  it('charges a reservation still open after the drain timeout straight to the balance', async () => {
    const ids = await seed(10_000);
    const ledger = await start({ drainTimeoutMs: 50 });
    const open = await ledger.reserve({ userId: ids.userId, amount: 1_000 });
    await ledger.close();
    expect(await leasesOf('user', ids.userId)).toEqual([]);
    expect((await balances(ids)).user).toBe(10_000);
    expect(await ledger.settle(open, 900)).toBe(900);
    expect((await balances(ids)).user).toBe(10_000 - 900);
  });

  it('gives an idle lease back on its own', async () => {
    const ids = await seed(50_000);
    const ledger = await start({ idleReturnMs: 300 });
    const reservation = await ledger.reserve({ userId: ids.userId, amount: 100 });
    await ledger.settle(reservation, 77);
    expect(await leasesOf('user', ids.userId)).toHaveLength(1);
    await sleep(1_500);
    expect(await leasesOf('user', ids.userId)).toEqual([]);
    expect((await balances(ids)).user).toBe(50_000 - 77);
    await ledger.close();
    expect((await balances(ids)).user).toBe(50_000 - 77);
  });

  it('survives database failures: a lost COMMIT reply is resolved by its transaction id, a failed charge is owed', async () => {
    const ids = await seed(1_000_000);
    const flaky = unreliable(db);
    const ledger = await start({ db: flaky.db });
    flaky.control.fail = 'commit-lost';
    await expect(ledger.reserve({ userId: ids.userId, amount: 1_000 })).rejects.toThrow('during COMMIT');
    // The slice was taken all the same; the next request finds out and uses that lease.
    expect(await leasesOf('user', ids.userId)).toHaveLength(1);
    const first = await ledger.reserve({ userId: ids.userId, amount: 1_000 });
    expect(await leasesOf('user', ids.userId)).toHaveLength(1);
    await ledger.settle(first, 600);

    flaky.control.fail = 'commit-lost';
    await ledger.flush(); // written, though the ledger cannot know it yet
    const second = await ledger.reserve({ userId: ids.userId, amount: 1_000 });
    await ledger.settle(second, 400);
    flaky.control.fail = 'rolled-back';
    await ledger.flush(); // not written
    expect((await leasesOf('user', ids.userId)).map((l) => l.amount)).toEqual([100_000 - 600]);

    // A charge the lease cannot cover, while the database is unreachable: owed, and paid on close.
    const big = await ledger.reserve({ userId: ids.userId, amount: 1_000 });
    flaky.control.fail = 'unreachable';
    expect(await ledger.settle(big, 150_000)).toBe(150_000);
    expect(ledger.stats().debtQuota).toBe(150_000 - 99_000);
    await ledger.close();
    expect((await balances(ids)).user).toBe(1_000_000 - 1_000 - 150_000);
    expect(await leasesOf('user', ids.userId)).toEqual([]);
  });

  it('settleWithin: a lost COMMIT reply is resolved by its transaction id, a rolled-back charge takes nothing', async () => {
    const ids = await seed(1_000_000, 1_000_000);
    const flaky = unreliable(db);
    const ledger = await start({ db: flaky.db });
    const charge = (amount: number) =>
      ledger
        .reserve({ userId: ids.userId, tokenId: ids.tokenId, amount })
        .then((r) => ledger.settleWithin(r, amount, (_trx, chargeBalances) => chargeBalances()));
    await charge(1_000);
    flaky.control.fail = 'commit-lost';
    await expect(charge(2_000)).rejects.toThrow('during COMMIT'); // charged, though the ledger cannot know it yet
    flaky.control.fail = 'rolled-back';
    await expect(charge(4_000)).rejects.toThrow('before COMMIT'); // not charged
    // Until they are resolved, both count as spent: nothing is promised out of quota that may be gone.
    expect(ledger.balance(ids.userId)).toBe(1_000_000 - 7_000);
    await charge(8_000); // resolves both first
    expect(ledger.balance(ids.userId)).toBe(1_000_000 - 11_000);
    expect(ledger.tokenBalance(ids.tokenId)).toBe(1_000_000 - 11_000);
    await ledger.close();
    expect(await balances(ids)).toEqual({ user: 1_000_000 - 11_000, token: 1_000_000 - 11_000 });
    expect(await leasesOf('user', ids.userId)).toEqual([]);
  });

  it.skipIf(!hasPostgres())('keeps serving other accounts while one waits for its top-up', async () => {
    const slow = await seed(1_000_000);
    const fast = await seed(1_000_000);
    const ledger = await start();
    // Another connection holds the slow user's row: its take has to wait for it.
    const blocker = new pg.Client({ connectionString: store.url });
    await blocker.connect();
    await blocker.query('begin');
    await blocker.query('select quota from users where id = $1 for update', [slow.userId]);
    let slowDone = false;
    const waiting = ledger.reserve({ userId: slow.userId, amount: 100 }).then((r) => {
      slowDone = true;
      return r;
    });
    await sleep(100);
    const other = await ledger.reserve({ userId: fast.userId, amount: 100 });
    expect(slowDone).toBe(false);
    await blocker.query('rollback');
    await blocker.end();
    await ledger.settle(await waiting, 10);
    await ledger.settle(other, 20);
    await ledger.close();
    expect((await balances(slow)).user).toBe(1_000_000 - 10);
    expect((await balances(fast)).user).toBe(1_000_000 - 20);
  });
});
