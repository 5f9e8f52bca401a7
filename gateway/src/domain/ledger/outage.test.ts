import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore } from '../../../../tests/support/database.ts';
import { sleep } from '../../../../tests/support/wait.ts';
import type { Database } from '../../store/database.ts';
import { StoreUnavailableError } from '../../store/unavailable.ts';
import { QuotaLedger } from './index.ts';

let store: Awaited<ReturnType<typeof createTestStore>>;
let db: Kysely<Database>;

beforeAll(async () => {
  store = await createTestStore();
  db = store.store.db;
});
afterAll(() => store?.dispose());

/** The database behind a switch: while `down`, every transaction fails as an unreachable database does. */
function switchable(target: Kysely<Database>) {
  const control = { down: false };
  const proxy = new Proxy(target, {
    get(object, prop) {
      if (prop === 'transaction' && control.down) {
        return () => ({
          async execute(): Promise<never> {
            throw new StoreUnavailableError();
          },
        });
      }
      const value = Reflect.get(object, prop, object);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
  return { db: proxy, control };
}

async function seedUser(quota: number): Promise<number> {
  const user = await db
    .insertInto('users')
    .values({ username: `o${randomUUID().slice(0, 8)}`, password: 'x', created_at: 0, quota })
    .returning('id')
    .executeTakeFirstOrThrow();
  return user.id;
}

const quotaOf = async (userId: number) =>
  (await db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow()).quota;

describe('quota ledger while the database is unreachable', () => {
  it('serves known accounts past their lease on one slice of outage credit, charged as debt once it is back', async () => {
    const userId = await seedUser(1_000_000);
    const stranger = await seedUser(1_000_000);
    const outage = switchable(db);
    // A 3 s lease may back new reservations for 1.7 s after its last write.
    const ledger = await QuotaLedger.start({
      db: outage.db,
      holder: 'pod-o',
      leaseSliceQuota: 100_000,
      leaseTtlMs: 3_000,
    });
    await ledger.settle(await ledger.reserve({ userId, amount: 1_000 }), 1_000);
    outage.control.down = true;
    await sleep(2_000);

    // The lease's remaining 99,000 and then 100,000 of credit (one slice, below the 900,000 last seen).
    let served = 1;
    for (let i = 0; i < 199; i++) {
      await ledger.settle(await ledger.reserve({ userId, amount: 1_000 }), 1_000);
      served++;
    }
    await expect(ledger.reserve({ userId, amount: 1_000 })).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(ledger.stats().debtQuota).toBe(100_000);
    // An account this pod never held has nothing to be served on.
    await expect(ledger.reserve({ userId: stranger, amount: 1 })).rejects.toBeInstanceOf(StoreUnavailableError);

    outage.control.down = false;
    await ledger.flush();
    expect(ledger.stats().debtQuota).toBe(0);
    await ledger.close();
    expect(await quotaOf(userId)).toBe(1_000_000 - served * 1_000);
    expect(await quotaOf(stranger)).toBe(1_000_000);
  });

  it('gives no credit beyond the balance last seen', async () => {
    // A lease takes a quarter of the balance at most: 1,000 of 4,000, leaving 3,000 seen outside it.
    const userId = await seedUser(4_000);
    const outage = switchable(db);
    const ledger = await QuotaLedger.start({
      db: outage.db,
      holder: 'pod-p',
      leaseSliceQuota: 100_000,
      leaseTtlMs: 3_000,
    });
    await ledger.settle(await ledger.reserve({ userId, amount: 500 }), 500);
    outage.control.down = true;
    // 500 left in the lease plus 3,000 of credit.
    for (let i = 0; i < 7; i++) await ledger.settle(await ledger.reserve({ userId, amount: 500 }), 500);
    await expect(ledger.reserve({ userId, amount: 1 })).rejects.toBeInstanceOf(StoreUnavailableError);
    outage.control.down = false;
    await ledger.close();
    expect(await quotaOf(userId)).toBe(0);
  });
});
