import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ContractGateway,
  expectOk,
  expectPage,
  expectRefusal,
  expectShape,
  type FrontEnd,
  type Shape,
  startContractGateway,
} from './support.ts';

/** Redemption codes (admin) and the wallet: redeem, price and order a top-up (CATALOGUE.md "Redemption codes", "Personal settings, wallet"). */

let g: ContractGateway;
let root: FrontEnd;

beforeAll(async () => {
  g = await startContractGateway('10.44.0');
  root = g.root;
});

afterAll(async () => {
  await g?.stop();
});

/** RedemptionsColumnDefs.jsx, useRedemptionsData.jsx `handleRow`. */
const CODE: Shape = {
  id: 'integer',
  name: 'string',
  key: 'string',
  status: 'integer',
  quota: 'integer',
  created_time: 'integer',
  redeemed_time: 'integer',
  used_user_id: 'integer',
  expired_time: 'integer',
};

/** EditRedemptionModal.jsx `submit` for new codes. */
const createForm = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  quota: 100000,
  amount: 0.2,
  count: 1,
  expired_time: 0,
  ...extra,
});

async function createCodes(name: string, count = 1, quota = 100000): Promise<string[]> {
  const keys = expectOk(
    await root.post('/api/redemption/', createForm(name, { count, quota, amount: quota / 500000 })),
  );
  expect(Array.isArray(keys)).toBe(true);
  expect(keys).toHaveLength(count);
  for (const key of keys) expect(typeof key).toBe('string');
  return keys;
}

const idOf = async (name: string): Promise<number> => {
  const data = expectOk(await root.get(`/api/redemption/search?keyword=${name}&p=1&page_size=10`));
  const found = (data.items as any[]).find((r) => r.name === name);
  expect(found, `${name} found`).toBeDefined();
  return found.id;
};

describe('redemption codes (useRedemptionsData.jsx, EditRedemptionModal.jsx)', () => {
  it('creates codes with the drawer body and answers the list of keys', async () => {
    const keys = await createCodes('batch', 3);
    expect(new Set(keys).size).toBe(3);
  });

  it('answers a page of codes and a search with the fields the table reads', async () => {
    await createCodes('listed');
    const items = expectPage(expectOk(await root.get('/api/redemption/?p=1&page_size=10')), CODE);
    expect(items.length).toBeGreaterThan(0);
    const found = expectPage(expectOk(await root.get('/api/redemption/search?keyword=listed&p=1&page_size=10')), CODE);
    expect(found.map((r) => r.name)).toEqual(['listed']);
    expect(found[0]).toMatchObject({ status: 1, used_user_id: 0, expired_time: 0 });
  });

  it('loads a code for the drawer and saves the drawer body back', async () => {
    await createCodes('editable');
    const id = await idOf('editable');
    const code = expectOk(await root.get(`/api/redemption/${id}`));
    expectShape(code, { name: 'string', quota: 'integer', expired_time: 'integer' }, 'code');
    const expires = Math.floor(Date.now() / 1000) + 86400;
    expectOk(
      await root.put('/api/redemption/', {
        name: 'edited',
        quota: 200000,
        amount: 0.4,
        count: 1,
        expired_time: expires,
        id,
      }),
    );
    expect(expectOk(await root.get(`/api/redemption/${id}`))).toMatchObject({
      name: 'edited',
      quota: 200000,
      expired_time: expires,
    });
  });

  it('answers data.status for disable and enable (status_only)', async () => {
    await createCodes('toggled');
    const id = await idOf('toggled');
    expect(expectOk(await root.put('/api/redemption/?status_only=true', { id, status: 2 })).status).toBe(2);
    expect(expectOk(await root.put('/api/redemption/?status_only=true', { id, status: 1 })).status).toBe(1);
  });

  it('deletes one code, and clears the invalid ones answering their number', async () => {
    await createCodes('deleted');
    expectOk(await root.delete(`/api/redemption/${await idOf('deleted')}/`));
    await createCodes('invalid');
    expectOk(await root.put('/api/redemption/?status_only=true', { id: await idOf('invalid'), status: 2 }));
    const cleared = expectOk(await root.delete('/api/redemption/invalid'));
    expect(Number.isInteger(cleared)).toBe(true);
    expect(cleared).toBeGreaterThanOrEqual(1);
  });

  it('refuses a long name, a zero count and more than 100 codes as business refusals', async () => {
    expectRefusal(await root.post('/api/redemption/', createForm('n'.repeat(21))));
    expectRefusal(await root.post('/api/redemption/', createForm('zero', { count: 0 })));
    expectRefusal(await root.post('/api/redemption/', createForm('many', { count: 101 })));
  });

  it('refuses a normal user as a business refusal', async () => {
    const c = await g.user('red-user');
    expectRefusal(await c.get('/api/redemption/?p=1&page_size=10'));
    expectRefusal(await c.post('/api/redemption/', createForm('mine')));
  });
});

describe('redeeming in the wallet (topup/index.jsx topUp)', () => {
  it('POST /api/user/topup answers the quota added as a number, which the balance shows', async () => {
    const [key] = await createCodes('wallet', 1, 250000);
    const c = await g.user('wal1');
    const before = expectOk(await c.get('/api/user/self')).quota as number;
    const added = expectOk(await c.post('/api/user/topup', { key }));
    expect(added).toBe(250000);
    expect(expectOk(await c.get('/api/user/self')).quota).toBe(before + added);
  });

  it('refuses a used code, an unknown code and an empty code as business refusals', async () => {
    const [key] = await createCodes('wallet-2');
    const c = await g.user('wal2');
    expectOk(await c.post('/api/user/topup', { key }));
    expectRefusal(await c.post('/api/user/topup', { key }));
    expectRefusal(await c.post('/api/user/topup', { key: 'no-such-code-at-all-0000000000000' }));
    expectRefusal(await c.post('/api/user/topup', { key: '' }));
  });
});

describe('online top-up (topup/index.jsx getAmount, onlineTopUp)', () => {
  it('refuses pricing while online top-up is off, with a message and a data string the toast shows', async () => {
    const c = await g.user('pay0');
    const answer = await c.post('/api/user/amount', { amount: 10 });
    expectRefusal(answer);
    expect(answer.body.message).not.toBe('success');
    // The page toasts '错误：' + data when message is not 'success'.
    expect(typeof answer.body.data, JSON.stringify(answer.body)).toBe('string');
  });

  it("prices and orders with the current page's body and the spec's, answering message 'success'", async () => {
    for (const [key, value] of Object.entries({
      PayAddress: 'https://pay.example.test/',
      EpayId: '1001',
      EpayKey: 'merchant-secret',
      Price: '7.3',
      MinTopUp: '1',
      ServerAddress: 'https://gate.example.test',
      PayMethods: JSON.stringify([{ name: 'Alipay', type: 'alipay', color: 'blue' }]),
    })) {
      expectOk(await root.put('/api/option/', { key, value }));
    }
    expect(expectOk(await g.visitor().get('/api/status')).enable_online_topup).toBe(true);
    const c = await g.user('pay1');
    for (const body of [{ amount: 10 }, { amount: 10, top_up_code: '' }]) {
      const priced = await c.post('/api/user/amount', body);
      expect(priced.body.message, JSON.stringify(priced.body)).toBe('success');
      expect(Number.parseFloat(expectOk(priced))).toBeCloseTo(73, 5);
    }
    for (const body of [
      { amount: 10, payment_method: 'alipay' },
      { amount: 10, top_up_code: '', payment_method: 'alipay' },
    ]) {
      const order = await c.post('/api/user/pay', body);
      expect(order.body.message, JSON.stringify(order.body)).toBe('success');
      expect(expectOk(order)).toBeTypeOf('object');
      expect(typeof order.body.url).toBe('string');
      expect(order.body.url.length).toBeGreaterThan(0);
    }
  });

  it('refuses an amount below the minimum as a business refusal', async () => {
    expectOk(await root.put('/api/option/', { key: 'MinTopUp', value: '5' }));
    const c = await g.user('pay2');
    expectRefusal(await c.post('/api/user/amount', { amount: 1 }));
    expectRefusal(await c.post('/api/user/pay', { amount: 1, payment_method: 'alipay' }));
  });
});
