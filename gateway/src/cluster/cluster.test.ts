import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { sleep, waitFor } from '../../../tests/support/wait.ts';
import { type ClusterState, createClusterState, runOnOnePod } from './index.ts';

// One behavioural suite, run against the in-process state and against a real Redis: two
// ClusterState instances on one namespace stand for two gateway pods.
const redisUrl = inject('redisUrl');
const fileNamespace = `tollgate-test-${randomUUID()}`;

describe('in-process cluster state', () => behavesAsClusterState(undefined));
describe.skipIf(redisUrl === undefined)('Redis cluster state', () => behavesAsClusterState(redisUrl));

function behavesAsClusterState(url: string | undefined) {
  const opened: ClusterState[] = [];
  let lastNamespace = 0;

  /** `count` pods sharing a namespace of their own, closed after the test. */
  async function pods(count = 2): Promise<ClusterState[]> {
    const namespace = `${fileNamespace}:${url ? 'redis' : 'memory'}:${++lastNamespace}`;
    const states = await Promise.all(
      Array.from({ length: count }, () => createClusterState({ redisUrl: url, namespace })),
    );
    opened.push(...states);
    return states;
  }

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((state) => state.close()));
  });

  it('is the expected kind and answers ping', async () => {
    const [a] = await pods(1);
    expect(a!.kind).toBe(url ? 'redis' : 'memory');
    await expect(a!.ping()).resolves.toBeUndefined();
  });

  describe('bus', () => {
    it('delivers to every subscriber on every pod, never inside publish', async () => {
      const [a, b] = await pods();
      const got: string[] = [];
      await a!.bus.subscribe('news', (m) => got.push(`a1:${m}`));
      await a!.bus.subscribe('news', (m) => got.push(`a2:${m}`));
      await b!.bus.subscribe('news', (m) => got.push(`b:${m}`));
      await b!.bus.subscribe('sports', (m) => got.push(`sports:${m}`));
      const sent = a!.bus.publish('news', 'hello');
      expect(got).toEqual([]);
      await sent;
      await waitFor(() => got.length >= 3);
      await b!.bus.publish('sports', 'goal');
      await waitFor(() => got.length >= 4);
      expect(got.sort()).toEqual(['a1:hello', 'a2:hello', 'b:hello', 'sports:goal']);
    });

    it('stops delivering to a handler once it unsubscribes, and only to that one', async () => {
      const [a, b] = await pods();
      const gone: string[] = [];
      const kept: string[] = [];
      const off = await b!.bus.subscribe('ch', (m) => gone.push(m));
      await b!.bus.subscribe('ch', (m) => kept.push(m));
      await a!.bus.publish('ch', 'one');
      await waitFor(() => gone.length === 1 && kept.length === 1);
      await off();
      await off();
      await a!.bus.publish('ch', 'two');
      await waitFor(() => kept.length === 2);
      expect(gone).toEqual(['one']);
      expect(kept).toEqual(['one', 'two']);
    });

    it('can subscribe again after the last subscriber left a channel', async () => {
      const [a, b] = await pods();
      const got: string[] = [];
      const off = await b!.bus.subscribe('ch', (m) => got.push(`first:${m}`));
      await off();
      await b!.bus.subscribe('ch', (m) => got.push(`second:${m}`));
      await a!.bus.publish('ch', 'x');
      await waitFor(() => got.length === 1);
      await a!.bus.publish('ch', 'y');
      await waitFor(() => got.length === 2);
      expect(got).toEqual(['second:x', 'second:y']);
    });

    it('keeps delivering to other handlers when one throws, and reports it', async () => {
      const [a] = await pods(1);
      const warnings: string[] = [];
      const onWarning = (w: Error) => warnings.push(w.message);
      process.on('warning', onWarning);
      try {
        const got: string[] = [];
        await a!.bus.subscribe('ch', () => {
          throw new Error('boom');
        });
        await a!.bus.subscribe('ch', (m) => got.push(m));
        await a!.bus.publish('ch', 'x');
        await waitFor(() => got.length === 1 && warnings.length === 1);
        expect(warnings).toEqual(['bus handler on ch failed: boom']);
      } finally {
        process.off('warning', onWarning);
      }
    });
  });

  it('isolates namespaces: bus, counters and locks', async () => {
    const [a] = await pods(1);
    const [c] = await pods(1);
    const heard: string[] = [];
    await a!.bus.subscribe('ch', (m) => heard.push(`a:${m}`));
    await c!.bus.subscribe('ch', (m) => heard.push(`c:${m}`));
    await a!.bus.publish('ch', 'x');
    await c!.bus.publish('ch', 'y');
    // Sent last on each side: once they arrive, any stray message would have arrived too.
    await a!.bus.publish('ch', 'end');
    await c!.bus.publish('ch', 'end');
    await waitFor(() => heard.includes('a:end') && heard.includes('c:end'));
    expect(heard.sort()).toEqual(['a:end', 'a:x', 'c:end', 'c:y']);

    expect(await a!.counters.take('k', 60_000, 1)).toEqual({ allowed: true, count: 1 });
    expect(await c!.counters.count('k', 60_000)).toBe(0);
    expect(await c!.counters.take('k', 60_000, 1)).toEqual({ allowed: true, count: 1 });

    const la = await a!.locks.acquire('l', 5000);
    const lc = await c!.locks.acquire('l', 5000);
    expect(la).not.toBeNull();
    expect(lc).not.toBeNull();
    await la!.release();
    await lc!.release();
  });

  describe('counters', () => {
    it('take refuses at the limit; add and count see every pod', async () => {
      const [a, b] = await pods();
      expect(await a!.counters.take('k', 10_000, 3)).toEqual({ allowed: true, count: 1 });
      expect(await b!.counters.take('k', 10_000, 3)).toEqual({ allowed: true, count: 2 });
      expect(await a!.counters.take('k', 10_000, 3)).toEqual({ allowed: true, count: 3 });
      expect(await b!.counters.take('k', 10_000, 3)).toEqual({ allowed: false, count: 3 });
      expect(await a!.counters.count('k', 10_000)).toBe(3);
      expect(await b!.counters.add('k', 10_000)).toBe(4);
      expect(await a!.counters.count('k', 10_000)).toBe(4);
      expect(await a!.counters.count('other', 10_000)).toBe(0);
      expect(await a!.counters.take('none-allowed', 10_000, 0)).toEqual({ allowed: false, count: 0 });
    });

    it('takeGated takes from one counter unless the gate counter is full, in one step across pods', async () => {
      const [a, b] = await pods();
      const gate = { key: 'gate', limit: 2 };
      expect(await a!.counters.takeGated('total', 10_000, 3, gate)).toEqual({ allowed: true });
      expect(await b!.counters.takeGated('total', 10_000, 3, gate)).toEqual({ allowed: true });
      await a!.counters.add('gate', 10_000);
      expect(await b!.counters.takeGated('total', 10_000, 3, gate)).toEqual({ allowed: true });
      expect(await a!.counters.takeGated('total', 10_000, 3, gate)).toEqual({ allowed: false, refusedBy: 'limit' });
      await b!.counters.add('gate', 10_000);
      // The gate refuses first, and a refusal records nothing on either counter.
      expect(await a!.counters.takeGated('total', 10_000, 3, gate)).toEqual({ allowed: false, refusedBy: 'gate' });
      expect(await a!.counters.takeGated('fresh', 10_000, 3, gate)).toEqual({ allowed: false, refusedBy: 'gate' });
      expect(await b!.counters.count('total', 10_000)).toBe(3);
      expect(await b!.counters.count('fresh', 10_000)).toBe(0);
      expect(await b!.counters.count('gate', 10_000)).toBe(2);
      await expect(a!.counters.takeGated('total', 10_000, 3, { key: 'gate', limit: -1 })).rejects.toThrow(RangeError);
    });

    it('forgets hits as the window slides past them', async () => {
      const [a, b] = await pods();
      await a!.counters.add('k', 400);
      await sleep(200);
      await b!.counters.add('k', 400);
      expect(await a!.counters.count('k', 400)).toBe(2);
      await sleep(250); // the first hit is now older than the window, the second is not
      expect(await a!.counters.count('k', 400)).toBe(1);
      expect(await b!.counters.take('k', 400, 2)).toEqual({ allowed: true, count: 2 });
      expect(await a!.counters.take('k', 400, 2)).toEqual({ allowed: false, count: 2 });
      await sleep(450);
      expect(await b!.counters.count('k', 400)).toBe(0);
      expect(await a!.counters.take('k', 400, 1)).toEqual({ allowed: true, count: 1 });
    });

    it('allows exactly the limit under 50 concurrent takes from two pods', async () => {
      const [a, b] = await pods();
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => (i % 2 ? a! : b!).counters.take('burst', 10_000, 10)),
      );
      const allowed = results.filter((r) => r.allowed);
      expect(allowed).toHaveLength(10);
      expect(allowed.map((r) => r.count).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(results.filter((r) => !r.allowed).every((r) => r.count === 10)).toBe(true);
      expect(await a!.counters.count('burst', 10_000)).toBe(10);
    });

    it('answers concurrent gated takes and adds each as if they had run one after another', async () => {
      const [a, b] = await pods();
      const gate = { key: 'successes', limit: 3 };
      const takes = await Promise.all(
        Array.from({ length: 12 }, (_, i) => (i % 3 ? a! : b!).counters.takeGated('requests', 10_000, 5, gate)),
      );
      expect(takes.filter((r) => r.allowed)).toHaveLength(5);
      expect(takes.filter((r) => !r.allowed).every((r) => r.refusedBy === 'limit')).toBe(true);
      const counts = await Promise.all(Array.from({ length: 6 }, () => a!.counters.add('successes', 10_000)));
      expect(counts).toEqual([1, 2, 3, 4, 5, 6]);
      const gated = await Promise.all([
        b!.counters.takeGated('fresh', 10_000, 5, gate),
        a!.counters.takeGated('fresh', 10_000, 5, gate),
      ]);
      expect(gated).toEqual([
        { allowed: false, refusedBy: 'gate' },
        { allowed: false, refusedBy: 'gate' },
      ]);
      expect(await b!.counters.count('requests', 10_000)).toBe(5);
      expect(await b!.counters.count('fresh', 10_000)).toBe(0);
    });

    it('rejects windows and limits that would silently disable a limit', async () => {
      const [a] = await pods(1);
      await expect(a!.counters.take('k', 0, 1)).rejects.toThrow(RangeError);
      await expect(a!.counters.add('k', Number.NaN)).rejects.toThrow(RangeError);
      await expect(a!.counters.take('k', 1000, -1)).rejects.toThrow(RangeError);
      await expect(a!.locks.acquire('l', -5)).rejects.toThrow(RangeError);
      expect(await a!.counters.count('k', 1000)).toBe(0);
    });
  });

  describe('locks', () => {
    it('gives a lease to one pod only, until its holder releases it', async () => {
      const [a, b] = await pods();
      const [la, lb] = await Promise.all([a!.locks.acquire('job', 5000), b!.locks.acquire('job', 5000)]);
      expect([la, lb].filter((l) => l !== null)).toHaveLength(1);
      const holder = (la ?? lb)!;
      const other = la ? b! : a!;
      expect(holder.name).toBe('job');
      expect(await holder.renew(5000)).toBe(true);
      expect(await other.locks.acquire('job', 5000)).toBeNull();
      await holder.release();
      const next = await other.locks.acquire('job', 5000);
      expect(next).not.toBeNull();
      expect(await holder.renew(5000)).toBe(false);
      await next!.release();
    });

    it('hands an expired lease to another pod; the old holder can neither renew nor release it', async () => {
      const [a, b] = await pods();
      const old = await a!.locks.acquire('l', 200);
      expect(old).not.toBeNull();
      await sleep(120);
      expect(await old!.renew(300)).toBe(true);
      await sleep(150); // past the first ttl, inside the renewed one
      expect(await b!.locks.acquire('l', 5000)).toBeNull();
      await sleep(250);
      const taken = await b!.locks.acquire('l', 5000);
      expect(taken).not.toBeNull();
      expect(await old!.renew(5000)).toBe(false);
      await old!.release();
      expect(await a!.locks.acquire('l', 5000)).toBeNull();
      expect(await taken!.renew(5000)).toBe(true);
      await taken!.release();
    });
  });

  describe('key-value store', () => {
    it('stores a value every pod reads, and set replaces it', async () => {
      const [a, b] = await pods();
      expect(await b!.kv.get('code')).toBeUndefined();
      await a!.kv.set('code', 'first', 10_000);
      expect(await b!.kv.get('code')).toBe('first');
      await b!.kv.set('code', 'second', 10_000);
      expect(await a!.kv.get('code')).toBe('second');
      expect(await a!.kv.get('other')).toBeUndefined();
      // An empty string is a value, not an absence.
      await a!.kv.set('empty', '', 10_000);
      expect(await b!.kv.get('empty')).toBe('');
      expect(await b!.kv.take('empty')).toBe('');
      expect(await a!.kv.get('empty')).toBeUndefined();
      const odd = `ünï:cødé 🔑 ${'x'.repeat(10_000)}`;
      await a!.kv.set('oauth:state/with spaces', odd, 10_000);
      expect(await b!.kv.get('oauth:state/with spaces')).toBe(odd);
    });

    it('forgets a value on every pod once its ttl has passed', async () => {
      const [a, b] = await pods();
      await a!.kv.set('short', 'x', 150);
      await a!.kv.set('long', 'y', 10_000);
      expect(await b!.kv.get('short')).toBe('x');
      await sleep(250);
      expect(await b!.kv.get('short')).toBeUndefined();
      expect(await a!.kv.get('short')).toBeUndefined();
      expect(await a!.kv.take('short')).toBeUndefined();
      expect(await b!.kv.ttl('short')).toBeUndefined();
      expect(await b!.kv.get('long')).toBe('y');
    });

    it('set replaces the ttl along with the value', async () => {
      const [a, b] = await pods();
      await a!.kv.set('lengthened', 'old', 150);
      await b!.kv.set('lengthened', 'new', 10_000);
      await a!.kv.set('shortened', 'old', 10_000);
      await b!.kv.set('shortened', 'new', 150);
      await sleep(250);
      expect(await a!.kv.get('lengthened')).toBe('new');
      expect(await a!.kv.get('shortened')).toBeUndefined();
    });

    it('setIfAbsent stores only while the key is absent, and again once it expired', async () => {
      const [a, b] = await pods();
      expect(await a!.kv.setIfAbsent('resend', 'a', 150)).toBe(true);
      expect(await b!.kv.setIfAbsent('resend', 'b', 10_000)).toBe(false);
      // The refused call changed neither the value nor the ttl.
      expect(await b!.kv.get('resend')).toBe('a');
      expect(await b!.kv.ttl('resend')).toBeLessThanOrEqual(150);
      await sleep(250);
      expect(await b!.kv.setIfAbsent('resend', 'b', 10_000)).toBe(true);
      expect(await a!.kv.get('resend')).toBe('b');

      await a!.kv.set('plain', 'v', 10_000);
      expect(await b!.kv.setIfAbsent('plain', 'w', 10_000)).toBe(false);
      expect(await b!.kv.get('plain')).toBe('v');
    });

    it('setIfAbsent lets exactly one of 20 racing calls from two pods store', async () => {
      const [a, b] = await pods();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? a! : b!).kv.setIfAbsent('once', `v${i}`, 10_000)),
      );
      const winners = results.flatMap((stored, i) => (stored ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(await a!.kv.get('once')).toBe(`v${winners[0]}`);
    });

    it('take hands a value to exactly one of 20 racing takes from two pods, and then it is gone', async () => {
      const [a, b] = await pods();
      await a!.kv.set('code', '123456', 10_000);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a! : b!).kv.take('code')));
      expect(results.filter((r) => r !== undefined)).toEqual(['123456']);
      expect(await a!.kv.get('code')).toBeUndefined();
      expect(await b!.kv.ttl('code')).toBeUndefined();
      expect(await b!.kv.take('code')).toBeUndefined();
      expect(await a!.kv.take('never-set')).toBeUndefined();
      await b!.kv.set('code', '654321', 10_000);
      expect(await a!.kv.take('code')).toBe('654321');
      expect(await b!.kv.take('code')).toBeUndefined();
    });

    it('delete removes a value for every pod; deleting an absent key is fine', async () => {
      const [a, b] = await pods();
      await a!.kv.set('k', 'v', 10_000);
      await a!.kv.set('keep', 'v', 10_000);
      await b!.kv.delete('k');
      expect(await a!.kv.get('k')).toBeUndefined();
      expect(await a!.kv.ttl('k')).toBeUndefined();
      expect(await a!.kv.get('keep')).toBe('v');
      await expect(b!.kv.delete('k')).resolves.toBeUndefined();
      await expect(b!.kv.delete('never-set')).resolves.toBeUndefined();
      expect(await a!.kv.setIfAbsent('k', 'again', 10_000)).toBe(true);
      expect(await b!.kv.get('k')).toBe('again');
    });

    it('ttl counts down whole milliseconds, and is undefined for an absent key', async () => {
      const [a, b] = await pods();
      expect(await a!.kv.ttl('k')).toBeUndefined();
      await a!.kv.set('k', 'v', 10_000);
      const first = await b!.kv.ttl('k');
      expect(first).toBeGreaterThan(9000);
      expect(first).toBeLessThanOrEqual(10_000);
      expect(Number.isInteger(first)).toBe(true);
      await sleep(150);
      const later = await b!.kv.ttl('k');
      expect(first! - later!).toBeGreaterThanOrEqual(100);
      expect(later).toBeGreaterThan(0);
      await b!.kv.set('k', 'v', 60_000);
      expect(await a!.kv.ttl('k')).toBeGreaterThan(50_000);
      await a!.kv.set('fraction', 'v', 1000.5);
      const rounded = await b!.kv.ttl('fraction');
      expect(Number.isInteger(rounded)).toBe(true);
      expect(rounded).toBeLessThanOrEqual(1001);
    });

    it('isolates namespaces, and keeps its keys apart from counters and locks of the same name', async () => {
      const [a] = await pods(1);
      const [c] = await pods(1);
      await a!.kv.set('k', 'a', 10_000);
      expect(await c!.kv.get('k')).toBeUndefined();
      expect(await c!.kv.ttl('k')).toBeUndefined();
      expect(await c!.kv.take('k')).toBeUndefined();
      expect(await c!.kv.setIfAbsent('k', 'c', 10_000)).toBe(true);
      expect(await c!.kv.get('k')).toBe('c');
      await c!.kv.delete('k');
      expect(await a!.kv.get('k')).toBe('a');

      await a!.counters.add('shared', 10_000);
      const lease = await a!.locks.acquire('held', 10_000);
      expect(await a!.kv.get('shared')).toBeUndefined();
      expect(await a!.kv.setIfAbsent('held', 'v', 10_000)).toBe(true);
      await a!.kv.set('shared', 'v', 10_000);
      expect(await a!.counters.count('shared', 10_000)).toBe(1);
      expect(await lease!.renew(10_000)).toBe(true);
      await lease!.release();
      expect(await a!.kv.get('held')).toBe('v');
    });

    it('rejects a ttl that is not a positive, finite number of milliseconds, storing nothing', async () => {
      const [a] = await pods(1);
      for (const ttl of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(a!.kv.set('k', 'v', ttl)).rejects.toThrow(RangeError);
        await expect(a!.kv.setIfAbsent('k', 'v', ttl)).rejects.toThrow(RangeError);
      }
      expect(await a!.kv.get('k')).toBeUndefined();
      await a!.kv.set('k', 'v', 10_000);
      await expect(a!.kv.set('k', 'w', 0)).rejects.toThrow(RangeError);
      expect(await a!.kv.get('k')).toBe('v');
    });
  });

  describe('capped maps', () => {
    it('shares entries between pods, each map apart, and expires them on time', async () => {
      const [a, b] = await pods();
      await a!.capped.set('affinity', 'k1', '7', 10_000, 100);
      await a!.capped.set('affinity', 'short', '8', 50, 100);
      await a!.capped.set('other', 'k1', 'x', 10_000, 100);
      expect(await b!.capped.get('affinity', 'k1')).toBe('7');
      expect(await b!.capped.get('other', 'k1')).toBe('x');
      await sleep(120);
      expect(await b!.capped.get('affinity', 'short')).toBeUndefined();
      expect(await b!.capped.keys('affinity')).toEqual(['k1']);
    });

    it('keeps at most maxEntries entries, dropping the surplus', async () => {
      const [a, b] = await pods();
      for (let i = 0; i < 5; i++) await a!.capped.set('m', `k${i}`, String(i), 10_000 + i * 1000, 3);
      const keys = (await b!.capped.keys('m')).sort();
      expect(keys).toEqual(['k2', 'k3', 'k4']);
      expect(await b!.capped.get('m', 'k0')).toBeUndefined();
      expect(await b!.capped.get('m', 'k4')).toBe('4');
    });

    it('clears a map on every pod and says how many entries it held', async () => {
      const [a, b] = await pods();
      await a!.capped.set('m', 'k1', '1', 10_000, 10);
      await a!.capped.set('m', 'k2', '2', 10_000, 10);
      await a!.capped.set('n', 'k1', '1', 10_000, 10);
      expect(await b!.capped.clear('m')).toBe(2);
      expect(await a!.capped.get('m', 'k1')).toBeUndefined();
      expect(await a!.capped.keys('m')).toEqual([]);
      expect(await a!.capped.get('n', 'k1')).toBe('1');
      await a!.capped.set('n', 'rule-a:x', '1', 10_000, 10);
      await a!.capped.set('n', 'rule-b:x', '2', 10_000, 10);
      expect(await b!.capped.clear('n', 'rule-a:')).toBe(1);
      expect((await a!.capped.keys('n')).sort()).toEqual(['k1', 'rule-b:x']);
    });
  });

  describe('runOnOnePod', () => {
    it('runs the job on one pod at a time and fails over when the holder stops', async () => {
      const [a, b] = await pods();
      const runs: string[] = [];
      let running = 0;
      let mostAtOnce = 0;
      // Each run outlasts the interval, so overlapping runs on one pod would show.
      const job = (pod: string) => async () => {
        running++;
        mostAtOnce = Math.max(mostAtOnce, running);
        runs.push(pod);
        await sleep(60);
        running--;
      };
      const options = { name: 'sweeper', intervalMs: 40, ttlMs: 400 };
      const onA = runOnOnePod(a!, options, job('a'));
      const onB = runOnOnePod(b!, options, job('b'));
      await waitFor(() => runs.length >= 4);
      const first = runs[0]!;
      expect(new Set(runs)).toEqual(new Set([first]));
      const [holder, standby] = first === 'a' ? [onA, onB] : [onB, onA];
      await holder.stop();
      const before = runs.length;
      await waitFor(() => runs.length >= before + 2);
      expect(new Set(runs.slice(before))).toEqual(new Set([first === 'a' ? 'b' : 'a']));
      await standby.stop();
      const after = runs.length;
      await sleep(120);
      expect(runs.length).toBe(after);
      expect(mostAtOnce).toBe(1);
    });

    it('stop waits for the running job, aborts its signal and releases the lease', async () => {
      const [a, b] = await pods();
      const started = Promise.withResolvers<AbortSignal>();
      let finished = false;
      const job = runOnOnePod(a!, { name: 'slow', intervalMs: 1000, ttlMs: 5000 }, async (signal) => {
        started.resolve(signal);
        await sleep(100);
        finished = true;
      });
      const signal = await started.promise;
      expect(await b!.locks.acquire('slow', 5000)).toBeNull();
      expect(signal.aborted).toBe(false);
      await job.stop();
      expect(finished).toBe(true);
      expect(signal.aborted).toBe(true);
      const lease = await b!.locks.acquire('slow', 5000);
      expect(lease).not.toBeNull();
      await lease!.release();
    });

    it('reports a failing run and runs again at the next interval', async () => {
      const [a] = await pods(1);
      const errors: unknown[] = [];
      let attempts = 0;
      const job = runOnOnePod(
        a!,
        { name: 'flaky', intervalMs: 30, ttlMs: 300, onError: (e) => errors.push(e) },
        async () => {
          attempts++;
          throw new Error(`attempt ${attempts}`);
        },
      );
      await waitFor(() => attempts >= 2);
      await job.stop();
      expect(errors.slice(0, 2).map((e) => (e as Error).message)).toEqual(['attempt 1', 'attempt 2']);
    });

    it('refuses a ttl that would lapse between renewals', async () => {
      const [a] = await pods(1);
      expect(() => runOnOnePod(a!, { name: 'x', intervalMs: 100, ttlMs: 100 }, async () => {})).toThrow(RangeError);
    });
  });
}
