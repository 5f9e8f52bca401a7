import { expect, it } from 'vitest';
import { collectGarbage, collectGarbageWhenResting, residentHeap } from './idle-garbage.ts';

const MiB = 1024 * 1024;

/** A burst's worth of short-lived objects: V8 grows its heap (the young generation first) to hold them, and keeps it. */
function burst(): Array<{ index: number; text: string }> {
  const kept: Array<{ index: number; text: string }> = [];
  for (let index = 0; index < 2_000_000; index++) {
    const item = { index, text: `item ${index}` };
    if (index % 100 === 0) kept.push(item);
  }
  return kept.slice(0, 10);
}

it('gives back the heap a burst of allocation grew', async () => {
  await collectGarbage();
  const floor = residentHeap();
  const kept = burst();
  const grown = residentHeap();
  expect(grown - floor).toBeGreaterThan(8 * MiB);
  await collectGarbage();
  expect(residentHeap()).toBeLessThan(floor + (grown - floor) / 2);
  expect(kept).toHaveLength(10);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `collections` has `count` entries or a few seconds passed; the process rests meanwhile. */
async function restUntil(collections: unknown[], count: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (collections.length < count && Date.now() < deadline) await sleep(50);
}

it('collects by itself once the process rests after a burst, and leaves small growth alone', async () => {
  await collectGarbage();
  const collections: Array<{ heapBefore: number; heapAfter: number }> = [];
  const stop = collectGarbageWhenResting({
    intervalMs: 100,
    restingIntervals: 3,
    growthBytes: 8 * MiB,
    maxTimeShare: 1,
    onCollected: (collection) => collections.push(collection),
  });
  try {
    // Growth under the threshold (light traffic looks like this) is not worth a pause.
    const small = Array.from({ length: 10_000 }, (_, index) => ({ index }));
    await sleep(500);
    expect(collections).toHaveLength(0);

    const kept = burst();
    await restUntil(collections, 1);
    expect(collections).toHaveLength(1);
    const [first] = collections;
    expect(first!.heapBefore - first!.heapAfter).toBeGreaterThan(4 * MiB);
    expect(residentHeap()).toBeLessThan(first!.heapBefore);

    // Another burst after the spacing (here: the collection's CPU time) is collected again.
    burst();
    await restUntil(collections, 2);
    expect(collections).toHaveLength(2);
    expect(kept).toHaveLength(10);
    expect(small).toHaveLength(10_000);
  } finally {
    stop();
  }
});

it('keeps these collections to a share of the time: a burst soon after one waits', async () => {
  await collectGarbage();
  const collections: unknown[] = [];
  const stop = collectGarbageWhenResting({
    intervalMs: 100,
    restingIntervals: 3,
    growthBytes: 8 * MiB,
    // After a collection of d ms of CPU, the next waits d / 0.00001 = 100,000 × d: longer than this test.
    maxTimeShare: 0.00001,
    onCollected: (collection) => collections.push(collection),
  });
  try {
    burst();
    await restUntil(collections, 1);
    expect(collections).toHaveLength(1);
    burst();
    await sleep(1000);
    expect(collections).toHaveLength(1);
  } finally {
    stop();
  }
});
