import net, { type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { openStore } from './open.ts';
import { isConnectionFailure, StoreGuard, StoreUnavailableError } from './unavailable.ts';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });

describe('store unavailability', () => {
  it('tells an unreachable database from a statement the database refused', () => {
    expect(isConnectionFailure(refused())).toBe(true);
    expect(isConnectionFailure(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionFailure(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe(true);
    expect(isConnectionFailure(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isConnectionFailure(new Error('division by zero'))).toBe(false);
    expect(isConnectionFailure('ECONNREFUSED')).toBe(false);
  });

  it('fails fast after a failure, then lets one checkout at a time probe', async () => {
    let clock = 0;
    const guard = new StoreGuard(1000, () => clock);
    let opens = 0;
    const failing = async () => {
      opens++;
      throw refused();
    };
    await expect(guard.checkout(failing)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(guard.down).toBe(true);
    clock = 999;
    await expect(guard.checkout(failing)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(opens).toBe(1);

    clock = 1000;
    let open!: (value: string) => void;
    const probe = guard.checkout(() => new Promise<string>((resolve) => (open = resolve)));
    // While the probe waits, the others do not.
    await expect(guard.checkout(failing)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(opens).toBe(1);
    open('client');
    expect(await probe).toBe('client');
    expect(guard.down).toBe(false);
    expect(await guard.checkout(async () => 'next')).toBe('next');
  });

  it('leaves other errors as they are, without tripping', async () => {
    const guard = new StoreGuard();
    const syntax = new Error('syntax error');
    await expect(
      guard.checkout(async () => {
        throw syntax;
      }),
    ).rejects.toBe(syntax);
    expect(guard.down).toBe(false);
  });

  it('gives up on a database that accepts the connection but never answers after about two seconds', async () => {
    // Accepts and then says nothing, like a host behind a dropped route.
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const store = await openStore({ databaseUrl: `postgres://nobody@127.0.0.1:${port}/none` });
    try {
      const started = performance.now();
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(performance.now() - started).toBeLessThan(5_000);
      const again = performance.now();
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(performance.now() - again).toBeLessThan(100);
    } finally {
      await store.close();
      silent.close();
    }
  });

  it('answers within the connect timeout when nothing listens, and at once after that', async () => {
    const store = await openStore({ databaseUrl: 'postgres://nobody@127.0.0.1:1/none' });
    try {
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
      const started = performance.now();
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(performance.now() - started).toBeLessThan(100);
    } finally {
      await store.close();
    }
  });
});
