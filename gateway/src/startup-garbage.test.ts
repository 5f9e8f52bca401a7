import v8 from 'node:v8';
import { expect, it } from 'vitest';
import { collectStartupGarbage } from './startup-garbage.ts';

const youngGeneration = () =>
  v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.physical_space_size ?? 0;

it('gives back the young generation a burst of allocation grew', async () => {
  // A start's worth of short-lived objects: V8 grows the young generation to hold them, and keeps it.
  let kept: Array<{ index: number; text: string }> = [];
  for (let index = 0; index < 2_000_000; index++) {
    const item = { index, text: `item ${index}` };
    if (index % 100 === 0) kept.push(item);
  }
  kept = kept.slice(0, 10);
  const grown = youngGeneration();
  expect(grown).toBeGreaterThan(4 * 1024 * 1024);
  await collectStartupGarbage();
  expect(youngGeneration()).toBeLessThan(grown / 2);
  expect(kept).toHaveLength(10);
});
