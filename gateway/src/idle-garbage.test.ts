import { expect, it } from 'vitest';
import { collectGarbage, collectGarbageWhenResting, youngGeneration } from './idle-garbage.ts';

/** A burst's worth of short-lived objects: V8 grows the young generation to hold them, and keeps it. */
function burst(): Array<{ index: number; text: string }> {
  const kept: Array<{ index: number; text: string }> = [];
  for (let index = 0; index < 2_000_000; index++) {
    const item = { index, text: `item ${index}` };
    if (index % 100 === 0) kept.push(item);
  }
  return kept.slice(0, 10);
}

it('gives back the young generation a burst of allocation grew', async () => {
  const kept = burst();
  const grown = youngGeneration();
  expect(grown).toBeGreaterThan(4 * 1024 * 1024);
  await collectGarbage();
  expect(youngGeneration()).toBeLessThan(grown / 2);
  expect(kept).toHaveLength(10);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('collects by itself once the process rests after a burst, and not again before the spacing', async () => {
  await collectGarbage();
  const stop = collectGarbageWhenResting({ intervalMs: 100, restingIntervals: 3, minimumSpacingMs: 60_000 });
  try {
    const kept = burst();
    const grown = youngGeneration();
    expect(grown).toBeGreaterThan(4 * 1024 * 1024);
    const deadline = Date.now() + 5000;
    while (youngGeneration() >= grown / 2 && Date.now() < deadline) await sleep(50);
    expect(youngGeneration()).toBeLessThan(grown / 2);
    expect(kept).toHaveLength(10);

    // A second burst within the spacing (light steady traffic looks like this) is left alone.
    burst();
    const again = youngGeneration();
    expect(again).toBeGreaterThan(4 * 1024 * 1024);
    await sleep(1000);
    expect(youngGeneration()).toBeGreaterThan(again / 2);
  } finally {
    stop();
  }
});
