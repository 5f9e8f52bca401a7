import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore } from '../../../../tests/support/database.ts';
import { createMemoryClusterState } from '../../cluster/index.ts';
import { announceAuthChange } from '../../domain/auth-changes.ts';
import { Keyring } from '../../domain/keyring.ts';
import type { Store } from '../../store/index.ts';
import { StoreUnavailableError } from '../../store/unavailable.ts';
import { KeyCache } from './key-cache.ts';

/** A database that has gone away while `down` is set: every statement fails as an unreachable one does. */
class Outage implements KyselyPlugin {
  down = false;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.down) throw new StoreUnavailableError();
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/** Counts the statements a Kysely instance runs, to prove the hot path does not touch the database. */
class QueryCounter implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.count++;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

const keyring = new Keyring('key-cache-test-secret');
let store: Store;
let dispose: () => Promise<void>;
let tokenId: number;
let userId: number;

beforeAll(async () => {
  ({ store, dispose } = await createTestStore());
  const user = await store.db
    .insertInto('users')
    .values({
      username: 'keyowner',
      password: 'x',
      created_at: 1,
      group: 'vip',
      setting: '{"accept_unset_model_ratio_model":true}',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  userId = user.id;
  const token = await store.db
    .insertInto('tokens')
    .values({
      user_id: userId,
      key_hmac: keyring.hmac('abc123'),
      key_encrypted: keyring.encrypt('abc123'),
      name: 'cached',
      created_time: 1,
      model_limits_enabled: true,
      model_limits: 'gpt-4o, gpt-4o-mini',
      allow_ips: '10.0.0.0/8\n192.168.1.7',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  tokenId = token.id;
});
afterAll(async () => dispose?.());

describe('API key cache', () => {
  it('reads a key once, then answers from memory until a change is announced', async () => {
    const counter = new QueryCounter();
    const cluster = createMemoryClusterState();
    const cache = await KeyCache.start({ db: store.db.withPlugin(counter), keyring, bus: cluster.bus });
    const identity = await cache.lookup('abc123');
    expect(identity?.token).toMatchObject({ id: tokenId, name: 'cached', status: 1, expiredTime: -1, group: '' });
    expect(identity?.user).toMatchObject({ id: userId, username: 'keyowner', group: 'vip', acceptUnsetModels: true });
    expect([...(identity?.token.modelLimits ?? [])]).toEqual(['gpt-4o', 'gpt-4o-mini']);
    expect(identity?.token.allowIps?.check('10.2.3.4')).toBe(true);
    expect(identity?.token.allowIps?.check('192.168.1.7')).toBe(true);
    expect(identity?.token.allowIps?.check('192.168.1.8')).toBe(false);

    await Promise.all(Array.from({ length: 100 }, () => cache.lookup('abc123')));
    expect(counter.count).toBe(1);

    await store.db.updateTable('tokens').set({ status: 2 }).where('id', '=', tokenId).execute();
    await announceAuthChange(cluster.bus, { tokens: [tokenId] });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await cache.lookup('abc123'))?.token.status).toBe(2);
    expect(counter.count).toBe(2);
    await store.db.updateTable('tokens').set({ status: 1 }).where('id', '=', tokenId).execute();
    await cache.close();
  });

  it('remembers unknown keys briefly, and forgets them when tokens change', async () => {
    const counter = new QueryCounter();
    const cluster = createMemoryClusterState();
    const cache = await KeyCache.start({ db: store.db.withPlugin(counter), keyring, bus: cluster.bus });
    for (let i = 0; i < 10; i++) expect(await cache.lookup('no-such-key')).toBeUndefined();
    expect(counter.count).toBe(1);
    await announceAuthChange(cluster.bus, { tokens: [999] });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await cache.lookup('no-such-key');
    expect(counter.count).toBe(2);
    await cache.close();
  });

  it('drops a user’s keys when the user changes', async () => {
    const cluster = createMemoryClusterState();
    const cache = await KeyCache.start({ db: store.db, keyring, bus: cluster.bus });
    expect((await cache.lookup('abc123'))?.user.status).toBe(1);
    await store.db.updateTable('users').set({ status: 2 }).where('id', '=', userId).execute();
    await announceAuthChange(cluster.bus, { users: [userId] });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await cache.lookup('abc123'))?.user.status).toBe(2);
    await store.db.updateTable('users').set({ status: 1 }).where('id', '=', userId).execute();
    await cache.close();
  });

  it('hashes a presented key once, not on every request', async () => {
    let hashed = 0;
    const counting = new (class extends Keyring {
      override hmac(value: string): string {
        hashed++;
        return super.hmac(value);
      }
    })('key-cache-test-secret');
    const cache = await KeyCache.start({ db: store.db, keyring: counting, bus: createMemoryClusterState().bus });
    // Synchronously: nothing before a key is read, then its identity, or null for a key that does not exist.
    expect(cache.cached('abc123')).toBeUndefined();
    expect(hashed).toBe(0);
    for (let i = 0; i < 50; i++) expect((await cache.lookup('abc123'))?.token.id).toBe(tokenId);
    for (let i = 0; i < 50; i++) expect(await cache.lookup('no-such-key')).toBeUndefined();
    expect(hashed).toBe(2);
    expect(cache.cached('abc123')?.token.id).toBe(tokenId);
    expect(cache.cached('no-such-key')).toBeNull();
    await cache.close();
  });

  it('refuses a deleted key as soon as its deletion is announced', async () => {
    const cluster = createMemoryClusterState();
    const cache = await KeyCache.start({ db: store.db, keyring, bus: cluster.bus });
    const doomed = await store.db
      .insertInto('tokens')
      .values({
        user_id: userId,
        key_hmac: keyring.hmac('doomed1'),
        key_encrypted: keyring.encrypt('doomed1'),
        name: 'doomed',
        created_time: 1,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect((await cache.lookup('doomed1'))?.token.id).toBe(doomed.id);
    await store.db.updateTable('tokens').set({ deleted_at: 1 }).where('id', '=', doomed.id).execute();
    await announceAuthChange(cluster.bus, { tokens: [doomed.id] });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await cache.lookup('doomed1')).toBeUndefined();
    // The key next to it is untouched.
    expect((await cache.lookup('abc123'))?.token.id).toBe(tokenId);
    await cache.close();
  });

  it('serves a known key past its time-to-live while the database is unreachable, and no unknown key', async () => {
    const outage = new Outage();
    const cache = await KeyCache.start({
      db: store.db.withPlugin(outage),
      keyring,
      bus: createMemoryClusterState().bus,
      ttlMs: 1,
    });
    expect((await cache.lookup('abc123'))?.token.id).toBe(tokenId);
    await new Promise((resolve) => setTimeout(resolve, 5));
    outage.down = true;
    expect((await cache.lookup('abc123'))?.token.id).toBe(tokenId);
    await expect(cache.lookup('never-seen')).rejects.toBeInstanceOf(StoreUnavailableError);
    // Back: the key is read again (a change made meanwhile shows).
    outage.down = false;
    await store.db.updateTable('tokens').set({ name: 'renamed' }).where('id', '=', tokenId).execute();
    expect((await cache.lookup('abc123'))?.token.name).toBe('renamed');
    await store.db.updateTable('tokens').set({ name: 'cached' }).where('id', '=', tokenId).execute();
    await cache.close();
  });
});
