import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { clientsFrom, type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';

// new-api's front end adjusts quota with POST /api/user/manage {action: 'add_quota', mode, value}
// (web/src/components/table/users/modals/EditUserModal.jsx; web/default/src/features/users/types.ts,
// components/user-quota-dialog.tsx) and
// prices every consume log row from its `other` (web/src/hooks/usage-logs/useUsageLogsData.jsx).

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let upstream: MockOpenAI;
const { user } = clientsFrom(() => gateway.url, '10.13.1');
let counter = 0;

beforeAll(async () => {
  upstream = await startMockOpenAI();
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace(), { TRUST_PROXY: 'true' }));
  root = await setupRoot(gateway.url);
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await upstream?.close();
});

const db = () => gateway.store.db;
const account = (id: number) =>
  db()
    .selectFrom('users')
    .select(['quota', 'used_quota', 'role', 'status'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
const manageLogs = (userId: number) =>
  db()
    .selectFrom('logs')
    .select(['content', 'other', 'quota', 'username'])
    .where('user_id', '=', userId)
    .where('type', '=', 3)
    .orderBy('id')
    .execute();

/** A user with a known balance and spending, so every change can be checked against the books. */
async function funded(quota: number): Promise<DashboardClient> {
  const c = await user(`quota${++counter}`);
  await db().updateTable('users').set({ quota, used_quota: 777 }).where('id', '=', c.userId!).execute();
  return c;
}

const adjust = (actor: DashboardClient, id: number, mode: unknown, value: unknown) =>
  actor.post('/api/user/manage', { id, action: 'add_quota', mode, value });

describe('POST /api/user/manage add_quota', () => {
  it('adds, subtracts and overrides the quota, writing a management log naming the administrator', async () => {
    const target = await funded(10_000);
    const id = target.userId!;

    const added = await adjust(root, id, 'add', 2_500);
    expect(added.body).toMatchObject({ success: true, data: { status: 1, role: 1, quota: 12_500 } });
    expect(await account(id)).toMatchObject({ quota: 12_500, used_quota: 777 });

    expect((await adjust(root, id, 'subtract', 500)).body).toMatchObject({ success: true, data: { quota: 12_000 } });
    expect(await account(id)).toMatchObject({ quota: 12_000, used_quota: 777 });

    expect((await adjust(root, id, 'override', 3_000)).body).toMatchObject({ success: true, data: { quota: 3_000 } });
    expect(await account(id)).toMatchObject({ quota: 3_000, used_quota: 777 });

    const { username } = await db()
      .selectFrom('users')
      .select('username')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const logs = await manageLogs(id);
    expect(logs.map((l) => l.content)).toEqual([
      '管理员 root 为用户增加额度 2500',
      '管理员 root 为用户减少额度 500',
      '管理员 root 将用户额度从 12000 覆盖为 3000',
    ]);
    for (const log of logs) {
      // new-api's log view shows the operator from other.admin_info; a management log spends nothing.
      expect(JSON.parse(log.other)).toEqual({ admin_info: { admin_id: root.userId, admin_username: 'root' } });
      expect(log).toMatchObject({ quota: 0, username });
    }
    // The user sees the new balance.
    expect((await target.get('/api/user/self')).body.data).toMatchObject({ quota: 3_000, used_quota: 777 });
  });

  it('applies a submit once per idempotency key, however often or concurrently it arrives', async () => {
    const c = await funded(1000);
    const submit = (key: string) =>
      root.post('/api/user/manage', {
        id: c.userId,
        action: 'add_quota',
        mode: 'add',
        value: 250,
        idempotency_key: key,
      });
    const answers = await Promise.all([submit('dialog-1_a'), submit('dialog-1_a'), submit('dialog-1_a')]);
    expect(answers.map((a) => a.body.success)).toEqual([true, true, true]);
    expect(answers.map((a) => a.body.data.quota)).toEqual([1250, 1250, 1250]);
    // Another key is another change; a key that differs only where LIKE has a wildcard is another key too.
    expect((await submit('dialog-2')).body.data.quota).toBe(1500);
    expect((await submit('dialog-1xa')).body.data.quota).toBe(1750);
    expect(await account(c.userId!)).toMatchObject({ quota: 1750 });
    expect(await manageLogs(c.userId!)).toHaveLength(3);
    expect(JSON.parse((await manageLogs(c.userId!))[0]!.other)).toMatchObject({ idempotency_key: 'dialog-1_a' });
    const bad = await root.post('/api/user/manage', {
      id: c.userId,
      action: 'add_quota',
      mode: 'add',
      value: 1,
      idempotency_key: 'has space',
    });
    expect(bad.body).toMatchObject({ success: false, code: 'INVALID_REQUEST' });
  });

  it('may take a balance below zero, as new-api does, and sets it back with override', async () => {
    const target = await funded(100);
    expect((await adjust(root, target.userId!, 'subtract', 300)).body).toMatchObject({
      success: true,
      data: { quota: -200 },
    });
    expect((await adjust(root, target.userId!, 'override', 0)).body).toMatchObject({
      success: true,
      data: { quota: 0 },
    });
  });

  it('counts quota that pods hold as leases: override sets what the user may spend in all', async () => {
    const target = await funded(10_000);
    const id = target.userId!;
    // A pod took 4000 of the balance into a lease (the ledger's books: stored balance + leases).
    await db().updateTable('users').set({ quota: 6_000 }).where('id', '=', id).execute();
    const now = Math.floor(Date.now() / 1000);
    await db()
      .insertInto('quota_leases')
      .values({
        id: `test-lease-${id}`,
        account_type: 'user',
        account_id: id,
        holder: 'another-pod',
        amount: 4_000,
        created_at: now,
        expires_at: now + 3_600,
      })
      .execute();
    expect((await adjust(root, id, 'add', 1_000)).body.data.quota).toBe(11_000);
    expect((await adjust(root, id, 'override', 5_000)).body.data.quota).toBe(5_000);
    // The lease stays the pod's; the stored balance holds the rest.
    expect((await account(id)).quota).toBe(1_000);
    expect((await manageLogs(id)).at(-1)?.content).toBe('管理员 root 将用户额度从 11000 覆盖为 5000');
    await db().deleteFrom('quota_leases').where('id', '=', `test-lease-${id}`).execute();
  });

  it.each([
    ['an unknown mode', 'multiply', 100, 'QUOTA_MODE_INVALID'],
    ['no mode', undefined, 100, 'QUOTA_MODE_INVALID'],
    ['adding nothing', 'add', 0, 'QUOTA_CHANGE_NOT_POSITIVE'],
    ['subtracting a negative amount', 'subtract', -5, 'QUOTA_CHANGE_NOT_POSITIVE'],
    ['a fractional amount', 'add', 1.5, 'QUOTA_NOT_INTEGER'],
    ['no amount', 'override', undefined, 'QUOTA_NOT_INTEGER'],
    ['an amount as text', 'add', '100', 'INVALID_REQUEST'],
  ])('refuses %s and changes nothing', async (_name, mode, value, code) => {
    const target = await funded(5_000);
    expect((await adjust(root, target.userId!, mode, value)).body).toMatchObject({ success: false, code });
    expect((await account(target.userId!)).quota).toBe(5_000);
    expect(await manageLogs(target.userId!)).toEqual([]);
  });

  it('refuses an administrator acting on a user of the same or a higher level, and an unknown user', async () => {
    const adminClient = await funded(0);
    await root.post('/api/user/manage', { id: adminClient.userId, action: 'promote' });
    const peer = await funded(1_000);
    await root.post('/api/user/manage', { id: peer.userId, action: 'promote' });
    expect((await adjust(adminClient, peer.userId!, 'add', 10)).body).toMatchObject({
      success: false,
      code: 'SAME_OR_HIGHER_LEVEL',
    });
    expect((await adjust(adminClient, root.userId!, 'override', 10)).body).toMatchObject({
      success: false,
      code: 'SAME_OR_HIGHER_LEVEL',
    });
    expect((await adjust(root, 999_999, 'add', 10)).body).toMatchObject({ success: false, code: 'USER_NOT_FOUND' });
    expect((await account(peer.userId!)).quota).toBe(1_000);
    const plain = await funded(1_000);
    expect((await adjust(plain, peer.userId!, 'add', 10)).body).toMatchObject({ success: false, code: 'FORBIDDEN' });
  });

  it('still serves every other action the front end sends, answering status and role', async () => {
    const target = await funded(0);
    const id = target.userId!;
    const steps = [
      ['promote', { role: 10, status: 1 }],
      ['demote', { role: 1, status: 1 }],
      ['disable', { role: 1, status: 2 }],
      ['enable', { role: 1, status: 1 }],
    ] as const;
    for (const [action, data] of steps) {
      expect((await root.post('/api/user/manage', { id, action })).body, action).toMatchObject({ success: true, data });
      expect(await account(id)).toMatchObject(data);
    }
    expect((await root.post('/api/user/manage', { id, action: 'delete' })).body.success).toBe(true);
    expect((await root.post('/api/user/manage', { id, action: 'explode' })).body).toMatchObject({
      success: false,
      code: 'INVALID_ACTION',
    });
  });
});

describe('channel-test rows of the usage log carry what the log view prices them with', () => {
  async function testedChannel(model: string): Promise<number> {
    const created = await root.post('/api/channel/', {
      name: `tested-${++counter}`,
      key: 'sk-good',
      base_url: upstream.url,
      models: model,
    });
    expect(created.body, JSON.stringify(created.body)).toMatchObject({ success: true });
    const id: number = created.body.data.id;
    expect((await root.get(`/api/channel/test/${id}`)).body).toMatchObject({ success: true });
    return id;
  }

  const testRow = (channel: number) =>
    expect.poll(
      async () =>
        (await root.get(`/api/log/?p=1&page_size=10&type=2&channel=${channel}`)).body.data.items.find(
          (l: { token_name: string }) => l.token_name === '模型测试',
        ),
      { timeout: 10_000 },
    );

  it.each([
    ['a priced model', 'priced-model', { 'priced-model': 0.5 }],
    ['a model without a price', 'unpriced-model', {}],
  ])(
    '%s: ratios are numbers, the row names its user, and the price the front end computes is finite',
    async (_name, model, ratios) => {
      await gateway.options.set('ModelRatio', JSON.stringify(ratios));
      const channel = await testedChannel(model);
      await testRow(channel).toBeDefined();
      const row = (await root.get(`/api/log/?p=1&page_size=10&type=2&channel=${channel}`)).body.data.items[0];
      expect(row).toMatchObject({ username: 'root', user_id: root.userId, quota: 0, model_name: model });
      const other = JSON.parse(row.other);
      for (const key of [
        'model_ratio',
        'group_ratio',
        'completion_ratio',
        'cache_ratio',
        'model_price',
        'user_group_ratio',
      ]) {
        expect(typeof other[key], key).toBe('number');
      }
      if (model in ratios) expect(other.model_ratio).toBe(0.5);
      expect(other.model_price).toBe(-1);
      // "Input $x / 1M tokens": model_ratio × 2 × group_ratio, as the classic log view renders it.
      expect(Number.isFinite(other.model_ratio * 2 * other.group_ratio)).toBe(true);
      expect(other.admin_info).toEqual({ use_channel: [String(channel)] });
    },
  );
});
