import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { type ClusterState, createClusterState, createMemoryClusterState } from './index.ts';

// Two ClusterState instances on one namespace stand for two pods; the clock is injected (`at`, ms).
const redisUrl = inject('redisUrl');
const fileNamespace = `tollgate-test-${randomUUID()}`;
const MINUTE = 60_000;
const T0 = 1_000_000;

describe('in-process window budgets', () => behavesAsBudgets(undefined));
describe.skipIf(redisUrl === undefined)('Redis window budgets', () => behavesAsBudgets(redisUrl));

function behavesAsBudgets(url: string | undefined) {
  const opened: ClusterState[] = [];
  let last = 0;
  async function pods(): Promise<[ClusterState, ClusterState]> {
    const namespace = `${fileNamespace}:${url ? 'redis' : 'memory'}:${++last}`;
    const states = await Promise.all([0, 1].map(() => createClusterState({ redisUrl: url, namespace })));
    opened.push(...states);
    return states as [ClusterState, ClusterState];
  }
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((state) => state.close()));
  });

  it('admits costs up to the limit across pods, then refuses with the time until enough frees', async () => {
    const [a, b] = await pods();
    expect(await a.budgets.admit([{ key: 'tpm', limit: 100, cost: 40 }], MINUTE, T0)).toMatchObject({ admitted: true });
    expect(await b.budgets.admit([{ key: 'tpm', limit: 100, cost: 50 }], MINUTE, T0 + 10_000)).toMatchObject({
      admitted: true,
    });
    // 90 in the window: 20 more does not fit until the first charge (40) leaves at T0 + 60 s.
    expect(await a.budgets.admit([{ key: 'tpm', limit: 100, cost: 20 }], MINUTE, T0 + 30_000)).toEqual({
      admitted: false,
      refused: 0,
      retryAfterMs: 30_000,
    });
    // 60 more needs both charges gone: the second leaves at T0 + 70 s.
    expect(await b.budgets.admit([{ key: 'tpm', limit: 100, cost: 60 }], MINUTE, T0 + 30_000)).toMatchObject({
      admitted: false,
      retryAfterMs: 40_000,
    });
    expect(await a.budgets.admit([{ key: 'tpm', limit: 100, cost: 10 }], MINUTE, T0 + 30_000)).toMatchObject({
      admitted: true,
    });
    // At T0 + 60 s the first charge has left the window: 60 in it, 40 free.
    expect(await b.budgets.admit([{ key: 'tpm', limit: 100, cost: 40 }], MINUTE, T0 + MINUTE)).toMatchObject({
      admitted: true,
    });
    expect(await b.budgets.admit([{ key: 'tpm', limit: 100, cost: 1 }], MINUTE, T0 + MINUTE)).toMatchObject({
      admitted: false,
    });
  });

  it('is all-or-nothing: a refusal by one budget takes nothing from the others', async () => {
    const [a, b] = await pods();
    const charges = (cost: number) => [
      { key: 'rpm', limit: 10, cost: 1 },
      { key: 'tpm', limit: 100, cost },
    ];
    expect(await a.budgets.admit(charges(90), MINUTE, T0)).toMatchObject({ admitted: true });
    expect(await b.budgets.admit(charges(20), MINUTE, T0)).toMatchObject({ admitted: false, refused: 1 });
    // The refused request's request count was not kept: nine more requests of 1 token fit, a tenth does not.
    for (let i = 0; i < 9; i++) expect((await a.budgets.admit(charges(1), MINUTE, T0)).admitted).toBe(true);
    expect(await b.budgets.admit(charges(0), MINUTE, T0)).toMatchObject({ admitted: false, refused: 0 });
  });

  it('refuses a cost above the limit itself, to retry after a whole window', async () => {
    const [a] = await pods();
    expect(await a.budgets.admit([{ key: 'k', limit: 10, cost: 11 }], MINUTE, T0)).toEqual({
      admitted: false,
      refused: 0,
      retryAfterMs: MINUTE,
    });
  });

  it('corrects a charge in its window on any pod, never below 0, and ignores one that left it', async () => {
    const [a, b] = await pods();
    const first = await a.budgets.admit([{ key: 'tpm', limit: 100, cost: 80 }], MINUTE, T0);
    if (!first.admitted) throw new Error('not admitted');
    expect((await a.budgets.admit([{ key: 'tpm', limit: 100, cost: 30 }], MINUTE, T0)).admitted).toBe(false);
    // Settled at 15 real tokens: 65 given back.
    await b.budgets.correct(first.ticket, [{ key: 'tpm', delta: -65 }]);
    expect((await a.budgets.admit([{ key: 'tpm', limit: 100, cost: 85 }], MINUTE, T0 + 1)).admitted).toBe(true);
    expect((await a.budgets.admit([{ key: 'tpm', limit: 100, cost: 1 }], MINUTE, T0 + 2)).admitted).toBe(false);
    await a.budgets.correct(first.ticket, [{ key: 'tpm', delta: -1000 }]);
    expect((await a.budgets.admit([{ key: 'tpm', limit: 100, cost: 15 }], MINUTE, T0 + 3)).admitted).toBe(true);
    // An upward correction counts too.
    await a.budgets.correct(first.ticket, [{ key: 'tpm', delta: 5 }]);
    expect((await a.budgets.admit([{ key: 'tpm', limit: 100, cost: 1 }], MINUTE, T0 + 4)).admitted).toBe(false);
    // Once the first charge has left the window (and was pruned), correcting it changes nothing.
    expect((await a.budgets.admit([{ key: 'tpm', limit: 100, cost: 0 }], MINUTE, T0 + MINUTE)).admitted).toBe(true);
    await b.budgets.correct(first.ticket, [{ key: 'tpm', delta: 50 }]);
    expect((await a.budgets.admit([{ key: 'tpm', limit: 100, cost: 0 }], MINUTE, T0 + MINUTE)).admitted).toBe(true);
    expect((await a.budgets.admit([{ key: 'tpm', limit: 100, cost: 1 }], MINUTE, T0 + MINUTE)).admitted).toBe(false);
  });

  it('never admits past the limit under 40 concurrent admissions from two pods', async () => {
    const [a, b] = await pods();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? a : b).budgets.admit([{ key: 'tpm', limit: 1000, cost: 70 }], MINUTE, T0),
      ),
    );
    expect(results.filter((r) => r.admitted)).toHaveLength(14);
  });

  it('rejects costs and limits that are not whole non-negative numbers', async () => {
    const [a] = await pods();
    await expect(a.budgets.admit([{ key: 'k', limit: 10, cost: 1.5 }], MINUTE)).rejects.toThrow(RangeError);
    await expect(a.budgets.admit([{ key: 'k', limit: -1, cost: 1 }], MINUTE)).rejects.toThrow(RangeError);
    await expect(a.budgets.admit([{ key: 'k', limit: 1, cost: 1 }], 0)).rejects.toThrow(RangeError);
  });
}

describe('in-process window budgets: what only they promise', () => {
  it('sweeps budgets whose charges all left their window', async () => {
    const state = createMemoryClusterState({ sweepIntervalMs: 1 });
    for (let i = 0; i < 10; i++) await state.budgets.admit([{ key: `k${i}`, limit: 5, cost: 1 }], MINUTE, T0);
    expect(state.stats().budgetKeys).toBe(10);
    await state.budgets.admit([{ key: 'other', limit: 5, cost: 1 }], MINUTE, T0 + MINUTE);
    expect(state.stats().budgetKeys).toBe(1);
    await state.close();
  });
});
