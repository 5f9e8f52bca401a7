import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { clientsFrom, type DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

// The wallet's top-up information and order history, and an administrator completing a paid order by hand.
const EPAY_KEY = 'merchant-secret';
const PER_UNIT = 500_000;
let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let alice: DashboardClient;
let bob: DashboardClient;
const { user } = clientsFrom(() => gateway.url, '10.61.0');

/** epay's signature, from the protocol: md5 of the sorted non-empty k=v pairs followed by the key. */
function sign(params: Record<string, string>): string {
  const text = Object.keys(params)
    .filter((k) => k !== 'sign' && k !== 'sign_type' && params[k] !== '')
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
  return createHash('md5')
    .update(text + EPAY_KEY)
    .digest('hex');
}

const quotaOf = async (c: DashboardClient) => (await c.get('/api/user/self')).body.data.quota as number;
const topUpLogs = (userId: number) =>
  gateway.store.db.selectFrom('logs').selectAll().where('type', '=', 1).where('user_id', '=', userId).execute();

/** Orders a top-up as the wallet page does; answers the order number. */
async function order(c: DashboardClient, amount: number, method = 'alipay'): Promise<string> {
  const answer = await c.post('/api/user/pay', { amount, payment_method: method });
  expect(answer.body.success, JSON.stringify(answer.body)).toBe(true);
  return answer.body.data.out_trade_no as string;
}

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { TRUST_PROXY: 'true', GLOBAL_API_RATE_LIMIT: '100000' }),
  );
  root = await setupRoot(gateway.url);
  alice = await user('alice');
  bob = await user('bob');
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

describe('top-up information', () => {
  it('says online top-up is off until a payment site is configured, then what it offers', async () => {
    const off = await alice.get('/api/user/topup/info');
    expect(off.body).toMatchObject({ success: true, data: { enable_online_topup: false, enable_stripe_topup: false } });

    await gateway.options.setMany({
      PayAddress: 'https://pay.example.test/',
      EpayId: '1001',
      EpayKey: EPAY_KEY,
      MinTopUp: '3',
      Price: '7',
      'payment_setting.amount_options': JSON.stringify([10, 50, 100]),
      'payment_setting.amount_discount': JSON.stringify({ '100': 0.95 }),
    });
    const on = (await alice.get('/api/user/topup/info')).body.data;
    expect(on).toMatchObject({
      enable_online_topup: true,
      enable_stripe_topup: false,
      enable_creem_topup: false,
      min_topup: 3,
      amount_options: [10, 50, 100],
      discount: { '100': 0.95 },
    });
    expect(on.pay_methods.map((m: { type: string }) => m.type)).toEqual(['alipay', 'wxpay']);
  });

  it('takes only a list of whole amounts as the amount buttons', async () => {
    const refused = await root.put('/api/option/', { key: 'payment_setting.amount_options', value: '["ten"]' });
    expect(refusalOf(refused)).toMatchObject({ status: 200, success: false });
    expect((await alice.get('/api/user/topup/info')).body.data.amount_options).toEqual([10, 50, 100]);
  });

  it('is for signed-in users only', async () => {
    const anonymous = await fetch(`${gateway.url}/api/user/topup/info`);
    expect(anonymous.status).toBe(401);
  });
});

describe('top-up history', () => {
  it("shows a user their own orders, newest first, paged and searchable; an administrator everyone's", async () => {
    const mine = [await order(alice, 5), await order(alice, 6), await order(alice, 7)];
    const bobs = await order(bob, 8);

    const page1 = (await alice.get('/api/user/topup/self?p=1&page_size=2')).body.data;
    expect(page1.total).toBe(3);
    expect(page1.page_size).toBe(2);
    expect(page1.items.map((o: { trade_no: string }) => o.trade_no)).toEqual([mine[2], mine[1]]);
    expect(page1.items[0]).toMatchObject({ amount: 7, money: 49, payment_method: 'alipay', status: 'pending' });
    const page2 = (await alice.get('/api/user/topup/self?p=2&page_size=2')).body.data;
    expect(page2.items.map((o: { trade_no: string }) => o.trade_no)).toEqual([mine[0]]);

    // Searching by part of an order number never reaches another user's orders.
    const part = bobs.slice(-8);
    expect((await alice.get(`/api/user/topup/self?keyword=${part}`)).body.data.total).toBe(0);
    expect((await bob.get(`/api/user/topup/self?keyword=${part}`)).body.data.items).toHaveLength(1);

    const all = (await root.get('/api/user/topup?p=1&page_size=100')).body.data;
    expect(all.items.map((o: { trade_no: string }) => o.trade_no)).toEqual(expect.arrayContaining([...mine, bobs]));
    expect((await root.get(`/api/user/topup?keyword=${part}`)).body.data.items.map((o: any) => o.user_id)).toEqual([
      bob.userId,
    ]);
    // A wildcard in the keyword is taken literally.
    expect((await root.get('/api/user/topup?keyword=%25')).body.data.total).toBe(0);
  });

  it('keeps the list of all orders for administrators', async () => {
    expect(refusalOf(await alice.get('/api/user/topup'))).toMatchObject({ status: 200, success: false });
  });
});

describe('manual completion', () => {
  it('credits a pending order once, in one step, logged as a top-up', async () => {
    const tradeNo = await order(bob, 12);
    const before = await quotaOf(bob);
    const logsBefore = (await topUpLogs(bob.userId!)).length;

    const done = await root.post('/api/user/topup/complete', { trade_no: tradeNo });
    expect(done.body).toMatchObject({ success: true });
    expect(await quotaOf(bob)).toBe(before + 12 * PER_UNIT);
    const logs = await topUpLogs(bob.userId!);
    expect(logs).toHaveLength(logsBefore + 1);
    expect(logs.at(-1)).toMatchObject({ quota: 12 * PER_UNIT, username: 'bob' });
    expect(logs.at(-1)!.content).toContain(tradeNo);
    const row = (await bob.get(`/api/user/topup/self?keyword=${tradeNo}`)).body.data.items[0];
    expect(row.status).toBe('success');
    expect(row.complete_time).toBeGreaterThan(0);

    // Again, or the payment site's late notification: nothing more is credited.
    expect(refusalOf(await root.post('/api/user/topup/complete', { trade_no: tradeNo }))).toEqual({
      status: 200,
      success: false,
      code: 'TOPUP_ORDER_NOT_PENDING',
    });
    const paid = {
      pid: '1001',
      trade_no: 'EPAY-LATE',
      out_trade_no: tradeNo,
      type: 'alipay',
      name: 'TUC12',
      money: '84.00',
      trade_status: 'TRADE_SUCCESS',
    };
    const late = new URLSearchParams({ ...paid, sign: sign(paid), sign_type: 'MD5' });
    expect(await (await fetch(`${gateway.url}/api/user/epay/notify?${late}`)).text()).toBe('success');
    expect(await quotaOf(bob)).toBe(before + 12 * PER_UNIT);
    expect(await topUpLogs(bob.userId!)).toHaveLength(logsBefore + 1);
  });

  it('credits once when several administrators complete the same order at the same time', async () => {
    const tradeNo = await order(alice, 9);
    const before = await quotaOf(alice);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => root.post('/api/user/topup/complete', { trade_no: tradeNo })),
    );
    expect(answers.filter((a) => a.body.success)).toHaveLength(1);
    expect(answers.filter((a) => a.body.code === 'TOPUP_ORDER_NOT_PENDING')).toHaveLength(4);
    expect(await quotaOf(alice)).toBe(before + 9 * PER_UNIT);
  });

  it('refuses unknown orders, bad bodies and non-administrators, changing nothing', async () => {
    expect(refusalOf(await root.post('/api/user/topup/complete', { trade_no: 'NO-SUCH-ORDER' }))).toEqual({
      status: 200,
      success: false,
      code: 'TOPUP_ORDER_NOT_FOUND',
    });
    const empty = await root.post('/api/user/topup/complete', { trade_no: '' });
    expect([empty.status, empty.body.success]).toEqual([200, false]);
    const tradeNo = await order(alice, 4);
    const before = await quotaOf(alice);
    expect(refusalOf(await alice.post('/api/user/topup/complete', { trade_no: tradeNo }))).toMatchObject({
      status: 200,
      success: false,
    });
    expect(await quotaOf(alice)).toBe(before);
    const row = (await alice.get(`/api/user/topup/self?keyword=${tradeNo}`)).body.data.items[0];
    expect(row.status).toBe('pending');
  });
});
