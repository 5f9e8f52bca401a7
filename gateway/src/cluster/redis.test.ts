import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sleep, waitFor } from '../../../tests/support/wait.ts';
import { createClusterState } from './index.ts';
import { createRedisClusterState } from './redis.ts';

const redisUrl = inject('redisUrl');
const namespace = `tollgate-test-${randomUUID()}`;

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('Redis cluster state at startup', () => {
  it('rejects at once, naming the server but not the password, when nothing answers', async () => {
    const port = await closedPort();
    const started = Date.now();
    const failure = createClusterState({ redisUrl: `redis://:hunter2@127.0.0.1:${port}`, namespace });
    await expect(failure).rejects.toThrow(`Redis at redis://:***@127.0.0.1:${port} does not answer: ECONNREFUSED`);
    await expect(failure).rejects.not.toThrow('hunter2');
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

describe.skipIf(redisUrl === undefined)('Redis cluster state: what only it promises', () => {
  let raw: Redis;
  beforeAll(() => {
    raw = new Redis(redisUrl!);
  });
  afterAll(async () => {
    const keys = await raw.keys(`${namespace}:*`);
    if (keys.length > 0) await raw.del(...keys);
    await raw.quit();
  });

  it('prefixes every key with the namespace and lets idle keys expire', async () => {
    const state = await createRedisClusterState({ url: redisUrl!, namespace });
    await state.counters.take('rpm:1', 300, 5);
    const counter = `${namespace}:counter:rpm:1`;
    expect(await raw.zcard(counter)).toBe(1);
    const counterTtl = await raw.pttl(counter);
    expect(counterTtl).toBeGreaterThan(0);
    expect(counterTtl).toBeLessThanOrEqual(300);

    const lease = await state.locks.acquire('job', 2000);
    expect(lease).not.toBeNull();
    const lock = `${namespace}:lock:job`;
    const lockTtl = await raw.pttl(lock);
    expect(lockTtl).toBeGreaterThan(1000);
    expect(lockTtl).toBeLessThanOrEqual(2000);
    await lease!.release();
    expect(await raw.exists(lock)).toBe(0);

    await sleep(400);
    expect(await raw.exists(counter)).toBe(0);
    await state.close();
  });

  it('stores values as plain strings under <namespace>:kv: with a Redis expiry', async () => {
    const state = await createRedisClusterState({ url: redisUrl!, namespace });
    await state.kv.set('verify:a@b.c', '123456', 2000);
    const key = `${namespace}:kv:verify:a@b.c`;
    expect(await raw.get(key)).toBe('123456');
    const ttl = await raw.pttl(key);
    expect(ttl).toBeGreaterThan(1000);
    expect(ttl).toBeLessThanOrEqual(2000);
    expect(await state.kv.setIfAbsent('verify:a@b.c', 'other', 2000)).toBe(false);
    expect(await state.kv.take('verify:a@b.c')).toBe('123456');
    expect(await raw.exists(key)).toBe(0);
    // Only a write from outside the store can leave a key without expiry.
    await raw.set(`${namespace}:kv:forever`, 'v');
    expect(await state.kv.ttl('forever')).toBe(Number.POSITIVE_INFINITY);
    await state.close();
  });

  it('stamps hits with the Redis clock, not the pod clock', async () => {
    const state = await createRedisClusterState({ url: redisUrl!, namespace });
    await state.counters.add('clock', 10_000);
    const [, score] = await raw.zrange(`${namespace}:counter:clock`, '0', '-1', 'WITHSCORES');
    const [seconds, micros] = await raw.time();
    const redisNow = Number(seconds) * 1e6 + Number(micros);
    expect(redisNow - Number(score)).toBeGreaterThanOrEqual(0);
    expect(redisNow - Number(score)).toBeLessThan(1e6);
    await state.close();
  });

  it('sends the gated takes and the adds made in one turn as one script call each', async () => {
    const state = await createRedisClusterState({ url: redisUrl!, namespace });
    await state.counters.add('warm', 10_000);
    await state.counters.takeGated('warm', 10_000, 100, { key: 'warm-gate', limit: 100 });
    // Every command naming this test's keys as a client sent it (not those the scripts run).
    const monitor = await raw.monitor();
    const seen: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source !== 'lua' && args.some((arg) => arg.startsWith(`${namespace}:counter:batch`))) seen.push(args);
    });
    const gate = { key: 'batch-gate', limit: 100 };
    const taken = await Promise.all(
      Array.from({ length: 20 }, () => state.counters.takeGated('batch', 10_000, 100, gate)),
    );
    const added = await Promise.all(Array.from({ length: 20 }, () => state.counters.add('batch-gate', 10_000)));
    // Read after the scripts answered, so Redis saw it after them: the monitor is complete once it shows.
    expect(await raw.zcard(`${namespace}:counter:batch`)).toBe(20);
    await waitFor(() => seen.some((args) => args[0]?.toLowerCase() === 'zcard'));
    monitor.disconnect();
    expect(seen.map((args) => args[0]?.toLowerCase())).toEqual(['evalsha', 'evalsha', 'zcard']);
    expect(taken.every((r) => r.allowed)).toBe(true);
    expect(added).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    await state.close();
  });

  it('prefixes every channel with the namespace', async () => {
    const state = await createRedisClusterState({ url: redisUrl!, namespace });
    const listener = raw.duplicate();
    const heardRaw: string[] = [];
    listener.on('message', (channel: string, message: string) => heardRaw.push(`${channel}=${message}`));
    await listener.subscribe(`${namespace}:news`);
    const heardBus: string[] = [];
    await state.bus.subscribe('news', (m) => heardBus.push(m));

    await state.bus.publish('news', 'from-bus');
    await raw.publish(`${namespace}:news`, 'from-raw');
    await raw.publish('news', 'unprefixed');
    await raw.publish(`${namespace}:news`, 'end');
    await waitFor(() => heardBus.includes('end') && heardRaw.length === 3);
    expect(heardBus).toEqual(['from-bus', 'from-raw', 'end']);
    expect(heardRaw).toEqual([`${namespace}:news=from-bus`, `${namespace}:news=from-raw`, `${namespace}:news=end`]);
    await listener.quit();
    await state.close();
  });

  it('close() lets the process exit, with a background job and subscriptions in place', async () => {
    const index = new URL('./index.ts', import.meta.url).href;
    const script = `
      import { createClusterState, runOnOnePod } from ${JSON.stringify(index)};
      const state = await createClusterState({ redisUrl: process.env.REDIS_URL, namespace: process.env.NAMESPACE });
      await state.bus.subscribe('x', () => {});
      await state.counters.take('k', 1000, 1);
      let runs = 0;
      const job = runOnOnePod(state, { name: 'exit-test', intervalMs: 20, ttlMs: 500 }, async () => { runs++; });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await job.stop();
      await state.close();
      console.log('closed after', runs > 0 ? 'some runs' : 'no runs');
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, REDIS_URL: redisUrl, NAMESPACE: namespace },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const timeout = sleep(8000).then(() => 'still running' as const);
    const outcome = await Promise.race([exited, timeout]);
    if (outcome === 'still running') child.kill();
    // stderr is part of the object so that a failure shows it.
    expect({ outcome, stdout: stdout.trim(), stderr }).toMatchObject({ outcome: 0, stdout: 'closed after some runs' });
  });

  it('ping rejects once closed', async () => {
    const state = await createRedisClusterState({ url: redisUrl!, namespace });
    await expect(state.ping()).resolves.toBeUndefined();
    await state.close();
    await expect(state.ping()).rejects.toThrow();
  });
});
