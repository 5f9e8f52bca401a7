import { fetchUtils } from 'ra-core';
import simpleRestProvider from 'ra-data-simple-rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;

/** react-admin's own data provider, signed in the way the console is: session cookie plus New-Api-User. */
function provider(client: DashboardClient) {
  return simpleRestProvider(`${gateway.url}/rest`, (url, options = {}) => {
    const headers = new Headers(options.headers ?? { accept: 'application/json' });
    headers.set('cookie', client.cookie);
    headers.set('new-api-user', String(client.userId));
    headers.set('accept-language', 'en');
    return fetchUtils.fetchJson(url, { ...options, headers });
  });
}

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

describe('REST dialect with ra-data-simple-rest', () => {
  it('creates, lists, sorts, filters, pages, updates and deletes users', async () => {
    const data = provider(root);
    for (const name of ['alice', 'bob', 'carol', 'dave']) {
      const created = await data.create('user', {
        data: { username: name, password: 'password-1', display_name: name.toUpperCase() },
      });
      expect(created.data).toMatchObject({ username: name, display_name: name.toUpperCase(), role: 1 });
      expect(created.data).not.toHaveProperty('password');
    }
    const page = await data.getList('user', {
      pagination: { page: 1, perPage: 2 },
      sort: { field: 'username', order: 'ASC' },
      filter: {},
    });
    expect(page.total).toBe(5);
    expect(page.data.map((u) => u.username)).toEqual(['alice', 'bob']);
    const second = await data.getList('user', {
      pagination: { page: 2, perPage: 2 },
      sort: { field: 'username', order: 'ASC' },
      filter: {},
    });
    expect(second.data.map((u) => u.username)).toEqual(['carol', 'dave']);
    const searched = await data.getList('user', {
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'id', order: 'DESC' },
      filter: { q: 'car' },
    });
    expect(searched.data.map((u) => u.username)).toEqual(['carol']);

    const alice = page.data[0]!;
    const many = await data.getMany('user', { ids: [alice.id, second.data[0]!.id] });
    expect(many.data.map((u) => u.username).sort()).toEqual(['alice', 'carol']);
    expect((await data.getOne('user', { id: alice.id })).data.username).toBe('alice');

    const updated = await data.update('user', {
      id: alice.id,
      data: { ...alice, quota: 12345, group: 'vip' },
      previousData: alice,
    });
    expect(updated.data).toMatchObject({ quota: 12345, group: 'vip' });
    const disabled = await data.update('user', {
      id: alice.id,
      data: { ...updated.data, status: 2 },
      previousData: updated.data,
    });
    expect(disabled.data.status).toBe(2);

    const removed = await data.delete('user', { id: alice.id, previousData: alice });
    expect(removed.data.username).toBe('alice');
    const row = await gateway.store.db
      .selectFrom('users')
      .select('deleted_at')
      .where('id', '=', alice.id)
      .executeTakeFirstOrThrow();
    expect(row.deleted_at).not.toBeNull();
  });

  it('manages channels, with keys written but never read back', async () => {
    const data = provider(root);
    for (const [name, priority] of [
      ['alpha', 5],
      ['beta', 1],
      ['gamma', 3],
    ] as const) {
      const created = await data.create('channel', {
        data: {
          name,
          key: `sk-upstream-${name}`,
          models: 'gpt-4o,gpt-4o-mini',
          priority,
          base_url: 'https://up.example/',
        },
      });
      expect(created.data).toMatchObject({ name, key: '', priority, base_url: 'https://up.example' });
    }
    const sorted = await data.getList('channel', {
      pagination: { page: 1, perPage: 2 },
      sort: { field: 'priority', order: 'DESC' },
      filter: {},
    });
    expect(sorted.total).toBe(3);
    expect(sorted.data.map((c) => c.name)).toEqual(['alpha', 'gamma']);
    const filtered = await data.getList('channel', {
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'id', order: 'ASC' },
      filter: { q: 'bet' },
    });
    expect(filtered.data.map((c) => c.name)).toEqual(['beta']);
    const beta = filtered.data[0]!;
    const updated = await data.update('channel', {
      id: beta.id,
      data: { ...beta, weight: 7, status: 2 },
      previousData: beta,
    });
    expect(updated.data).toMatchObject({ weight: 7, status: 2, key: '' });
    const abilities = await gateway.store.db
      .selectFrom('abilities')
      .selectAll()
      .where('channel_id', '=', beta.id)
      .execute();
    expect(abilities.map((a) => [a.model, a.enabled, a.weight])).toEqual(
      expect.arrayContaining([
        ['gpt-4o', false, 7],
        ['gpt-4o-mini', false, 7],
      ]),
    );
    await expect(data.create('channel', { data: { name: 'nokey', models: 'gpt-4o' } })).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      data.update('channel', { id: beta.id, data: { ...beta, priority: 'high' }, previousData: beta }),
    ).rejects.toMatchObject({
      status: 400,
    });
    // A type the relay cannot speak is refused, naming it, on create and on a change of type.
    const palm = data.create('channel', { data: { name: 'palm', key: 'sk-upstream-palm', models: 'x', type: 11 } });
    await expect(palm).rejects.toMatchObject({ status: 400, body: { code: 'CHANNEL_TYPE_UNSUPPORTED' } });
    await expect(palm).rejects.toThrow('type 11 (PaLM) is not supported yet');
    await expect(
      data.update('channel', { id: beta.id, data: { ...beta, type: 57 }, previousData: beta }),
    ).rejects.toMatchObject({ status: 400, body: { code: 'CHANNEL_TYPE_UNSUPPORTED' } });
    expect((await data.delete('channel', { id: beta.id, previousData: beta })).data.name).toBe('beta');
    await expect(data.getOne('channel', { id: beta.id })).rejects.toMatchObject({ status: 404 });
    const stored = await gateway.store.db.selectFrom('channels').select('key_encrypted').execute();
    expect(JSON.stringify(stored)).not.toContain('sk-upstream');
  });

  it('manages redemption codes and the signed-in user’s own tokens', async () => {
    const data = provider(root);
    const code = await data.create('redemption', { data: { name: 'gift', quota: 250000 } });
    expect(code.data).toMatchObject({ name: 'gift', quota: 250000, status: 1 });
    expect(code.data.key).toMatch(/^[0-9a-f]{32}$/);
    const disabled = await data.update('redemption', {
      id: code.data.id,
      data: { ...code.data, status: 2 },
      previousData: code.data,
    });
    expect(disabled.data.status).toBe(2);
    const codes = await data.getList('redemption', {
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'id', order: 'DESC' },
      filter: { q: 'gift' },
    });
    expect(codes.total).toBe(1);

    const extra = await data.create('redemption', { data: { name: 'spare', quota: 1000 } });
    expect((await data.delete('redemption', { id: extra.data.id, previousData: extra.data })).data.name).toBe('spare');
    await expect(data.getOne('redemption', { id: extra.data.id })).rejects.toMatchObject({ status: 404 });

    for (const name of ['t-a', 't-b', 't-c']) await data.create('token', { data: { name, remain_quota: 10 } });
    const tokenPage = await data.getList('token', {
      pagination: { page: 2, perPage: 2 },
      sort: { field: 'name', order: 'ASC' },
      filter: { q: 't-' },
    });
    expect(tokenPage.total).toBe(3);
    expect(tokenPage.data.map((t) => t.name)).toEqual(['t-c']);
    const token = await data.create('token', { data: { name: 'ci', remain_quota: 1000, expired_time: -1 } });
    expect(token.data).toMatchObject({ name: 'ci', remain_quota: 1000, status: 1 });
    expect(token.data.key).toMatch(/^[0-9A-Za-z]{48}$/);
    const renamed = await data.update('token', {
      id: token.data.id,
      data: { ...token.data, name: 'ci-2', status: 2 },
      previousData: token.data,
    });
    expect(renamed.data).toMatchObject({ name: 'ci-2', status: 2 });

    // A token stored enabled but out of quota shows as exhausted (4): enabling it is refused, as the
    // status button's own call is, until its quota is raised.
    const empty = await data.create('token', { data: { name: 'empty', remain_quota: 0, expired_time: -1 } });
    expect(empty.data.status).toBe(4);
    await expect(
      data.update('token', { id: empty.data.id, data: { status: 1 }, previousData: empty.data }),
    ).rejects.toMatchObject({ status: 400 });
    const refilled = await data.update('token', {
      id: empty.data.id,
      data: { remain_quota: 10, status: 1 },
      previousData: empty.data,
    });
    expect(refilled.data).toMatchObject({ remain_quota: 10, status: 1 });
    await data.delete('token', { id: empty.data.id, previousData: refilled.data });

    // Another user sees none of it.
    await data.create('user', { data: { username: 'other', password: 'password-1' } });
    const other = new DashboardClient(gateway.url);
    await other.login('other', 'password-1');
    const theirs = provider(other);
    const none = await theirs.getList('token', {
      pagination: { page: 1, perPage: 10 },
      sort: { field: 'id', order: 'ASC' },
      filter: {},
    });
    expect(none).toMatchObject({ data: [], total: 0 });
    await expect(theirs.getOne('token', { id: token.data.id })).rejects.toMatchObject({ status: 404 });
    await expect(theirs.delete('token', { id: token.data.id, previousData: token.data })).rejects.toMatchObject({
      status: 404,
    });
    await expect(
      theirs.getList('redemption', {
        pagination: { page: 1, perPage: 10 },
        sort: { field: 'id', order: 'ASC' },
        filter: {},
      }),
    ).rejects.toMatchObject({
      status: 403,
    });
    expect((await data.delete('token', { id: token.data.id, previousData: token.data })).data.name).toBe('ci-2');
  });

  it('lists logs, drawing tasks and creative tasks, all rows for administrators and own rows for users', async () => {
    const db = gateway.store.db;
    const other = await db.selectFrom('users').select('id').where('username', '=', 'other').executeTakeFirstOrThrow();
    const now = Math.floor(Date.now() / 1000);
    await db
      .insertInto('logs')
      .values([
        {
          user_id: root.userId!,
          username: 'root',
          created_at: now - 30,
          type: 2,
          model_name: 'gpt-4o',
          quota: 10,
          other: '{"admin_info":{"use_channel":[1]}}',
        },
        {
          user_id: other.id,
          username: 'other',
          created_at: now - 20,
          type: 2,
          model_name: 'gpt-4o',
          quota: 20,
          other: '{"admin_info":{"use_channel":[1]}}',
        },
        {
          user_id: other.id,
          username: 'other',
          created_at: now - 10,
          type: 2,
          model_name: 'claude-x',
          quota: 30,
          other: '{}',
        },
      ])
      .execute();
    await db
      .insertInto('midjourneys')
      .values([
        { user_id: root.userId!, action: 'IMAGINE', mj_id: 'mj-root', submit_time: now * 1000, channel_id: 1 },
        { user_id: other.id, action: 'IMAGINE', mj_id: 'mj-other', submit_time: now * 1000, channel_id: 1 },
      ])
      .execute();
    await db
      .insertInto('tasks')
      .values({
        created_at: now,
        updated_at: now,
        task_id: 'suno-1',
        platform: 'suno',
        user_id: other.id,
        channel_id: 1,
        action: 'MUSIC',
        submit_time: now,
        private_data: '{"secret":1}',
      })
      .execute();
    const otherClient = new DashboardClient(gateway.url);
    await otherClient.login('other', 'password-1');
    const list = (client: DashboardClient, resource: string, filter = {}) =>
      provider(client).getList(resource, {
        pagination: { page: 1, perPage: 10 },
        sort: { field: 'id', order: 'DESC' },
        filter,
      });

    const all = await list(root, 'log', { type: 2 });
    expect(all.total).toBe(3);
    const own = await list(otherClient, 'log', { type: 2 });
    expect(own.data.map((l) => l.quota)).toEqual([30, 20]);
    expect(JSON.stringify(own.data)).not.toContain('admin_info');
    expect(
      (await list(otherClient, 'log', { model_name: 'gpt-4o', username: 'root' })).data.map((l) => l.quota),
    ).toEqual([20]);
    expect((await list(root, 'midjourney')).total).toBe(2);
    expect((await list(otherClient, 'midjourney')).data.map((t) => t.mj_id)).toEqual(['mj-other']);
    const tasks = await list(otherClient, 'task');
    expect(tasks.data.map((t) => t.task_id)).toEqual(['suno-1']);
    expect(JSON.stringify(tasks.data)).not.toContain('secret');
    await expect(provider(otherClient).create('log', { data: { quota: 1 } })).rejects.toMatchObject({ status: 405 });
  });

  it('answers errors react-admin can show, and refuses users without the right role', async () => {
    const data = provider(root);
    await expect(
      data.create('user', { data: { username: 'x'.repeat(13), password: 'password-1' } }),
    ).rejects.toMatchObject({
      status: 400,
      message: 'The username must be at most 12 characters long',
    });
    await expect(
      data.getList('user', {
        pagination: { page: 1, perPage: 5 },
        sort: { field: 'password', order: 'ASC' },
        filter: {},
      }),
    ).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      data.getList('nonsense', {
        pagination: { page: 1, perPage: 5 },
        sort: { field: 'id', order: 'ASC' },
        filter: {},
      }),
    ).rejects.toMatchObject({
      status: 404,
    });
    const bad = await fetch(`${gateway.url}/rest/user?range=oops`, {
      headers: { cookie: root.cookie, 'new-api-user': String(root.userId) },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('REST_BAD_PARAMETER');
    const anonymous = await fetch(`${gateway.url}/rest/user`);
    expect(anonymous.status).toBe(401);
  });
});
