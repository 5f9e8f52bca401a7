import { fetchUtils } from 'ra-core';
import simpleRestProvider from 'ra-data-simple-rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

/** The period limit fields of tokens and users through /api (new-api's shapes, new fields) and /rest (the console's). */

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;

function provider(client: DashboardClient) {
  return simpleRestProvider(`${gateway.url}/rest`, (url, options = {}) => {
    const headers = new Headers(options.headers ?? { accept: 'application/json' });
    headers.set('cookie', client.cookie);
    headers.set('new-api-user', String(client.userId));
    headers.set('accept-language', 'en');
    return fetchUtils.fetchJson(url, { ...options, headers });
  });
}

const NONE = {
  daily_quota_limit: 0,
  daily_request_limit: 0,
  weekly_quota_limit: 0,
  weekly_request_limit: 0,
  monthly_quota_limit: 0,
  monthly_request_limit: 0,
};

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace(), { GLOBAL_API_RATE_LIMIT: '100000' }));
  root = await setupRoot(gateway.url);
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

describe('period limits of tokens', () => {
  it('creates, reads, lists and updates them through /api; absent fields keep their value', async () => {
    const created = await root.post('/api/token/', { name: 'limits', weekly_quota_limit: 250_000 });
    expect(created.body.data).toMatchObject({ ...NONE, weekly_quota_limit: 250_000 });
    const id = created.body.data.id as number;
    const updated = await root.put('/api/token/', { id, daily_request_limit: 40 });
    expect(updated.body.data).toMatchObject({ ...NONE, weekly_quota_limit: 250_000, daily_request_limit: 40 });
    const one = await root.get(`/api/token/${id}`);
    expect(one.body.data).toMatchObject({
      weekly_quota_limit: 250_000,
      daily_request_limit: 40,
      period_usage: {
        daily: { used_quota: 0, used_requests: 0, request_limit: 40, remain_requests: 40, remain_quota: null },
        weekly: { used_quota: 0, quota_limit: 250_000, remain_quota: 250_000, remain_requests: null },
      },
    });
    expect(one.body.data.period_usage.monthly).toBeUndefined();
    // Back to none: the stored limits are empty again.
    const cleared = await root.put('/api/token/', { id, weekly_quota_limit: 0, daily_request_limit: 0 });
    expect(cleared.body.data).toMatchObject(NONE);
    const listed = (await root.get('/api/token/')).body.data.items.find((t: { id: number }) => t.id === id);
    expect(listed).toMatchObject({ ...NONE, period_usage: {} });
    const row = await gateway.store.db
      .selectFrom('tokens')
      .select('period_limits')
      .where('id', '=', id)
      .executeTakeFirst();
    expect(row?.period_limits).toBe('');
  });

  it('refuses a limit that is not a whole number of at least 0, and changes nothing', async () => {
    const id = (await root.post('/api/token/', { name: 'bad', daily_quota_limit: 7 })).body.data.id as number;
    for (const value of [-1, 1.5, '9']) {
      const answer = await root.put('/api/token/', { id, daily_quota_limit: value });
      expect(refusalOf(answer)).toMatchObject({ status: 200, success: false });
    }
    expect((await root.get(`/api/token/${id}`)).body.data.daily_quota_limit).toBe(7);
  });

  it('takes them from the console’s REST dialect', async () => {
    const data = provider(root);
    const token = await data.create('token', { data: { name: 'ra', monthly_request_limit: 1000 } });
    expect(token.data).toMatchObject({ monthly_request_limit: 1000 });
    const edited = await data.update('token', {
      id: token.data.id,
      data: { ...token.data, monthly_request_limit: 0, daily_quota_limit: 5000 },
      previousData: token.data,
    });
    expect(edited.data).toMatchObject({ ...NONE, daily_quota_limit: 5000 });
    const read = await data.getOne('token', { id: token.data.id });
    expect(read.data.period_usage.daily).toMatchObject({ quota_limit: 5000, used_quota: 0 });
  });
});

describe('period limits of users', () => {
  it('lets an administrator set them through /api and /rest, refusing fractions with a stable code', async () => {
    expect((await root.post('/api/user/', { username: 'erin', password: 'password-1' })).body.success).toBe(true);
    const erin = (await root.get('/api/user/search?keyword=erin')).body.data.items[0];
    expect(erin).toMatchObject(NONE);
    const set = await root.put('/api/user/', { id: erin.id, monthly_quota_limit: 9_000_000 });
    expect(set.body.data).toMatchObject({ ...NONE, monthly_quota_limit: 9_000_000 });
    const data = provider(root);
    const fraction = data.update('user', {
      id: erin.id,
      data: { ...set.body.data, daily_request_limit: 1.5 },
      previousData: set.body.data,
    });
    await expect(fraction).rejects.toMatchObject({ body: { code: 'period_limit_invalid' } });
    const edited = await data.update('user', {
      id: erin.id,
      data: { ...set.body.data, daily_request_limit: 20 },
      previousData: set.body.data,
    });
    expect(edited.data).toMatchObject({ monthly_quota_limit: 9_000_000, daily_request_limit: 20 });

    const own = new DashboardClient(gateway.url);
    expect((await own.login('erin', 'password-1')).body.success).toBe(true);
    const self = await own.get('/api/user/self');
    expect(self.body.data).toMatchObject({
      monthly_quota_limit: 9_000_000,
      daily_request_limit: 20,
      period_usage: {
        daily: { request_limit: 20, used_requests: 0 },
        monthly: { quota_limit: 9_000_000, remain_quota: 9_000_000 },
      },
    });
    // A user cannot set their own limits.
    await own.put('/api/user/self', { daily_request_limit: 0 });
    expect((await own.get('/api/user/self')).body.data.daily_request_limit).toBe(20);
  });

  it('takes the zone of the periods as an option and refuses a zone that does not exist', async () => {
    expect(
      (await root.put('/api/option/', { key: 'quota_setting.period_timezone', value: 'Asia/Tokyo' })).body,
    ).toMatchObject({ success: true });
    const refused = await root.put('/api/option/', { key: 'quota_setting.period_timezone', value: 'Asia/Atlantis' });
    expect(refusalOf(refused)).toEqual({ status: 200, success: false, code: 'OPTION_INVALID_TIME_ZONE' });
  });
});
