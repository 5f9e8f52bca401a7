import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { clientsFrom, type DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

// Prefill groups: the named lists the channel editor fills a channel's models, tags or endpoints from.
let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let alice: DashboardClient;
const { user } = clientsFrom(() => gateway.url, '10.63.0');

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { TRUST_PROXY: 'true', GLOBAL_API_RATE_LIMIT: '100000' }),
  );
  root = await setupRoot(gateway.url);
  alice = await user('alice');
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

describe('prefill groups', () => {
  it('creates, lists (all or by type), changes and deletes groups', async () => {
    const created = await root.post('/api/prefill_group', {
      name: 'openai',
      type: 'model',
      items: ['gpt-4o', ' gpt-4o-mini ', 'gpt-4o', ''],
      description: 'OpenAI chat models',
    });
    expect(created.body).toMatchObject({
      success: true,
      data: { name: 'openai', type: 'model', items: ['gpt-4o', 'gpt-4o-mini'], description: 'OpenAI chat models' },
    });
    const id = created.body.data.id as number;
    expect(created.body.data.created_time).toBeGreaterThan(0);
    const endpoints = '{"openai":{"path":"/v1/chat/completions","method":"POST"}}';
    expect(
      (await root.post('/api/prefill_group/', { name: 'eps', type: 'endpoint', items: endpoints })).body,
    ).toMatchObject({
      success: true,
      data: { type: 'endpoint', items: endpoints },
    });
    await root.post('/api/prefill_group', { name: 'tags', type: 'tag', items: ['fast'] });

    const all = (await root.get('/api/prefill_group')).body.data as any[];
    expect(all.map((g) => g.name)).toEqual(['openai', 'eps', 'tags']);
    const models = (await root.get('/api/prefill_group/?type=model')).body.data as any[];
    expect(models.map((g) => g.name)).toEqual(['openai']);

    const changed = await root.put('/api/prefill_group', { id, items: ['o3'], description: '' });
    expect(changed.body).toMatchObject({ success: true, data: { id, name: 'openai', items: ['o3'], description: '' } });
    // Fields not sent keep their values.
    expect((await root.put('/api/prefill_group', { id, name: 'oai' })).body.data).toMatchObject({ items: ['o3'] });

    expect((await root.delete(`/api/prefill_group/${id}`)).body.success).toBe(true);
    expect(((await root.get('/api/prefill_group')).body.data as any[]).map((g) => g.name)).toEqual(['eps', 'tags']);
    expect(refusalOf(await root.delete(`/api/prefill_group/${id}`))).toEqual({
      status: 200,
      success: false,
      code: 'PREFILL_GROUP_NOT_FOUND',
    });
  });

  it('refuses a taken name, a missing name or type, and items of the wrong kind, storing nothing', async () => {
    await root.post('/api/prefill_group', { name: 'unique', type: 'model', items: [] });
    const count = async () => ((await root.get('/api/prefill_group')).body.data as any[]).length;
    const before = await count();
    const refusals = [
      [{ name: 'unique', type: 'tag', items: [] }, 'PREFILL_GROUP_NAME_TAKEN'],
      [{ name: '  ', type: 'model', items: [] }, 'PREFILL_GROUP_NAME_REQUIRED'],
      [{ name: 'x', items: [] }, 'PREFILL_GROUP_NAME_REQUIRED'],
      [{ name: 'x', type: 'model', items: 'gpt-4o' }, 'PREFILL_GROUP_ITEMS_INVALID'],
      [{ name: 'x', type: 'endpoint', items: ['a'] }, 'PREFILL_GROUP_ITEMS_INVALID'],
      [{ name: 'x', type: 'endpoint', items: '{not json' }, 'PREFILL_GROUP_ITEMS_INVALID'],
    ] as const;
    for (const [body, code] of refusals) {
      expect(refusalOf(await root.post('/api/prefill_group', body)), JSON.stringify(body)).toEqual({
        status: 200,
        success: false,
        code,
      });
    }
    const badType = await root.post('/api/prefill_group', { name: 'x', type: 'colour', items: [] });
    expect([badType.status, badType.body.success]).toEqual([200, false]);
    expect(await count()).toBe(before);

    const other = (await root.post('/api/prefill_group', { name: 'other', type: 'tag', items: ['a'] })).body.data;
    expect(refusalOf(await root.put('/api/prefill_group', { id: other.id, name: 'unique' }))).toMatchObject({
      code: 'PREFILL_GROUP_NAME_TAKEN',
    });
    expect(refusalOf(await root.put('/api/prefill_group', { name: 'nameless' }))).toMatchObject({
      code: 'PREFILL_GROUP_ID_REQUIRED',
    });
    // Changing the type needs items of the new type.
    expect(refusalOf(await root.put('/api/prefill_group', { id: other.id, type: 'endpoint' }))).toMatchObject({
      code: 'PREFILL_GROUP_ITEMS_INVALID',
    });
    expect(
      (await root.get('/api/prefill_group/?type=tag')).body.data.find((g: any) => g.id === other.id),
    ).toMatchObject({ name: 'other', items: ['a'] });
  });

  it('is for administrators only', async () => {
    expect(refusalOf(await alice.get('/api/prefill_group'))).toMatchObject({ status: 200, success: false });
    expect(refusalOf(await alice.post('/api/prefill_group', { name: 'm', type: 'model', items: [] }))).toMatchObject({
      status: 200,
      success: false,
    });
  });
});
