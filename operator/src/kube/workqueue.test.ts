import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { jitter, WorkQueue } from './workqueue.ts';

describe('WorkQueue', () => {
  it('holds a key once however often it is added, in order of first add', async () => {
    const queue = new WorkQueue();
    for (const key of ['a', 'b', 'a', 'c', 'b']) queue.add(key);
    expect(queue.depth).toBe(3);
    expect([await queue.get(), await queue.get(), await queue.get()]).toEqual(['a', 'b', 'c']);
  });

  it('never hands a key in process to a second worker, and re-queues it once done', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    const key = await queue.get();
    queue.add('a');
    queue.add('a');
    expect(queue.depth).toBe(0);
    queue.done(key!);
    expect(queue.depth).toBe(1);
    expect(await queue.get()).toBe('a');
    queue.done('a');
    expect(queue.depth).toBe(0);
  });

  it('wakes a waiting worker', async () => {
    const queue = new WorkQueue();
    const waiting = queue.get();
    queue.add('x');
    expect(await waiting).toBe('x');
  });

  it('backs off exponentially per key and forgets on success', () => {
    const queue = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 100 });
    expect([1, 2, 3, 4, 5].map(() => queue.addRateLimited('a'))).toEqual([10, 20, 40, 80, 100]);
    expect(queue.addRateLimited('b')).toBe(10);
    queue.forget('a');
    expect(queue.addRateLimited('a')).toBe(10);
    queue.shutdown();
  });

  it('adds scheduled keys when due; the earliest schedule wins', async () => {
    const queue = new WorkQueue();
    queue.addAfter('a', 40);
    queue.addAfter('a', 10_000);
    queue.addAfter('b', 10_000);
    queue.addAfter('b', 20);
    await sleep(80);
    expect(queue.depth).toBe(2);
    queue.shutdown();
  });

  it('answers undefined to waiting workers after shutdown and ignores later adds', async () => {
    const queue = new WorkQueue();
    const waiting = queue.get();
    queue.shutdown();
    expect(await waiting).toBeUndefined();
    queue.add('a');
    expect(await queue.get()).toBeUndefined();
  });

  it('jitters a delay within ±10 %', () => {
    expect(jitter(1000, 0.1, () => 0)).toBe(900);
    expect(jitter(1000, 0.1, () => 0.5)).toBe(1000);
    expect(jitter(1000, 0.1, () => 1)).toBe(1100);
    const spread = new Set(Array.from({ length: 50 }, () => jitter(300_000)));
    expect(spread.size).toBeGreaterThan(1);
    for (const delay of spread) expect(delay >= 270_000 && delay <= 330_000).toBe(true);
  });
});
