import { describe, expect, it } from 'vitest';
import { Mutex } from './mutex.ts';

describe('Mutex', () => {
  it('runs holders one at a time, first come first served', async () => {
    const mutex = new Mutex();
    const order: string[] = [];
    let inside = 0;
    const job = (name: string) =>
      mutex.run(async () => {
        inside++;
        expect(inside).toBe(1);
        order.push(name);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inside--;
      });
    await Promise.all(['a', 'b', 'c', 'd'].map(job));
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    expect(mutex.locked).toBe(false);
  });

  it('hands the lock to a waiter on release, so that tryAcquire cannot cut in', async () => {
    const mutex = new Mutex();
    expect(mutex.tryAcquire()).toBe(true);
    expect(mutex.tryAcquire()).toBe(false);
    const waiter = mutex.acquire();
    mutex.release();
    expect(mutex.tryAcquire()).toBe(false);
    await waiter;
    mutex.release();
    expect(mutex.locked).toBe(false);
  });

  it('releases the lock when the holder throws', async () => {
    const mutex = new Mutex();
    await expect(mutex.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(mutex.locked).toBe(false);
  });
});
