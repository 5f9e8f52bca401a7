import { randomInt, randomUUID } from 'node:crypto';
import type { Kysely, KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore, hasPostgres } from '../../../../tests/support/database.ts';
import { eventually, sleep } from '../../../../tests/support/wait.ts';
import { type ClusterState, createMemoryClusterState } from '../../cluster/index.ts';
import type { Database } from '../../store/database.ts';
import { migrateToLatest, openStore } from '../../store/index.ts';
import { QuotaLedger, type QuotaLedgerConfig, type Reservation } from './index.ts';

/**
 * Two ledgers on one database stand for two gateway pods: on Postgres each has its own pool (as
 * two processes would); on the embedded PGlite they share its single connection.
 */
const backends = [...(hasPostgres() ? ['postgres' as const] : []), 'pglite' as const];

describe.each(backends)('quota ledger across two pods (%s)', (backend) => {
  let podA: Kysely<Database>;
  let podB: Kysely<Database>;
  let dispose: () => Promise<void>;
  /** Opens the database once more, as another process would (PGlite: the same connection). */
  let openPod: () => Promise<{ db: Kysely<Database>; close(): Promise<void> }>;

  beforeAll(async () => {
    if (backend === 'postgres') {
      const test = await createTestStore();
      const second = await openStore({ databaseUrl: test.url!, poolMax: 5 });
      podA = test.store.db;
      podB = second.db;
      openPod = () => openStore({ databaseUrl: test.url!, poolMax: 2 });
      dispose = async () => {
        await second.close();
        await test.dispose();
      };
    } else {
      const store = await openStore({ dataDir: 'memory://' });
      await migrateToLatest(store.db);
      podA = podB = store.db;
      dispose = () => store.close();
      openPod = async () => ({ db: store.db, close: async () => {} });
    }
  });
  afterAll(() => dispose?.());

  async function seedUser(quota: number) {
    const row = await podA
      .insertInto('users')
      .values({ username: `u${randomUUID().slice(0, 8)}`, password: 'x', created_at: 0, quota })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async function seedToken(userId: number, remain: number, unlimited = false) {
    const row = await podA
      .insertInto('tokens')
      .values({
        user_id: userId,
        key_hmac: randomUUID(),
        key_encrypted: 'x',
        name: 't',
        created_time: 0,
        remain_quota: remain,
        unlimited_quota: unlimited,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  const userQuota = async (id: number) =>
    (await podA.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota;
  const tokenQuota = async (id: number) =>
    (await podA.selectFrom('tokens').select('remain_quota').where('id', '=', id).executeTakeFirstOrThrow())
      .remain_quota;
  const leaseRows = (kind: 'user' | 'token', id: number) =>
    podA.selectFrom('quota_leases').selectAll().where('account_type', '=', kind).where('account_id', '=', id).execute();

  function twoPods(cluster: ClusterState, overrides: Partial<QuotaLedgerConfig> = {}) {
    const common = { leaseSliceQuota: 20_000, leaseTtlMs: 3_000, cluster, sweepIntervalMs: 200, sweepGraceMs: 0 };
    return Promise.all([
      QuotaLedger.start({ db: podA, holder: 'pod-a', ...common, ...overrides }),
      QuotaLedger.start({ db: podB, holder: 'pod-b', ...common, ...overrides }),
    ]);
  }

  const newCluster = () => createMemoryClusterState({ namespace: `ledger-${randomUUID()}` });

  interface Load {
    charged: { user: number; limited: number };
    extras: number;
    granted: number;
    refusals: Map<string, number>;
  }

  /**
   * `count` requests over ~300 ms, spread over the pods, through the limited token when
   * `viaLimited(i)` and the unlimited one otherwise; one in ten fails upstream (refund); the others
   * cost up to `maxCost`.
   */
  async function runLoad(
    pods: (index: number) => QuotaLedger,
    ids: { userId: number; limited: number; unlimited: number },
    options: { count: number; reserve: number; maxCost: number; viaLimited: (i: number) => boolean },
  ): Promise<Load> {
    const load: Load = { charged: { user: 0, limited: 0 }, extras: 0, granted: 0, refusals: new Map() };
    await Promise.all(
      Array.from({ length: options.count }, async (_, i) => {
        await sleep(randomInt(300));
        const viaLimited = options.viaLimited(i);
        let reservation: Reservation;
        let ledger = pods(i);
        try {
          reservation = await ledger.reserve({
            userId: ids.userId,
            tokenId: viaLimited ? ids.limited : ids.unlimited,
            tokenUnlimited: !viaLimited,
            amount: options.reserve,
          });
        } catch (error) {
          const code = (error as { code?: string }).code ?? String(error);
          if (code !== 'quota_ledger_closed') {
            load.refusals.set(code, (load.refusals.get(code) ?? 0) + 1);
            return;
          }
          // The pod is shutting down: the client's retry lands on the other one.
          ledger = pods(i + 1);
          try {
            reservation = await ledger.reserve({
              userId: ids.userId,
              tokenId: viaLimited ? ids.limited : ids.unlimited,
              tokenUnlimited: !viaLimited,
              amount: options.reserve,
            });
          } catch (retryError) {
            const retryCode = (retryError as { code?: string }).code ?? String(retryError);
            load.refusals.set(retryCode, (load.refusals.get(retryCode) ?? 0) + 1);
            return;
          }
        }
        load.granted++;
        await sleep(randomInt(40));
        if (randomInt(10) === 0) {
          await ledger.refund(reservation);
          return;
        }
        const cost = randomInt(options.maxCost + 1);
        const charged = await ledger.settle(reservation, cost);
        load.charged.user += charged;
        if (viaLimited) load.charged.limited += charged;
        load.extras += Math.max(0, cost - options.reserve);
      }),
    );
    return load;
  }

  /** Reserves and spends `request.amount` one request at a time on each pod in turn until all refuse. */
  async function drain(pods: QuotaLedger[], request: Parameters<QuotaLedger['reserve']>[0]): Promise<number> {
    let drained = 0;
    for (const pod of [...pods, ...pods]) {
      for (;;) {
        const reservation = await pod.reserve(request).catch(() => undefined);
        if (!reservation) break;
        drained += await pod.settle(reservation, request.amount);
      }
    }
    return drained;
  }

  it('500 concurrent requests on a token with quota for ~100: never overspent, books balanced to the unit', async () => {
    const reserve = 1_000;
    const userId = await seedUser(1_000 * reserve);
    const limited = await seedToken(userId, 100 * reserve);
    const unlimited = await seedToken(userId, 0, true);
    const cluster = newCluster();
    const [a, b] = await twoPods(cluster);

    const load = await runLoad(
      (i) => (i % 3 === 0 ? a : b),
      { userId, limited, unlimited },
      {
        count: 500,
        reserve,
        maxCost: reserve,
        viaLimited: () => true,
      },
    );
    // Demand was well above supply, so requests were refused with new-api's code while quota was still
    // held: reserved by requests in flight, or leased to the other pod. How much depends on timing; what
    // must hold is that none of it was lost. Drained one request at a time on each pod in turn, the
    // quota the burst left is spent down to less than one reservation (per pod, for its last lease).
    const drained = await drain([a, b], { userId, tokenId: limited, tokenUnlimited: false, amount: reserve });
    await Promise.all([a.close(), b.close()]);
    await cluster.close();

    // Costs never exceed reservations here, so the token may not be overrun at all.
    expect(load.charged.limited + drained).toBeLessThanOrEqual(100 * reserve);
    expect(await tokenQuota(limited)).toBe(100 * reserve - load.charged.limited - drained);
    expect(await userQuota(userId)).toBe(1_000 * reserve - load.charged.user - drained);
    expect(await leaseRows('user', userId)).toEqual([]);
    expect(await leaseRows('token', limited)).toEqual([]);
    expect(100 * reserve - load.charged.limited - drained).toBeLessThan(2 * reserve);
    expect([...load.refusals.keys()]).toEqual(['pre_consume_token_quota_failed']);
    expect(load.granted + load.refusals.get('pre_consume_token_quota_failed')!).toBe(500);
  });

  it('500 concurrent requests through two tokens on a wallet with quota for ~150', async () => {
    const reserve = 1_000;
    const userId = await seedUser(150 * reserve);
    const limited = await seedToken(userId, 60 * reserve);
    const unlimited = await seedToken(userId, 0, true);
    const cluster = newCluster();
    const [a, b] = await twoPods(cluster);
    const load = await runLoad(
      (i) => (i % 2 === 0 ? a : b),
      { userId, limited, unlimited },
      {
        count: 500,
        reserve,
        maxCost: reserve,
        viaLimited: (i) => i % 5 < 2,
      },
    );
    // As above: what the refusals left in the wallet is drained through the unlimited token, one request
    // at a time on each pod in turn, down to less than one reservation per pod.
    const drained = await drain([a, b], { userId, tokenId: unlimited, tokenUnlimited: true, amount: reserve });
    await Promise.all([a.close(), b.close()]);
    await cluster.close();
    expect(load.charged.user + drained).toBeLessThanOrEqual(150 * reserve);
    expect(load.charged.limited).toBeLessThanOrEqual(60 * reserve);
    expect(await userQuota(userId)).toBe(150 * reserve - load.charged.user - drained);
    expect(await tokenQuota(limited)).toBe(60 * reserve - load.charged.limited);
    expect(await tokenQuota(unlimited)).toBe(0);
    expect(150 * reserve - load.charged.user - drained).toBeLessThan(2 * reserve);
    expect(load.refusals.get('insufficient_user_quota')).toBeGreaterThan(0);
    expect(await leaseRows('user', userId)).toEqual([]);
    expect(await leaseRows('token', limited)).toEqual([]);
  });

  it('charges settlements above their reservation exactly, overrunning by no more than those extras', async () => {
    const reserve = 1_000;
    const userId = await seedUser(100 * reserve);
    const limited = await seedToken(userId, 60 * reserve);
    const unlimited = await seedToken(userId, 0, true);
    const cluster = newCluster();
    const [a, b] = await twoPods(cluster);
    const load = await runLoad(
      (i) => (i % 2 === 0 ? a : b),
      { userId, limited, unlimited },
      {
        count: 500,
        reserve,
        maxCost: 2 * reserve,
        viaLimited: (i) => i % 2 === 0,
      },
    );
    await Promise.all([a.close(), b.close()]);
    await cluster.close();
    expect(load.extras).toBeGreaterThan(0);
    expect(await userQuota(userId)).toBe(100 * reserve - load.charged.user);
    expect(await tokenQuota(limited)).toBe(60 * reserve - load.charged.limited);
    expect(load.charged.user - 100 * reserve).toBeLessThanOrEqual(load.extras);
    expect(load.charged.limited - 60 * reserve).toBeLessThanOrEqual(load.extras);
    expect(await leaseRows('user', userId)).toEqual([]);
  });

  it.each([
    { drain: 'full', drainTimeoutMs: 10_000 },
    { drain: 'cut short', drainTimeoutMs: 20 },
  ])(
    'a pod closing mid-load (SIGTERM, drain $drain) gives its leases back and the books balance',
    async ({ drainTimeoutMs }) => {
      const reserve = 1_000;
      const userId = await seedUser(150 * reserve);
      const limited = await seedToken(userId, 100 * reserve);
      const unlimited = await seedToken(userId, 0, true);
      const cluster = newCluster();
      const [a, b] = await twoPods(cluster, { drainTimeoutMs });
      const loading = runLoad(
        (i) => (i % 2 === 0 ? a : b),
        { userId, limited, unlimited },
        {
          count: 500,
          reserve,
          maxCost: reserve,
          viaLimited: (i) => i % 2 === 0,
        },
      );
      await sleep(150);
      const openAtClose = a.stats().openReservations;
      await a.close();
      expect(openAtClose).toBeGreaterThan(0);
      expect(await leaseRows('user', userId).then((rows) => rows.filter((r) => r.holder === 'pod-a'))).toEqual([]);
      const load = await loading;
      await b.close();
      await cluster.close();
      expect(await userQuota(userId)).toBe(150 * reserve - load.charged.user);
      expect(await tokenQuota(limited)).toBe(100 * reserve - load.charged.limited);
      expect(await leaseRows('user', userId)).toEqual([]);
      expect(await leaseRows('token', limited)).toEqual([]);
      if (drainTimeoutMs > 1_000) {
        // Drained: every reservation was settled out of a lease. (Cut short, the ones still open
        // were given back with their lease and are charged afresh, which may overrun.)
        expect(load.charged.user).toBeLessThanOrEqual(150 * reserve);
        expect(load.charged.limited).toBeLessThanOrEqual(100 * reserve);
      }
    },
  );

  it('takes are atomic: pods racing for the whole balance, exactly one gets it', async () => {
    const pods = await Promise.all(Array.from({ length: 8 }, () => openPod()));
    const ledgers = await Promise.all(
      pods.map((pod, i) => QuotaLedger.start({ db: pod.db, holder: `pod-${i}`, leaseSliceQuota: 1_000_000 })),
    );
    try {
      for (let round = 0; round < 10; round++) {
        const userId = await seedUser(1_000);
        const results = await Promise.allSettled(ledgers.map((l) => l.reserve({ userId, amount: 1_000 })));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        for (const [i, r] of results.entries()) {
          if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'insufficient_user_quota' });
          else await ledgers[i]!.settle(r.value, 1_000);
        }
        expect(await userQuota(userId)).toBeGreaterThanOrEqual(0);
      }
    } finally {
      await Promise.all(ledgers.map((l) => l.close()));
      await Promise.all(pods.map((p) => p.close()));
    }
  });

  it('a crashed pod: the sweeper returns its leases; once it reconnects it pays what it spent', async () => {
    const userId = await seedUser(1_000_000);
    let crashed = false;
    const cutOff: KyselyPlugin = {
      transformQuery(args) {
        if (crashed) throw new Error('connection lost');
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const warnings: string[] = [];
    const logger = { info() {}, warn: (_: object, msg: string) => warnings.push(msg), error() {} };
    const cluster = newCluster();
    const config = { leaseSliceQuota: 100_000, leaseTtlMs: 3_000 };
    // Pod A runs no sweeper, so that B's does the returning.
    const a = await QuotaLedger.start({ db: podA.withPlugin(cutOff), holder: 'pod-a', logger, ...config });
    const b = await QuotaLedger.start({
      db: podB,
      holder: 'pod-b',
      cluster,
      sweepIntervalMs: 200,
      sweepGraceMs: 0,
      ...config,
    });

    const spend = async (ledger: QuotaLedger, cost: number) =>
      ledger.settle(await ledger.reserve({ userId, amount: 1_000 }), cost);
    for (let i = 0; i < 5; i++) await spend(a, 600);
    await a.flush();
    const flushed = 5 * 600;
    for (let i = 0; i < 3; i++) await spend(a, 500);
    const unflushed = 3 * 500;
    const open = await a.reserve({ userId, amount: 1_000 });
    await spend(b, 700);

    crashed = true;
    const aLease = (rows: { holder: string }[]) => rows.filter((r) => r.holder === 'pod-a');
    const left = await eventually(
      () => leaseRows('user', userId),
      (rows) => aLease(rows).length === 0,
      8_000,
    );
    expect(aLease(left)).toEqual([]);
    // The crash lost what A spent since its last flush (at most one flush interval of spending).
    await b.flush();
    const bRows = await leaseRows('user', userId);
    expect((await userQuota(userId)) + bRows.reduce((sum, r) => sum + r.amount, 0)).toBe(1_000_000 - flushed - 700);
    // Cut off, A cannot promise anything once its lease has lapsed.
    await expect(a.reserve({ userId, amount: 1 })).rejects.toThrow('connection lost');

    crashed = false;
    await a.flush();
    expect(warnings).toContain('quota lease was returned by the sweeper while still held');
    // The open reservation's lease went back whole: it is charged afresh, and nothing stays reserved.
    expect(await a.settle(open, 800)).toBe(800);
    expect(a.stats()).toMatchObject({ reservedQuota: 0, openReservations: 0 });
    await a.flush();
    await Promise.all([a.close(), b.close()]);
    await cluster.close();
    expect(await userQuota(userId)).toBe(1_000_000 - flushed - unflushed - 800 - 700);
    expect(await leaseRows('user', userId)).toEqual([]);
  });
});
