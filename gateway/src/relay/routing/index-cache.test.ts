import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestStore } from '../../../../tests/support/database.ts';
import { waitFor } from '../../../../tests/support/wait.ts';
import { createMemoryClusterState, type MemoryClusterState } from '../../cluster/index.ts';
import { CHANNELS_CHANNEL, type ChannelCreateInput, ChannelService } from '../../domain/channels/index.ts';
import { Keyring } from '../../domain/keyring.ts';
import type { Store } from '../../store/index.ts';
import { matchingModelName, RoutingIndex, type RoutingLogger } from './index-cache.ts';
import type { Tier } from './picker.ts';

let database: { store: Store; dispose(): Promise<void> };
const keyring = new Keyring('routing-index-test-secret');
const opened: Array<{ close(): Promise<void> }> = [];
let cluster: MemoryClusterState;
let channels: ChannelService;

beforeAll(async () => {
  database = await createTestStore();
}, 60_000);

afterAll(async () => {
  await database.dispose();
});

beforeEach(async () => {
  await database.store.db.deleteFrom('abilities').execute();
  await database.store.db.deleteFrom('channels').execute();
  cluster = createMemoryClusterState();
  opened.push(cluster);
  channels = new ChannelService({ db: database.store.db, keyring, bus: cluster.bus });
});

afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function start(options: { syncIntervalMs?: number; logger?: RoutingLogger } = {}): Promise<RoutingIndex> {
  const index = await RoutingIndex.start({ db: database.store.db, keyring, bus: cluster.bus, ...options });
  opened.push(index); // closed before the cluster state, which was opened first
  return index;
}

async function create(input: ChannelCreateInput): Promise<number> {
  const { channels: created } = await channels.create({ key: 'sk-test', models: 'gpt-4o', ...input });
  return created[0]!.id;
}

const shape = (tiers: readonly Tier[]) => tiers.map((t) => [t.priority, t.channels.map((c) => c.id)]);

describe('RoutingIndex', () => {
  it('loads enabled channels per group and model, in priority tiers, with keys decrypted', async () => {
    const a = await create({ name: 'a', key: 'sk-a', priority: 10, weight: 5, group: 'default,vip' });
    const b = await create({ name: 'b', key: 'sk-b\nsk-b2', priority: 0, multi_key_mode: 'polling' });
    const c = await create({ name: 'c', key: 'sk-c', priority: 10, models: 'gpt-4o,o3' });
    const off = await create({ name: 'off', key: 'sk-off', priority: 99, status: 2 });
    const index = await start();

    expect(shape(index.candidates('default', 'gpt-4o'))).toEqual([
      [10, [a, c]],
      [0, [b]],
    ]);
    expect(shape(index.candidates('vip', 'gpt-4o'))).toEqual([[10, [a]]]);
    expect(shape(index.candidates('default', 'o3'))).toEqual([[10, [c]]]);
    expect(index.candidates('default', 'unknown-model')).toEqual([]);
    expect(index.candidates('nobody', 'gpt-4o')).toEqual([]);

    expect(index.channel(a)).toMatchObject({ keys: ['sk-a'], weight: 5, groups: ['default', 'vip'] });
    expect(index.channel(b)).toMatchObject({ keys: ['sk-b', 'sk-b2'], multiKeyMode: 'polling' });
    // Disabled channels are not routed to, but can still be looked up (pinned keys).
    expect(index.channel(off)).toMatchObject({ status: 2 });
    expect(index.models('default')).toEqual(['gpt-4o', 'o3']);
    expect(index.groups()).toEqual(['default', 'vip']);
  });

  it('parses the JSON settings into the snapshot', async () => {
    const id = await create({
      name: 'json',
      model_mapping: '{"gpt-4o":"gpt-4o-2024-08-06"}',
      status_code_mapping: '{"429":"500"}',
      param_override: '{"temperature":0.1}',
      header_override: '{"X-Tenant":"t1"}',
      setting: '{}',
    });
    const index = await start();
    const channel = index.channel(id)!;
    expect(channel.modelMapping).toEqual({ 'gpt-4o': 'gpt-4o-2024-08-06' });
    expect(channel.statusCodeMapping).toEqual({ '429': '500' });
    expect(channel.paramOverride).toEqual({ temperature: 0.1 });
    expect(channel.headerOverride).toEqual({ 'X-Tenant': 't1' });
    expect(channel.setting).toBeUndefined();
  });

  it('follows changes made through ChannelService on every pod', async () => {
    const a = await create({ name: 'a', priority: 1 });
    const b = await create({ name: 'b', priority: 1 });
    const index = await start();
    // A second pod: another index on the same bus.
    const other = await start();

    await channels.update({ id: b, priority: 5 });
    for (const pod of [index, other]) {
      await waitFor(() => pod.candidates('default', 'gpt-4o')[0]?.priority === 5, 1000);
      expect(shape(pod.candidates('default', 'gpt-4o'))).toEqual([
        [5, [b]],
        [1, [a]],
      ]);
    }

    await channels.update({ id: a, status: 2 });
    await waitFor(() => shape(other.candidates('default', 'gpt-4o')).length === 1, 1000);
    expect(shape(other.candidates('default', 'gpt-4o'))).toEqual([[5, [b]]]);

    const c = await create({ name: 'c', priority: 5, models: 'gpt-4o,o3' });
    await waitFor(() => index.candidates('default', 'o3').length === 1, 1000);
    expect(shape(index.candidates('default', 'gpt-4o'))).toEqual([[5, [b, c]]]);

    await channels.delete(b);
    await waitFor(() => index.channel(b) === undefined, 1000);
    expect(shape(index.candidates('default', 'gpt-4o'))).toEqual([[5, [c]]]);
  });

  it('picks up a change written to the database and announced with a bus message', async () => {
    const a = await create({ name: 'a', key: 'sk-old' });
    const index = await start();
    const { db } = database.store;
    await db
      .updateTable('channels')
      .set({ key_encrypted: keyring.encrypt('sk-new'), weight: 7 })
      .where('id', '=', a)
      .execute();
    await db
      .updateTable('abilities')
      .set({ enabled: false })
      .where('channel_id', '=', a)
      .where('model', '=', 'gpt-4o')
      .execute();
    // Nothing changes before the announcement...
    await sleep(50);
    expect(index.channel(a)?.keys).toEqual(['sk-old']);
    await cluster.bus.publish(CHANNELS_CHANNEL, JSON.stringify({ ids: [a] }));
    await waitFor(() => index.channel(a)?.keys[0] === 'sk-new', 1000);
    expect(index.channel(a)?.weight).toBe(7);
    // ...and a disabled ability takes the channel out of that model's candidates.
    expect(index.candidates('default', 'gpt-4o')).toEqual([]);
  });

  it('reloads everything on a message naming no ids, or a malformed one', async () => {
    const index = await start();
    const id = await create({ name: 'late' });
    await waitFor(() => index.candidates('default', 'gpt-4o').length === 1, 1000);
    await database.store.db.updateTable('channels').set({ priority: 3 }).where('id', '=', id).execute();
    await cluster.bus.publish(CHANNELS_CHANNEL, 'not json');
    await waitFor(() => index.channel(id)?.priority === 3, 1000);
    await database.store.db.updateTable('channels').set({ priority: 4 }).where('id', '=', id).execute();
    await cluster.bus.publish(CHANNELS_CHANNEL, JSON.stringify({ ids: [] }));
    await waitFor(() => index.channel(id)?.priority === 4, 1000);
  });

  it('repairs a missed message with the periodic full reload', async () => {
    const id = await create({ name: 'a' });
    const index = await start({ syncIntervalMs: 100 });
    await database.store.db.updateTable('channels').set({ status: 2 }).where('id', '=', id).execute();
    await waitFor(() => index.candidates('default', 'gpt-4o').length === 0, 2000);
    expect(index.channel(id)?.status).toBe(2);
  });

  it('stops following changes once closed', async () => {
    const id = await create({ name: 'a', priority: 1 });
    const index = await start({ syncIntervalMs: 50 });
    await index.close();
    await channels.update({ id, priority: 9 });
    await sleep(150);
    expect(index.channel(id)?.priority).toBe(1);
  });

  it('keeps the round-robin cursor across reloads and reads disabled keys from channel_info', async () => {
    const id = await create({ name: 'multi', key: 'k0\nk1\nk2', multi_key_mode: 'polling' });
    const index = await start();
    const state = index.keyState(id)!;
    state.cursor = 2;
    const info = JSON.parse(
      (
        await database.store.db
          .selectFrom('channels')
          .select('channel_info')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).channel_info,
    ) as Record<string, unknown>;
    await database.store.db
      .updateTable('channels')
      .set({ channel_info: JSON.stringify({ ...info, multi_key_status_list: { '1': 3 } }) })
      .where('id', '=', id)
      .execute();
    await index.reload([id]);
    expect(index.keyState(id)).toBe(state);
    expect(state.cursor).toBe(2);
    expect([...state.disabled]).toEqual([1]);
    await index.reload();
    expect(index.keyState(id)?.cursor).toBe(2);
  });

  it('leaves out channels whose key cannot be decrypted, and says so once', async () => {
    const good = await create({ name: 'good' });
    const bad = await create({ name: 'bad' });
    await database.store.db
      .updateTable('channels')
      .set({ key_encrypted: new Keyring('another-secret').encrypt('sk-x') })
      .where('id', '=', bad)
      .execute();
    const warnings: string[] = [];
    const logger: RoutingLogger = { warn: (_, msg) => warnings.push(msg), error: () => {} };
    const index = await start({ logger });
    expect(shape(index.candidates('default', 'gpt-4o'))).toEqual([[0, [good]]]);
    expect(index.channel(bad)?.keys).toEqual([]);
    await index.reload();
    expect(warnings.filter((w) => w.includes('cannot be decrypted'))).toHaveLength(1);
  });

  it('matches parameterised model names to the wildcard a channel lists', async () => {
    const gemini = await create({ name: 'gemini', models: 'gemini-2.5-flash-thinking-*,gemini-2.5-flash' });
    const gizmo = await create({ name: 'gizmo', models: 'gpt-4-gizmo-*' });
    const index = await start();
    expect(shape(index.candidates('default', 'gemini-2.5-flash-thinking-1024'))).toEqual([[0, [gemini]]]);
    expect(shape(index.candidates('default', 'gemini-2.5-flash'))).toEqual([[0, [gemini]]]);
    expect(shape(index.candidates('default', 'gpt-4-gizmo-g-123'))).toEqual([[0, [gizmo]]]);
    expect(index.candidates('default', 'gemini-2.5-pro-thinking-1')).toEqual([]);
  });
});

describe('matchingModelName', () => {
  it.each([
    ['gemini-2.5-flash-thinking-1024', 'gemini-2.5-flash-thinking-*'],
    ['gemini-2.5-flash-lite-thinking-512', 'gemini-2.5-flash-lite-thinking-*'],
    ['gemini-2.5-pro-thinking-128', 'gemini-2.5-pro-thinking-*'],
    ['gemini-2.5-flash', 'gemini-2.5-flash'],
    ['gpt-4-gizmo-g-abc', 'gpt-4-gizmo-*'],
    ['gpt-4o-gizmo-g-abc', 'gpt-4o-gizmo-*'],
    ['gpt-4o', 'gpt-4o'],
  ])('%s → %s', (name, expected) => {
    expect(matchingModelName(name)).toBe(expected);
  });
});
