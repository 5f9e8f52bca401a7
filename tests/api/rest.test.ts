import { fetchUtils } from 'ra-core';
import simpleRestProvider from 'ra-data-simple-rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
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
