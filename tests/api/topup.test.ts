import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

// Online top-up through epay (spec doc 2 §7): price, order, and the payment site's signed notification.
const EPAY_KEY = 'merchant-secret';
let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;

/** epay's signature, written out here from the protocol: md5 of sorted non-empty k=v pairs + key. */
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

const wallet = async () => (await root.get('/api/user/self')).body.data.quota as number;

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

describe('online top-up', () => {
  it('is refused until a payment site is configured', async () => {
    const answer = await root.post('/api/user/amount', { amount: 10, top_up_code: '' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: false, code: 'TOPUP_DISABLED' });
    expect((await root.get('/api/status')).body.data.enable_online_topup).toBe(false);
  });

  it('prices, orders and credits a paid top-up once', async () => {
    await gateway.options.setMany({
      PayAddress: 'https://pay.example.test/',
      EpayId: '1001',
      EpayKey: EPAY_KEY,
      Price: '7.3',
      MinTopUp: '2',
      ServerAddress: 'https://gate.example.test',
      'payment_setting.amount_discount': JSON.stringify({ '10': 0.9 }),
    });
    expect((await root.get('/api/status')).body.data.enable_online_topup).toBe(true);

    const small = await root.post('/api/user/amount', { amount: 1 });
    expect(small.body).toMatchObject({ success: false, code: 'TOPUP_AMOUNT_TOO_SMALL' });
    expect(small.body.message).toContain('2');
    // 10 × 7.3 × group ratio 1 × discount 0.9
    expect((await root.post('/api/user/amount', { amount: 10 })).body).toMatchObject({ success: true, data: '65.70' });

    const badMethod = await root.post('/api/user/pay', { amount: 10, payment_method: 'bitcoin' });
    expect(badMethod.body).toMatchObject({ success: false, code: 'TOPUP_METHOD_INVALID' });
    const order = await root.post('/api/user/pay', { amount: 10, top_up_code: '', payment_method: 'alipay' });
    expect(order.body).toMatchObject({ success: true, message: 'success', url: 'https://pay.example.test/submit.php' });
    const fields = order.body.data as Record<string, string>;
    expect(fields).toMatchObject({
      pid: '1001',
      type: 'alipay',
      money: '65.70',
      notify_url: 'https://gate.example.test/api/user/epay/notify',
      sign_type: 'MD5',
    });
    expect(fields.sign).toBe(sign(fields));

    const before = await wallet();
    const paid = {
      pid: '1001',
      trade_no: 'EPAY123',
      out_trade_no: fields.out_trade_no!,
      type: 'alipay',
      name: fields.name!,
      money: '65.70',
      trade_status: 'TRADE_SUCCESS',
    };
    const forged = new URLSearchParams({ ...paid, sign: 'not-the-signature', sign_type: 'MD5' });
    expect(await (await fetch(`${gateway.url}/api/user/epay/notify?${forged}`)).text()).toBe('fail');
    expect(await wallet()).toBe(before);

    const signed = new URLSearchParams({ ...paid, sign: sign(paid), sign_type: 'MD5' });
    expect(await (await fetch(`${gateway.url}/api/user/epay/notify?${signed}`)).text()).toBe('success');
    expect(await wallet()).toBe(before + 10 * 500_000);
    // The payment site repeats its notification (here as a form POST): nothing is credited twice.
    const again = await fetch(`${gateway.url}/api/user/epay/notify`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: signed.toString(),
    });
    expect(await again.text()).toBe('success');
    expect(await wallet()).toBe(before + 10 * 500_000);

    const row = await gateway.store.db
      .selectFrom('top_ups')
      .selectAll()
      .where('trade_no', '=', fields.out_trade_no!)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'success', amount: 10, money: 65.7, payment_method: 'alipay' });
    const logs = await gateway.store.db.selectFrom('logs').selectAll().where('type', '=', 1).execute();
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ quota: 10 * 500_000 });
  });
});
