import { describe, expect, it } from 'vitest';
import type { ChannelSnapshot } from '../types.ts';
import { buildTiers, type KeyState, pickChannel, pickKey } from './picker.ts';
import { seededRandom, snapshot } from './test-support.ts';

function counts(
  channels: ChannelSnapshot[],
  picks: number,
  seed: number,
  exclude?: Set<number>,
): Map<number | undefined, number> {
  const candidates = buildTiers(channels);
  const random = seededRandom(seed);
  const seen = new Map<number | undefined, number>();
  for (let i = 0; i < picks; i++) {
    const id = pickChannel({ candidates, exclude, random })?.id;
    seen.set(id, (seen.get(id) ?? 0) + 1);
  }
  return seen;
}

describe('buildTiers', () => {
  it('groups by priority, highest first, ids ascending inside a tier', () => {
    const tiers = buildTiers([
      snapshot(4, { priority: 0 }),
      snapshot(2, { priority: 10 }),
      snapshot(3, { priority: -5 }),
      snapshot(1, { priority: 10 }),
    ]);
    expect(tiers.map((t) => [t.priority, t.channels.map((c) => c.id)])).toEqual([
      [10, [1, 2]],
      [0, [4]],
      [-5, [3]],
    ]);
  });

  it('is empty for no channels', () => {
    expect(buildTiers([])).toEqual([]);
  });
});

describe('pickChannel', () => {
  it('splits traffic by weight: 1:3 gives about 25/75 over 10k picks', () => {
    const seen = counts([snapshot(1, { weight: 1 }), snapshot(2, { weight: 3 })], 10_000, 42);
    expect(Math.abs((seen.get(1) ?? 0) / 10_000 - 0.25)).toBeLessThan(0.02);
    expect(Math.abs((seen.get(2) ?? 0) / 10_000 - 0.75)).toBeLessThan(0.02);
  });

  it('holds for large weights too (no smoothing artefacts): 10:30:60', () => {
    const seen = counts(
      [snapshot(1, { weight: 10 }), snapshot(2, { weight: 30 }), snapshot(3, { weight: 60 })],
      20_000,
      7,
    );
    expect(Math.abs((seen.get(1) ?? 0) / 20_000 - 0.1)).toBeLessThan(0.015);
    expect(Math.abs((seen.get(2) ?? 0) / 20_000 - 0.3)).toBeLessThan(0.015);
    expect(Math.abs((seen.get(3) ?? 0) / 20_000 - 0.6)).toBeLessThan(0.015);
  });

  it('picks uniformly when every weight is 0', () => {
    const seen = counts([snapshot(1), snapshot(2), snapshot(3)], 9_000, 3);
    for (const id of [1, 2, 3]) expect(Math.abs((seen.get(id) ?? 0) / 9_000 - 1 / 3)).toBeLessThan(0.02);
  });

  it('treats a weight-0 channel next to weighted ones as a stand-by', () => {
    const channels = [snapshot(1, { weight: 5 }), snapshot(2, { weight: 0 })];
    expect(counts(channels, 2_000, 11).get(2)).toBeUndefined();
    // Once the weighted channel failed, the stand-by takes the request.
    expect(counts(channels, 10, 11, new Set([1])).get(2)).toBe(10);
  });

  it('always uses the highest tier that has a channel', () => {
    const channels = [
      snapshot(1, { priority: 5, weight: 1 }),
      snapshot(2, { priority: 5, weight: 1 }),
      snapshot(3, { priority: 0, weight: 100 }),
    ];
    const seen = counts(channels, 1_000, 5);
    expect(seen.get(3)).toBeUndefined();
    expect((seen.get(1) ?? 0) + (seen.get(2) ?? 0)).toBe(1_000);
  });

  it('moves to the next tier only when the whole tier is excluded', () => {
    const candidates = buildTiers([
      snapshot(1, { priority: 5 }),
      snapshot(2, { priority: 5 }),
      snapshot(3, { priority: 0 }),
    ]);
    expect(pickChannel({ candidates, exclude: new Set([1]) })?.id).toBe(2);
    expect(pickChannel({ candidates, exclude: new Set([1, 2]) })?.id).toBe(3);
    expect(pickChannel({ candidates, exclude: new Set([1, 2, 3]) })).toBeUndefined();
  });

  it('never picks a channel that failed in the same request: retries walk every channel once', () => {
    const channels = [
      snapshot(1, { priority: 1, weight: 50 }),
      snapshot(2, { priority: 1, weight: 1 }),
      snapshot(3, { priority: 1, weight: 0 }),
      snapshot(4, { priority: 0, weight: 9 }),
      snapshot(5, { priority: 0, weight: 1 }),
    ];
    const candidates = buildTiers(channels);
    for (let seed = 1; seed <= 50; seed++) {
      const random = seededRandom(seed);
      const failed = new Set<number>();
      const order: number[] = [];
      for (;;) {
        const channel = pickChannel({ candidates, exclude: failed, random });
        if (!channel) break;
        expect(failed.has(channel.id)).toBe(false);
        order.push(channel.id);
        failed.add(channel.id); // this attempt failed
      }
      expect([...order].sort()).toEqual([1, 2, 3, 4, 5]);
      // The top tier is used up before the lower one is touched.
      expect(order.slice(0, 3).sort()).toEqual([1, 2, 3]);
    }
  });

  it('answers undefined without candidates', () => {
    expect(pickChannel({ candidates: [] })).toBeUndefined();
  });

  it('survives a random source at the very top of its range', () => {
    const candidates = buildTiers([snapshot(1, { weight: 1 }), snapshot(2, { weight: 2 })]);
    expect(pickChannel({ candidates, random: () => 0.9999999999999999 })?.id).toBe(2);
    expect(pickChannel({ candidates, random: () => 0 })?.id).toBe(1);
  });
});

describe('pickKey', () => {
  const multi = (mode: 'random' | 'polling', keys = 3) =>
    snapshot(9, { multiKeyMode: mode, keys: Array.from({ length: keys }, (_, i) => `k${i}`) });

  it('round-robins in polling mode, keeping the cursor in the state', () => {
    const channel = multi('polling');
    const state: KeyState = { cursor: 0, disabled: new Set() };
    expect(Array.from({ length: 7 }, () => pickKey(channel, state))).toEqual([0, 1, 2, 0, 1, 2, 0]);
    expect(state.cursor).toBe(1);
  });

  it('skips disabled keys in polling mode', () => {
    const channel = multi('polling', 4);
    const state: KeyState = { cursor: 0, disabled: new Set([1, 2]) };
    expect(Array.from({ length: 4 }, () => pickKey(channel, state))).toEqual([0, 3, 0, 3]);
  });

  it('starts from a stale cursor past the end at the first key', () => {
    const channel = multi('polling', 2);
    expect(pickKey(channel, { cursor: 7, disabled: new Set() })).toBe(0);
  });

  it('draws enabled keys uniformly in random mode, never a disabled one', () => {
    const channel = multi('random', 4);
    const state: KeyState = { cursor: 0, disabled: new Set([2]) };
    const random = seededRandom(99);
    const seen = [0, 0, 0, 0];
    for (let i = 0; i < 6_000; i++) seen[pickKey(channel, state, random)]! += 1;
    expect(seen[2]).toBe(0);
    for (const index of [0, 1, 3]) expect(Math.abs(seen[index]! / 6_000 - 1 / 3)).toBeLessThan(0.03);
  });

  it('answers -1 when every key is disabled or there is none', () => {
    expect(pickKey(multi('polling', 2), { cursor: 0, disabled: new Set([0, 1]) })).toBe(-1);
    expect(pickKey(multi('random', 2), { cursor: 0, disabled: new Set([0, 1]) })).toBe(-1);
    expect(pickKey(snapshot(1, { keys: [] }), undefined)).toBe(-1);
  });

  it('uses the only key of a single-key channel', () => {
    expect(pickKey(snapshot(1), undefined)).toBe(0);
  });
});
