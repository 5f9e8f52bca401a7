import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sleep } from '../../../tests/support/wait.ts';
import { createMemoryClusterState } from './memory.ts';

describe('in-process cluster state: what only it promises', () => {
  it('drops expired hits as a key is written and sweeps idle keys and leases', async () => {
    const state = createMemoryClusterState({ sweepIntervalMs: 50 });
    for (let i = 0; i < 20; i++) await state.counters.add('busy', 50);
    for (let i = 0; i < 100; i++) await state.counters.take(`idle:${i}`, 50, 5);
    await state.locks.acquire('short', 50);
    expect(state.stats()).toMatchObject({ counterKeys: 101, hits: 120, locks: 1 });
    await sleep(80);
    // One write prunes its own key; the sweep it triggers drops the idle keys and the lapsed lease.
    expect(await state.counters.add('busy', 50)).toBe(1);
    expect(state.stats()).toMatchObject({ counterKeys: 1, hits: 1, locks: 0 });
    await state.close();
  });

  it('sweeps expired values that nobody reads again', async () => {
    const state = createMemoryClusterState({ sweepIntervalMs: 50 });
    for (let i = 0; i < 100; i++) await state.kv.set(`code:${i}`, 'x', 50);
    await state.kv.setIfAbsent('kept', 'y', 60_000);
    expect(state.stats().kvKeys).toBe(101);
    await sleep(80);
    // Any call past the sweep interval sweeps, a lock acquisition as well as a read of another key.
    await state.locks.acquire('other', 1000);
    expect(state.stats().kvKeys).toBe(1);
    expect(await state.kv.take('kept')).toBe('y');
    expect(state.stats().kvKeys).toBe(0);
    await state.close();
  });

  it('hides an expired value before any sweep, and drops it when read', async () => {
    const state = createMemoryClusterState({ sweepIntervalMs: 60_000 });
    await state.kv.set('k', 'v', 30);
    await sleep(50);
    expect(state.stats().kvKeys).toBe(1);
    expect(await state.kv.get('k')).toBeUndefined();
    expect(state.stats().kvKeys).toBe(0);
    await state.close();
  });

  it('keeps a hot key bounded: the log holds only the hits inside the window', async () => {
    const state = createMemoryClusterState({ sweepIntervalMs: 60_000 });
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 200; i++) await state.counters.add('hot', 30);
      await sleep(40);
    }
    expect(await state.counters.add('hot', 30)).toBe(1);
    expect(state.stats().hits).toBe(1);
    await state.close();
  });

  it('forgets a channel once its last subscriber leaves or its instance closes', async () => {
    const namespace = randomUUID();
    const a = createMemoryClusterState({ namespace });
    const b = createMemoryClusterState({ namespace });
    const off = await a.bus.subscribe('x', () => {});
    await b.bus.subscribe('y', () => {});
    expect(a.stats().channels).toBe(2);
    await off();
    expect(a.stats().channels).toBe(1);
    await b.close();
    expect(a.stats().channels).toBe(0);
    await a.close();
  });

  it('shares state by namespace only, and forgets it when the last instance closes', async () => {
    const namespace = randomUUID();
    const a = createMemoryClusterState({ namespace });
    const b = createMemoryClusterState({ namespace });
    const loner = createMemoryClusterState();
    await a.counters.add('k', 60_000);
    await a.kv.set('k', 'v', 60_000);
    expect(await b.counters.count('k', 60_000)).toBe(1);
    expect(await b.kv.get('k')).toBe('v');
    expect(await loner.counters.count('k', 60_000)).toBe(0);
    expect(await loner.kv.get('k')).toBeUndefined();
    await a.close();
    expect(await b.counters.count('k', 60_000)).toBe(1);
    expect(await b.kv.get('k')).toBe('v');
    await b.close();
    const later = createMemoryClusterState({ namespace });
    expect(await later.counters.count('k', 60_000)).toBe(0);
    expect(await later.kv.get('k')).toBeUndefined();
    await later.close();
    await loner.close();
  });

  it('refuses calls after close', async () => {
    const state = createMemoryClusterState();
    await state.close();
    await expect(state.ping()).rejects.toThrow('closed');
    await expect(state.bus.publish('x', 'y')).rejects.toThrow('closed');
    await expect(state.counters.take('k', 1000, 1)).rejects.toThrow('closed');
    await expect(state.kv.set('k', 'v', 1000)).rejects.toThrow('closed');
    await expect(state.kv.take('k')).rejects.toThrow('closed');
  });
});
