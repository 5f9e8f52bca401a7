import { setTimeout as sleep } from 'node:timers/promises';

/** Polls until `done()` holds; fails after `timeoutMs` so a missing message cannot hang a test. */
export async function waitFor(done: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(5);
  }
}

export { sleep };
