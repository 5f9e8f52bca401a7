import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { endpointOf, startTcpProxy } from '../../../tests/support/tcp-proxy.ts';
import { eventually } from '../../../tests/support/wait.ts';
import { StoreUnavailableError } from '../store/unavailable.ts';
import { createRedisClusterState } from './redis.ts';

const redisUrl = inject('redisUrl');

describe.skipIf(!redisUrl)('Redis cluster state while Redis is unreachable', () => {
  it('rate limits fail open at once, bus messages are dropped, short-lived values answer 503, and both work again once it is back', async () => {
    const proxy = await startTcpProxy(endpointOf(redisUrl!, 6379));
    const errors: Error[] = [];
    const state = await createRedisClusterState({
      url: proxy.urlFor(redisUrl!),
      namespace: `tollgate-test-${randomUUID()}`,
      onError: (err) => errors.push(err),
    });
    try {
      expect(await state.counters.take('k', 60_000, 1)).toMatchObject({ allowed: true, count: 1 });
      expect(await state.counters.take('k', 60_000, 1)).toMatchObject({ allowed: false });
      const received: string[] = [];
      await state.bus.subscribe('ch', (message) => received.push(message));

      proxy.cut();
      const started = performance.now();
      expect(await state.counters.take('k', 60_000, 1)).toEqual({ allowed: true, count: 0 });
      expect(await state.budgets.admit([{ key: 'b', limit: 1, cost: 5 }], 60_000)).toMatchObject({ admitted: true });
      await state.bus.publish('ch', 'lost');
      // No offline queue: nothing waits for a reconnect or a command timeout.
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(errors.length).toBeGreaterThanOrEqual(3);
      // Short-lived values cannot be served: a 503 for the /api caller, at once.
      await expect(state.kv.get('code')).rejects.toBeInstanceOf(StoreUnavailableError);
      // Argument mistakes are not outages.
      await expect(state.counters.take('k', 0, 1)).rejects.toThrow(RangeError);

      proxy.restore();
      const back = await eventually(
        () => state.counters.take('k', 60_000, 1),
        (result) => result.allowed === false,
        10_000,
      );
      expect(back.allowed).toBe(false);
      await eventually(
        async () => {
          await state.bus.publish('ch', 'after');
          return received;
        },
        (messages) => messages.includes('after'),
        10_000,
      );
      expect(received).not.toContain('lost');
    } finally {
      await state.close();
      await proxy.close();
    }
  });
});
