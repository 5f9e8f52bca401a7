import { describe, expect, it } from 'vitest';
import { TurnBatcher } from './turn-batch.ts';

describe('TurnBatcher', () => {
  it('joins the calls of one turn per equal shared arguments, and answers each its own result in order', async () => {
    const sent: Array<{ shared: readonly (string | number)[]; members: string[] }> = [];
    const batcher = new TurnBatcher<string>(async (shared, members) => {
      sent.push({ shared, members });
      return members.map((member) => `${shared.join('/')}:${member}`);
    });
    // Equal arguments in fresh arrays and strings, interleaved with others: the batches follow the
    // arguments' values, not the order of the calls or the identity of the arrays.
    const key = (user: number) => `limit:${user}`;
    const results = await Promise.all([
      batcher.call([key(1), 60_000], 'a'),
      batcher.call([key(1), 60_000], 'b'),
      batcher.call([key(2), 60_000], 'c'),
      batcher.call([key(1), 60_000], 'd'),
      batcher.call([key(1), 1_000], 'e'),
      batcher.call([key(2), 60_000], 'f'),
    ]);
    expect(results).toEqual([
      'limit:1/60000:a',
      'limit:1/60000:b',
      'limit:2/60000:c',
      'limit:1/60000:d',
      'limit:1/1000:e',
      'limit:2/60000:f',
    ]);
    expect(sent.map((batch) => batch.members)).toEqual([['a', 'b', 'd'], ['c', 'f'], ['e']]);
    // A later turn starts new batches.
    expect(await batcher.call([key(1), 60_000], 'g')).toBe('limit:1/60000:g');
    expect(sent.at(-1)?.members).toEqual(['g']);
  });

  it('sends a full batch at once and goes on in a new one', async () => {
    const sizes: number[] = [];
    const batcher = new TurnBatcher<number>(async (_shared, members) => {
      sizes.push(members.length);
      return members.map(Number);
    });
    const calls = Array.from({ length: 300 }, (_, i) => batcher.call(['k', 1], String(i)));
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(sizes).toEqual([256, 44]);
  });
});
