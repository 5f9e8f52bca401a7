import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore, hasPostgres } from '../../../../tests/support/database.ts';
import { createMemoryClusterState } from '../../cluster/index.ts';
import type { Database } from '../../store/database.ts';
import { migrateToLatest, openStore } from '../../store/index.ts';
import { QuotaLedger, type Reservation } from './index.ts';

/**
 * `extend`: a reservation that grows while its stream runs (relay/overrun). Two ledgers on one
 * database stand for two pods, as in pods.test.ts: on Postgres each has its own pool; on the
 * embedded PGlite they share its connection.
 */
const backends = [...(hasPostgres() ? ['postgres' as const] : []), 'pglite' as const];

describe.each(backends)('extending a reservation (%s)', (backend) => {
  let podA: Kysely<Database>;
  let podB: Kysely<Database>;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    if (backend === 'postgres') {
      const test = await createTestStore();
      const second = await openStore({ databaseUrl: test.url!, poolMax: 5 });
      podA = test.store.db;
      podB = second.db;
      dispose = async () => {
        await second.close();
        await test.dispose();
      };
    } else {
      const store = await openStore({ dataDir: 'memory://' });
      await migrateToLatest(store.db);
      podA = podB = store.db;
      dispose = () => store.close();
    }
  });
  afterAll(() => dispose?.());

  async function seed(userQuota: number, tokenQuota: number) {
    const user = await podA
      .insertInto('users')
      .values({ username: `u${randomUUID().slice(0, 8)}`, password: 'x', created_at: 0, quota: userQuota })
      .returning('id')
      .executeTakeFirstOrThrow();
    const token = await podA
      .insertInto('tokens')
      .values({
        user_id: user.id,
        key_hmac: randomUUID(),
        key_encrypted: 'x',
        name: 't',
        created_time: 0,
        remain_quota: tokenQuota,
        unlimited_quota: false,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { userId: user.id, tokenId: token.id };
  }

  const balances = async (ids: { userId: number; tokenId: number }) => ({
    user: (await podA.selectFrom('users').select('quota').where('id', '=', ids.userId).executeTakeFirstOrThrow()).quota,
    token: (
      await podA.selectFrom('tokens').select('remain_quota').where('id', '=', ids.tokenId).executeTakeFirstOrThrow()
    ).remain_quota,
    leases: (await podA.selectFrom('quota_leases').select('id').execute()).length,
  });

  const pod = (db: Kysely<Database>, holder: string, cluster = createMemoryClusterState({ namespace: holder })) =>
    QuotaLedger.start({ db, holder, cluster, leaseSliceQuota: 2_000, leaseTtlMs: 3_000, sweepGraceMs: 0 });

  it('holds more on the wallet and the token; settle releases it all and charges exactly the cost', async () => {
    const ids = await seed(100_000, 10_000);
    const ledger = await pod(podA, `a-${randomUUID()}`);
    const reservation = await ledger.reserve({ ...ids, amount: 1_000 });
    expect(await ledger.extend(reservation, 3_000)).toBe(true);
    expect(await ledger.extend(reservation, 3_000)).toBe(true);
    expect(ledger.stats()).toMatchObject({ reservedQuota: 2 * 7_000, openReservations: 1 });
    // The token has 10,000: 7,000 held, another 4,000 is refused and holds nothing.
    expect(await ledger.extend(reservation, 4_000)).toBe(false);
    expect(ledger.stats().reservedQuota).toBe(2 * 7_000);
    expect(await ledger.settle(reservation, 6_543)).toBe(6_543);
    expect(ledger.stats()).toMatchObject({ reservedQuota: 0, openReservations: 0 });
    // Over: an extension holds nothing any more.
    expect(await ledger.extend(reservation, 1)).toBe(false);
    expect(ledger.stats().reservedQuota).toBe(0);
    await ledger.close();
    expect(await balances(ids)).toEqual({ user: 100_000 - 6_543, token: 10_000 - 6_543, leases: 0 });
  });

  it('gives extensions back with a refund, and charges an extended durable settlement once', async () => {
    const ids = await seed(50_000, 20_000);
    const ledger = await pod(podA, `a-${randomUUID()}`);
    const refunded = await ledger.reserve({ ...ids, amount: 500 });
    expect(await ledger.extend(refunded, 2_500)).toBe(true);
    await ledger.refund(refunded);
    expect(ledger.stats().reservedQuota).toBe(0);

    const durable = await ledger.reserve({ ...ids, amount: 500 });
    expect(await ledger.extend(durable, 1_500)).toBe(true);
    expect(await ledger.extend(durable, 1_500)).toBe(true);
    await ledger.settleWithin(durable, 3_210, async (_trx, chargeBalances) => {
      await chargeBalances();
    });
    expect(ledger.stats()).toMatchObject({ reservedQuota: 0, openReservations: 0 });
    await ledger.close();
    expect(await balances(ids)).toEqual({ user: 50_000 - 3_210, token: 20_000 - 3_210, leases: 0 });
  });

  it('refuses a reservation of another ledger', async () => {
    const ids = await seed(10_000, 10_000);
    const [a, b] = await Promise.all([pod(podA, `a-${randomUUID()}`), pod(podB, `b-${randomUUID()}`)]);
    const reservation = await a.reserve({ ...ids, amount: 10 });
    await expect(b.extend(reservation, 10)).rejects.toThrow('not a reservation of this ledger');
    await expect(a.extend(reservation, -1)).rejects.toThrow(RangeError);
    await a.refund(reservation);
    await Promise.all([a.close(), b.close()]);
  });

  it('never holds more than the token has, with 100 growing reservations on two pods', async () => {
    const quota = 40_000;
    const ids = await seed(10_000_000, quota);
    const cluster = createMemoryClusterState({ namespace: `extend-${randomUUID()}` });
    const [a, b] = await Promise.all([pod(podA, 'pod-a', cluster), pod(podB, 'pod-b', cluster)]);
    const step = 300;
    /** Per request: what it held in the end (its reservation and every extension granted). */
    const held: number[] = [];
    const reservations = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const ledger = i % 2 === 0 ? a : b;
        const reservation = await ledger.reserve({ ...ids, amount: step }).catch(() => undefined);
        if (!reservation) return undefined;
        let amount = step;
        // Grows until refused, as a stream's guard tops up; others grow alongside on both pods.
        while (await ledger.extend(reservation, step)) {
          amount += step;
          await new Promise((resolve) => setImmediate(resolve));
        }
        held.push(amount);
        return { ledger, reservation, amount };
      }),
    );
    const granted = reservations.filter((r): r is { ledger: QuotaLedger; reservation: Reservation; amount: number } =>
      Boolean(r),
    );
    expect(granted.length).toBeGreaterThan(0);
    // Everything held at once, on both pods, is backed by the token: nothing promised beyond it.
    expect(held.reduce((sum, x) => sum + x, 0)).toBeLessThanOrEqual(quota);
    expect(held.some((amount) => amount > step)).toBe(true);
    // Each spends what it held: the token never goes below zero, and the books balance to the unit.
    let charged = 0;
    for (const { ledger, reservation, amount } of granted) charged += await ledger.settle(reservation, amount);
    await Promise.all([a.close(), b.close()]);
    await cluster.close();
    const after = await balances(ids);
    expect(charged).toBeLessThanOrEqual(quota);
    expect(after).toEqual({ user: 10_000_000 - charged, token: quota - charged, leases: 0 });
  });
});
