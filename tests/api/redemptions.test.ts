import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedemptionService } from '../../gateway/src/domain/redemptions/index.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let addressCounter = 0;
let userCounter = 0;

/** Each client comes from its own address, so per-IP limits never spill between tests. */
const client = (language = 'en') =>
  new DashboardClient(gateway.url, { 'x-forwarded-for': `10.3.0.${++addressCounter}`, 'accept-language': language });

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { TRUST_PROXY: 'true', GLOBAL_API_RATE_LIMIT: '100000' }),
  );
  root = await setupRoot(gateway.url);
  root.headers['x-forwarded-for'] = '10.3.1.1';
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

async function user(language = 'en'): Promise<DashboardClient> {
  const username = `red${++userCounter}`;
  expect((await client().post('/api/user/register', { username, password: 'password-1' })).body.success).toBe(true);
  const c = client(language);
  expect((await c.login(username, 'password-1')).body.success).toBe(true);
  return c;
}

async function admin(language = 'en'): Promise<DashboardClient> {
  const c = await user(language);
  expect((await root.post('/api/user/manage', { id: c.userId, action: 'promote' })).body.success).toBe(true);
  return c;
}

/** Creates codes as root and answers them with their ids. */
async function codes(body: Record<string, unknown> = {}): Promise<Array<{ id: number; key: string }>> {
  const answer = await root.post('/api/redemption/', { name: 'gift', ...body });
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ success: true });
  const keys = answer.body.data as string[];
  const rows = await db().selectFrom('redemptions').select(['id', 'key']).where('key', 'in', keys).execute();
  return keys.map((key) => ({ key, id: rows.find((r) => r.key === key)!.id }));
}
const code = async (body: Record<string, unknown> = {}) => (await codes(body))[0]!;

const db = () => gateway.store.db;
const codeRow = (id: number) =>
  db().selectFrom('redemptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const quotaOf = async (userId: number) =>
  (await db().selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow()).quota;
const codeCount = async () =>
  Number(
    (
      await db()
        .selectFrom('redemptions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const topupLogs = (userId: number) =>
  db().selectFrom('logs').selectAll().where('user_id', '=', userId).where('type', '=', 1).execute();
const now = () => Math.floor(Date.now() / 1000);

describe('creating codes', () => {
  it('creates one code with the defaults (quota 100000) and answers the list of 32-character keys', async () => {
    const answer = await root.post('/api/redemption/', { name: 'welcome' });
    expect(answer.body).toMatchObject({ success: true, message: 'Redemption codes created' });
    expect(answer.body.data).toHaveLength(1);
    const [key] = answer.body.data;
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    const row = await db().selectFrom('redemptions').selectAll().where('key', '=', key).executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      name: 'welcome',
      quota: 100000,
      status: 1,
      used_user_id: 0,
      redeemed_time: 0,
      expired_time: 0,
      user_id: root.userId,
      deleted_at: null,
    });
  });

  it('creates count codes at once, all different', async () => {
    const answer = await root.post('/api/redemption/', { name: 'batch', quota: 500000, count: 100 });
    const keys = answer.body.data as string[];
    expect(keys).toHaveLength(100);
    expect(new Set(keys).size).toBe(100);
    const rows = await db().selectFrom('redemptions').select(['quota', 'name']).where('key', 'in', keys).execute();
    expect(rows.every((r) => r.quota === 500000 && r.name === 'batch')).toBe(true);
  });

  it('accepts a 20-character name, CJK included, and a future expiry', async () => {
    expect((await root.post('/api/redemption/', { name: 'n'.repeat(20) })).body.success).toBe(true);
    expect((await root.post('/api/redemption/', { name: '码'.repeat(20) })).body.success).toBe(true);
    const [created] = await codes({ expired_time: now() + 3600 });
    expect((await codeRow(created!.id)).expired_time).toBeGreaterThan(now());
  });

  it.each([
    ['no name', { name: undefined }, 'REDEMPTION_NAME_LENGTH', '兑换码名称长度必须在1-20之间'],
    ['an empty name', { name: '' }, 'REDEMPTION_NAME_LENGTH', '兑换码名称长度必须在1-20之间'],
    ['a 21-character name', { name: 'n'.repeat(21) }, 'REDEMPTION_NAME_LENGTH', '兑换码名称长度必须在1-20之间'],
    ['a count of 0', { count: 0 }, 'REDEMPTION_COUNT_NOT_POSITIVE', '兑换码个数必须大于0'],
    ['a negative count', { count: -3 }, 'REDEMPTION_COUNT_NOT_POSITIVE', '兑换码个数必须大于0'],
    ['a count of 101', { count: 101 }, 'REDEMPTION_COUNT_TOO_LARGE', '一次兑换码批量生成的个数不能大于 100'],
    ['a fractional count', { count: 2.5 }, 'INVALID_REQUEST', undefined],
    ['a quota of 0', { quota: 0 }, 'REDEMPTION_QUOTA_INVALID', '兑换码额度必须是大于 0 的整数'],
    ['a negative quota', { quota: -100 }, 'REDEMPTION_QUOTA_INVALID', undefined],
    ['a fractional quota', { quota: 1.5 }, 'REDEMPTION_QUOTA_INVALID', undefined],
    ['a quota as text', { quota: '100' }, 'INVALID_REQUEST', undefined],
    ['a huge quota', { quota: 500_000_000_000_001 }, 'REDEMPTION_QUOTA_TOO_LARGE', undefined],
    ['a past expiry', { expired_time: now() - 10 }, 'EXPIRY_IN_PAST', '过期时间不能早于当前时间'],
    ['an unreadable expiry', { expired_time: 'soon' }, 'EXPIRY_INVALID', '过期时间格式错误！'],
  ])('refuses %s and creates nothing', async (_case, body, code, zhMessage) => {
    const before = await codeCount();
    const answer = await root.call('POST', '/api/redemption/', { name: 'gift', ...body }, { 'accept-language': 'zh' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: false, code });
    if (zhMessage) expect(answer.body.message).toBe(zhMessage);
    expect(await codeCount()).toBe(before);
  });
});

describe('administration is for administrators', () => {
  it('refuses every redemption route to a normal user and changes nothing', async () => {
    const alice = await user();
    const target = await code();
    const before = await codeRow(target.id);
    const countBefore = await codeCount();
    const attempts = [
      await alice.get('/api/redemption/'),
      await alice.get('/api/redemption/search?keyword=gift'),
      await alice.get(`/api/redemption/${target.id}`),
      await alice.post('/api/redemption/', { name: 'mine', quota: 1_000_000, count: 5 }),
      await alice.put('/api/redemption/', { id: target.id, quota: 1 }),
      await alice.put('/api/redemption/?status_only=true', { id: target.id, status: 2 }),
      await alice.delete(`/api/redemption/${target.id}`),
      await alice.delete('/api/redemption/invalid'),
    ];
    for (const attempt of attempts) {
      expect(attempt.status).toBe(200);
      expect(attempt.body).toMatchObject({ success: false, code: 'FORBIDDEN' });
      expect(attempt.body.data).toBeUndefined();
    }
    expect(await codeRow(target.id)).toEqual(before);
    expect(await codeCount()).toBe(countBefore);
    expect((await client().get('/api/redemption/')).status).toBe(401);
  });

  it('lets an administrator (not only root) manage codes', async () => {
    const manager = await admin();
    const answer = await manager.post('/api/redemption/', { name: 'by-admin' });
    expect(answer.body.success).toBe(true);
    expect((await manager.get('/api/redemption/search?keyword=by-admin')).body.data.total).toBe(1);
  });
});

describe('listing, searching and getting', () => {
  it('lists codes newest first with {items, page, page_size, total}, paged', async () => {
    await codes({ name: 'page-test', count: 3 });
    const first = await root.get('/api/redemption/?p=1&page_size=2');
    expect(first.body.data).toMatchObject({ page: 1, page_size: 2 });
    expect(first.body.data.items).toHaveLength(2);
    const ids = first.body.data.items.map((c: { id: number }) => c.id);
    expect(ids[0]).toBeGreaterThan(ids[1]);
    expect(first.body.data.total).toBe(await codeCount());
    expect(first.body.data.items[0]).toMatchObject({ name: 'page-test', status: 1, used_user_id: 0 });
    expect(first.body.data.items[0].key).toMatch(/^[0-9a-f]{32}$/);
  });

  it('searches by id and by part of the name', async () => {
    const target = await code({ name: 'findme-xyz' });
    await code({ name: 'other-xyz' });
    const byName = await root.get('/api/redemption/search?keyword=findme');
    expect(byName.body.data.items.map((c: { id: number }) => c.id)).toEqual([target.id]);
    const byId = await root.get(`/api/redemption/search?keyword=${target.id}`);
    expect(byId.body.data.items.map((c: { id: number }) => c.id)).toContain(target.id);
    const both = await root.get('/api/redemption/search?keyword=xyz&p=1&page_size=1');
    expect(both.body.data).toMatchObject({ total: 2, page_size: 1 });
    expect((await root.get('/api/redemption/search?keyword=nothing-like-this')).body.data).toMatchObject({
      total: 0,
      items: [],
    });
  });

  it('gets one code; a missing or bad id is an error', async () => {
    const target = await code({ name: 'one', quota: 777 });
    expect((await root.get(`/api/redemption/${target.id}`)).body.data).toMatchObject({
      id: target.id,
      key: target.key,
      name: 'one',
      quota: 777,
      status: 1,
    });
    const missing = await root.get('/api/redemption/999999');
    expect(missing.status).toBe(200);
    expect(missing.body.code).toBe('REDEMPTION_NOT_FOUND');
    expect((await root.get('/api/redemption/x')).body.code).toBe('INVALID_REQUEST');
  });
});

describe('updating', () => {
  it('edits name, quota and expiry of an unused code', async () => {
    const target = await code();
    const expiry = now() + 86_400;
    const answer = await root.put('/api/redemption/', {
      id: target.id,
      name: 'renamed',
      quota: 1234,
      expired_time: expiry,
    });
    expect(answer.body).toMatchObject({
      success: true,
      message: 'Redemption code updated',
      data: { id: target.id, name: 'renamed', quota: 1234, expired_time: expiry, status: 1 },
    });
    expect(await codeRow(target.id)).toMatchObject({ name: 'renamed', quota: 1234, expired_time: expiry });
  });

  it.each([
    ['an empty name', { name: '' }, 'REDEMPTION_NAME_LENGTH'],
    ['a 21-character name', { name: 'x'.repeat(21) }, 'REDEMPTION_NAME_LENGTH'],
    ['a quota of 0', { quota: 0 }, 'REDEMPTION_QUOTA_INVALID'],
    ['a past expiry', { expired_time: now() - 100 }, 'EXPIRY_IN_PAST'],
    ['no id', { id: undefined }, 'INVALID_REQUEST'],
  ])('refuses %s and changes nothing', async (_case, body, errorCode) => {
    const target = await code();
    const before = await codeRow(target.id);
    const answer = await root.put('/api/redemption/', { id: target.id, ...body });
    expect(answer.body).toMatchObject({ success: false, code: errorCode });
    expect(await codeRow(target.id)).toEqual(before);
  });

  it('refuses to edit a used or disabled code', async () => {
    const used = await code();
    const disabled = await code();
    const alice = await user();
    expect((await alice.post('/api/user/topup', { key: used.key })).body.success).toBe(true);
    await root.put('/api/redemption/?status_only=true', { id: disabled.id, status: 2 });
    for (const target of [used, disabled]) {
      const before = await codeRow(target.id);
      const answer = await root.put('/api/redemption/', { id: target.id, quota: 99_999_999 });
      expect(answer.body).toMatchObject({ success: false, code: 'REDEMPTION_NOT_EDITABLE' });
      expect(await codeRow(target.id)).toEqual(before);
    }
    expect(refusalOf(await root.put('/api/redemption/', { id: 999999, name: 'x' }))).toMatchObject({
      status: 200,
      success: false,
    });
  });

  it('disables and enables a code with status_only; a used code can be neither', async () => {
    const target = await code();
    const disabled = await root.put('/api/redemption/?status_only=true', { id: target.id, status: 2, quota: 5 });
    expect(disabled.body.data).toMatchObject({ status: 2, quota: 100000 });
    expect((await root.put('/api/redemption/?status_only=true', { id: target.id, status: 1 })).body.data.status).toBe(
      1,
    );

    const used = await code();
    await (await user()).post('/api/user/topup', { key: used.key });
    const enable = await root.call(
      'PUT',
      '/api/redemption/?status_only=true',
      { id: used.id, status: 1 },
      { 'accept-language': 'zh' },
    );
    expect(enable.body).toEqual({
      success: false,
      code: 'REDEMPTION_USED_CANNOT_ENABLE',
      message: '兑换码已被使用，无法启用',
    });
    const disable = await root.put('/api/redemption/?status_only=true', { id: used.id, status: 2 });
    expect(disable.body.code).toBe('REDEMPTION_USED_CANNOT_DISABLE');
    expect((await codeRow(used.id)).status).toBe(3);
    const invalid = await root.put('/api/redemption/?status_only=true', { id: target.id, status: 3 });
    expect(invalid.body.code).toBe('REDEMPTION_STATUS_INVALID');
    expect((await codeRow(target.id)).status).toBe(1);
  });
});

describe('deleting', () => {
  it('deletes a code (with or without the trailing slash); it can no longer be got or redeemed', async () => {
    const first = await code();
    const second = await code();
    expect((await root.delete(`/api/redemption/${first.id}`)).body).toEqual({
      success: true,
      message: 'Redemption code deleted',
    });
    expect((await root.delete(`/api/redemption/${second.id}/`)).body.success).toBe(true);
    expect(refusalOf(await root.get(`/api/redemption/${first.id}`))).toMatchObject({ status: 200, success: false });
    expect(refusalOf(await root.delete(`/api/redemption/${first.id}`))).toMatchObject({ status: 200, success: false });
    const alice = await user();
    expect((await alice.post('/api/user/topup', { key: first.key })).body.code).toBe('REDEEM_KEY_INVALID');
    expect(await quotaOf(alice.userId!)).toBe(0);
  });

  it('deletes every used, disabled and expired code and answers the count (DELETE /api/redemption/invalid)', async () => {
    const used = await code();
    const disabled = await code();
    const expired = await code();
    const fine = await code();
    const later = await code({ expired_time: now() + 3600 });
    await (await user()).post('/api/user/topup', { key: used.key });
    await root.put('/api/redemption/?status_only=true', { id: disabled.id, status: 2 });
    await db()
      .updateTable('redemptions')
      .set({ expired_time: now() - 5 })
      .where('id', '=', expired.id)
      .execute();
    const invalidBefore = await db()
      .selectFrom('redemptions')
      .select('id')
      .where('deleted_at', 'is', null)
      .where((eb) =>
        eb.or([eb('status', '<>', 1), eb.and([eb('expired_time', '<>', 0), eb('expired_time', '<=', now())])]),
      )
      .execute();
    expect(invalidBefore.map((r) => r.id)).toEqual(expect.arrayContaining([used.id, disabled.id, expired.id]));
    const answer = await root.delete('/api/redemption/invalid');
    expect(answer.body).toMatchObject({ success: true, data: invalidBefore.length });
    for (const gone of [used, disabled, expired]) expect((await codeRow(gone.id)).deleted_at).not.toBeNull();
    for (const kept of [fine, later]) expect((await codeRow(kept.id)).deleted_at).toBeNull();
    expect((await root.delete('/api/redemption/invalid')).body.data).toBe(0);
  });
});

describe('redeeming (POST /api/user/topup)', () => {
  it('adds the quota to the wallet, marks the code used and writes a top-up log', async () => {
    const alice = await user('zh');
    const target = await code({ quota: 100000 });
    const answer = await alice.post('/api/user/topup', { key: target.key });
    expect(answer.body).toEqual({ success: true, message: '兑换成功！', data: 100000 });
    expect(await quotaOf(alice.userId!)).toBe(100000);
    const row = await codeRow(target.id);
    expect(row).toMatchObject({ status: 3, used_user_id: alice.userId });
    expect(Math.abs(row.redeemed_time - now())).toBeLessThan(5);
    const logs = await topupLogs(alice.userId!);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      type: 1,
      quota: 100000,
      username: `red${userCounter}`,
      content: `通过兑换码充值 ＄0.200000 额度，兑换码ID ${target.id}`,
    });
    // The wallet shows it.
    expect((await alice.get('/api/user/self')).body.data.quota).toBe(100000);
    // The code shows who used it.
    expect((await root.get(`/api/redemption/${target.id}`)).body.data).toMatchObject({
      status: 3,
      used_user_id: alice.userId,
    });
  });

  it('writes points instead of dollars when the site does not show currency', async () => {
    await gateway.options.set('DisplayInCurrencyEnabled', 'false');
    try {
      const alice = await user();
      const target = await code({ quota: 2500 });
      expect((await alice.post('/api/user/topup', { key: ` ${target.key} ` })).body.data).toBe(2500);
      expect((await topupLogs(alice.userId!))[0]?.content).toBe(`通过兑换码充值 2500 点额度，兑换码ID ${target.id}`);
    } finally {
      await gateway.options.set('DisplayInCurrencyEnabled', 'true');
    }
  });

  it.each([
    ['an empty key', { key: '' }, 'REDEEM_KEY_REQUIRED', '请输入兑换码！'],
    ['a blank key', { key: '   ' }, 'REDEEM_KEY_REQUIRED', '请输入兑换码！'],
    ['no key', {}, 'REDEEM_KEY_REQUIRED', '请输入兑换码！'],
    ['an unknown key', { key: 'f'.repeat(32) }, 'REDEEM_KEY_INVALID', '无效的兑换码'],
    ['a number', { key: 42 }, 'INVALID_REQUEST', undefined],
  ])('refuses %s with a clear message and adds nothing', async (_case, body, errorCode, zhMessage) => {
    const alice = await user('zh');
    const answer = await alice.post('/api/user/topup', body);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: false, code: errorCode });
    if (zhMessage) expect(answer.body.message).toBe(zhMessage);
    expect(await quotaOf(alice.userId!)).toBe(0);
    expect(await topupLogs(alice.userId!)).toEqual([]);
  });

  it('refuses a used, a disabled and an expired code, each with its own code, and adds nothing', async () => {
    const alice = await user('zh');
    const bob = await user('zh');
    const used = await code();
    const disabled = await code();
    const expired = await code();
    expect((await alice.post('/api/user/topup', { key: used.key })).body.success).toBe(true);
    await root.put('/api/redemption/?status_only=true', { id: disabled.id, status: 2 });
    await db()
      .updateTable('redemptions')
      .set({ expired_time: now() - 1 })
      .where('id', '=', expired.id)
      .execute();
    const cases: Array<[string, string, string]> = [
      [used.key, 'REDEEM_KEY_USED', '该兑换码已被使用'],
      [disabled.key, 'REDEEM_KEY_DISABLED', '该兑换码已被禁用'],
      [expired.key, 'REDEEM_KEY_EXPIRED', '该兑换码已过期'],
    ];
    for (const [key, errorCode, message] of cases) {
      expect((await bob.post('/api/user/topup', { key })).body).toEqual({ success: false, code: errorCode, message });
    }
    // The same user cannot redeem a code twice either.
    expect((await alice.post('/api/user/topup', { key: used.key })).body.code).toBe('REDEEM_KEY_USED');
    expect(await quotaOf(bob.userId!)).toBe(0);
    expect(await quotaOf(alice.userId!)).toBe(100000);
    expect((await codeRow(used.id)).used_user_id).toBe(alice.userId);
    expect((await codeRow(expired.id)).status).toBe(1);
  });

  it('needs a signed-in user', async () => {
    const target = await code();
    expect((await client().post('/api/user/topup', { key: target.key })).status).toBe(401);
    expect((await codeRow(target.id)).status).toBe(1);
  });

  it('uses a code exactly once when two users redeem it with 20 racing requests', async () => {
    const alice = await user();
    const bob = await user();
    const target = await code({ quota: 300000 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? alice : bob).post('/api/user/topup', { key: target.key })),
    );
    const winners = answers.filter((a) => a.body.success);
    expect(winners).toHaveLength(1);
    expect(winners[0]!.body.data).toBe(300000);
    const losers = answers.filter((a) => !a.body.success);
    expect(losers).toHaveLength(19);
    for (const loser of losers) expect(loser.body.code).toBe('REDEEM_KEY_USED');
    const row = await codeRow(target.id);
    expect(row.status).toBe(3);
    const winner = row.used_user_id === alice.userId ? alice : bob;
    const loser = winner === alice ? bob : alice;
    expect(await quotaOf(winner.userId!)).toBe(300000);
    expect(await quotaOf(loser.userId!)).toBe(0);
    const logs = await db()
      .selectFrom('logs')
      .selectAll()
      .where('type', '=', 1)
      .where('content', 'like', `%兑换码ID ${target.id}`)
      .execute();
    expect(logs).toHaveLength(1);
    expect(logs[0]!.user_id).toBe(winner.userId);
  });
});

describe('the generic list for the REST dialect', () => {
  it('filters, sorts by whitelisted fields and windows; only administrators may call it', async () => {
    const redemptions = new RedemptionService({ db: db(), options: gateway.options });
    const created = await codes({ name: 'rest-list', count: 3 });
    await root.put('/api/redemption/', { id: created[0]!.id, quota: 300 });
    await root.put('/api/redemption/', { id: created[1]!.id, quota: 100 });
    await root.put('/api/redemption/', { id: created[2]!.id, quota: 200 });
    const actor = { id: root.userId!, role: 100 };
    const quotas = (r: { items: Array<{ quota: number }> }) => r.items.map((c) => c.quota);
    const sorted = await redemptions.list(
      { filters: { name: 'rest-list' }, sort: { field: 'quota', order: 'ASC' }, offset: 0, limit: 10 },
      actor,
    );
    expect(quotas(sorted)).toEqual([100, 200, 300]);
    expect(sorted.total).toBe(3);
    const window = await redemptions.list(
      { filters: { name: 'rest-list' }, sort: { field: 'quota', order: 'DESC' }, offset: 1, limit: 1 },
      actor,
    );
    expect(window).toMatchObject({ total: 3, items: [{ quota: 200 }] });
    const byIds = await redemptions.list({ filters: { id: [created[1]!.id] }, offset: 0, limit: 10 }, actor);
    expect(quotas(byIds)).toEqual([100]);
    await expect(
      redemptions.list({ sort: { field: 'key', order: 'ASC' }, offset: 0, limit: 10 }, actor),
    ).rejects.toMatchObject({ code: 'SORT_FIELD_UNSUPPORTED' });
    await expect(redemptions.list({ offset: 0, limit: 10 }, { id: 5, role: 1 })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
  });
});
