import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppError } from '../../errors.ts';
import { countPromptTexts, type PromptTexts } from './estimate.ts';
import { OFF_LOOP_LENGTH, PromptCountPool, promptCount } from './prompt-count-pool.ts';

const PROSE = 'The gateway counts tokens, bills them, and answers: "done" after 42 ms. ';
const pools: PromptCountPool[] = [];
const poolOf = (threads: number, queueLimit: number) => {
  const pool = new PromptCountPool(threads, queueLimit);
  pools.push(pool);
  return pool;
};

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

/**
 * Many exactly counted texts of words never seen before (the tokenizer caches the pieces it has met): about
 * a second of tokenizer work, whoever does it. The same texts on every call.
 */
const heavy = (): PromptTexts => {
  let seed = 7;
  const words = () =>
    Array.from({ length: 4000 }, () => {
      seed = (seed * 48271) % 2147483647;
      return seed.toString(36);
    }).join(' ');
  return { texts: Array.from({ length: 15 }, words), tokens: 7 };
};

describe('the prompt-count pool', () => {
  it('counts in a worker thread what the tokenizer counts in place, plus the known tokens', async () => {
    const pool = poolOf(1, 4);
    const prompt: PromptTexts = {
      texts: ['a'.repeat(1_000_000), PROSE.repeat(100), '网关计费'.repeat(3000)],
      tokens: 11,
    };
    expect(await pool.count('gpt-4o', prompt)).toBe(countPromptTexts('gpt-4o', prompt));
    expect(await pool.count('gpt-4', prompt)).toBe(countPromptTexts('gpt-4', prompt));
  });

  it('leaves the event loop free while it counts', async () => {
    const pool = poolOf(1, 4);
    await pool.count('gpt-4o', { texts: ['warm up'], tokens: 0 });
    let last = performance.now();
    let longestGap = 0;
    let ticks = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
      ticks++;
    }, 5);
    const started = performance.now();
    const tokens = await pool.count('gpt-4o', heavy());
    const took = performance.now() - started;
    clearInterval(timer);
    expect(tokens).toBe(countPromptTexts('gpt-4o', heavy()));
    // The timer kept firing: the loop was never held for long (generous for a loaded 2-core machine).
    expect(ticks).toBeGreaterThan(3);
    expect(longestGap).toBeLessThan(Math.max(100, took / 3));
  });

  it('refuses with token_count_busy when every thread is busy and the queue is full', async () => {
    const pool = poolOf(1, 1);
    const running = pool.count('gpt-4o', heavy());
    const queued = pool.count('gpt-4o', heavy());
    const refused = await pool.count('gpt-4o', heavy()).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('token_count_busy');
    expect((refused as AppError).status).toBe(503);
    expect(pool.waiting).toBe(1);
    // The accepted ones are still counted, and then the pool takes work again.
    const expected = countPromptTexts('gpt-4o', heavy());
    expect(await running).toBe(expected);
    expect(await queued).toBe(expected);
    expect(await pool.count('gpt-4o', { texts: [PROSE], tokens: 0 })).toBe(
      countPromptTexts('gpt-4o', { texts: [PROSE], tokens: 0 }),
    );
  });

  it('counts in place once closed, including what was waiting', async () => {
    const pool = poolOf(1, 4);
    const running = pool.count('gpt-4o', heavy());
    const waiting = pool.count('gpt-4o', { texts: [PROSE], tokens: 2 });
    await pool.close();
    const expected = countPromptTexts('gpt-4o', heavy());
    expect(await running).toBe(expected);
    expect(await waiting).toBe(countPromptTexts('gpt-4o', { texts: [PROSE], tokens: 2 }));
    expect(await pool.count('gpt-4o', { texts: ['a b c'], tokens: 0 })).toBe(3);
  });
});

describe('idle threads', () => {
  it('stop after the idle time, and a later prompt starts one again', async () => {
    const pool = new PromptCountPool(1, 4, 50);
    pools.push(pool);
    const prompt: PromptTexts = { texts: [PROSE.repeat(100)], tokens: 0 };
    expect(await pool.count('gpt-4o', prompt)).toBe(countPromptTexts('gpt-4o', prompt));
    expect(pool.threads).toBe(1);
    await vi.waitFor(() => expect(pool.threads).toBe(0), { timeout: 10_000, interval: 20 });
    expect(await pool.count('gpt-4o', prompt)).toBe(countPromptTexts('gpt-4o', prompt));
    expect(pool.threads).toBe(1);
  });
});

describe('promptCount', () => {
  it('counts a short prompt on first call, a long one at once', async () => {
    const short: PromptTexts = { texts: ['x'.repeat(OFF_LOOP_LENGTH - 1)], tokens: 1 };
    const long: PromptTexts = { texts: ['x'.repeat(OFF_LOOP_LENGTH)], tokens: 1 };
    const later = await promptCount('gpt-4o', short);
    expect(typeof later).toBe('function');
    expect((later as () => number)()).toBe(countPromptTexts('gpt-4o', short));
    expect(await promptCount('gpt-4o', long)).toBe(countPromptTexts('gpt-4o', long));
  });
});
