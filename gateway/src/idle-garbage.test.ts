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

it('collects by itself once the process rests after a burst', async () => {
  await collectGarbage();
  const stop = collectGarbageWhenResting(100);
  try {
    const kept = burst();
    const grown = youngGeneration();
    expect(grown).toBeGreaterThan(4 * 1024 * 1024);
    const deadline = Date.now() + 5000;
    while (youngGeneration() >= grown / 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(youngGeneration()).toBeLessThan(grown / 2);
    expect(kept).toHaveLength(10);
  } finally {
    stop();
  }
});
