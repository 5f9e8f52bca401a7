import { setTimeout as sleep } from 'node:timers/promises';

/** Polls until `done()` holds; fails after `timeoutMs` so a missing message cannot hang a test. */
export async function waitFor(done: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(5);
  }
}

/** Reads until `accept` holds or `withinMs` passes, and returns the last value read for the assertion. */
export async function eventually<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  withinMs: number,
): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() > deadline) return value;
    await sleep(20);
  }
}

export { sleep };
