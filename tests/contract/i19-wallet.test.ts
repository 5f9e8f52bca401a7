import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addQuotaData } from '../../gateway/src/store/repositories/quota-data.ts';
import {
  type ContractGateway,
  expectOk,
  expectPage,
  expectRefusal,
  expectShape,
  type FrontEnd,
  query,
  type Shape,
  startContractGateway,
} from './support.ts';

/**
 * Dashboards data, wallet history and prefill groups (CATALOGUE.md "Issue 19: dashboards data, wallet
 * history, prefill groups"), called as new-api's front end calls them.
 */

let g: ContractGateway;
let root: FrontEnd;
let alice: FrontEnd;
const T0 = 1_700_002_800;

beforeAll(async () => {
  g = await startContractGateway('10.119.0');
  root = g.root;
  alice = await g.user('alice');
  const db = g.gateway.store.db;
  await db
    .insertInto('logs')
    .values({
      user_id: alice.userId!,
      username: 'alice',
      type: 2,
      created_at: T0 + 60,
      model_name: 'gpt-4o',
      group: 'default',
      quota: 1234,
      prompt_tokens: 10,
      completion_tokens: 20,
      channel_id: 0,
      token_id: 0,
    })
    .execute();
  await addQuotaData(db, {
    userId: alice.userId!,
    username: 'alice',
    modelName: 'gpt-4o',
    at: T0 + 60,
    quota: 1234,
    tokens: 30,
  });
  await g.gateway.options.setMany({ PayAddress: 'https://pay.example.test/', EpayId: '1001', EpayKey: 'k' });
});

afterAll(async () => {
  await g?.stop();
});

const range = query({ start_timestamp: T0, end_timestamp: T0 + 3600 });

describe('dashboard (hooks/dashboard/useDashboardData.js)', () => {
  it('GET /api/data/users answers per-user hourly buckets', async () => {
    const rows = expectOk(await root.get(`/api/data/users?${range}`)) as unknown[];
    expect(rows).toHaveLength(1);
    expectShape(rows[0], {
      username: 'string',
      created_at: 'integer',
      count: 'integer',
      quota: 'integer',
      token_used: 'integer',
    });
  });

  it('GET /api/data/flow and /api/data/flow/self answer the flow rows', async () => {
    const admin = expectOk(await root.get(`/api/data/flow?${range}`)) as unknown[];
    expect(admin).toHaveLength(1);
    expectShape(admin[0], {
      user_id: 'integer',
      username: 'string',
      use_group: 'string',
      model_name: 'string',
      channel_id: 'integer',
      channel_name: 'string',
      count: 'integer',
      quota: 'integer',
      token_used: 'integer',
    });
    const self = expectOk(await alice.get(`/api/data/flow/self?${range}`)) as unknown[];
    expect(self).toHaveLength(1);
    expectShape(self[0], {
      token_id: 'integer',
      token_name: 'string',
      use_group: 'string',
      model_name: 'string',
      count: 'integer',
      quota: 'integer',
      token_used: 'integer',
    });
    expectRefusal(await alice.get(`/api/data/flow?${range}`));
    expectRefusal(await alice.get(`/api/data/users?${range}`));
  });
});

/** TopupHistoryModal.jsx reads these fields of each order. */
const ORDER: Shape = {
  id: 'integer',
  trade_no: 'string',
  payment_method: 'string',
  amount: 'integer',
  money: 'number',
  status: 'string',
  create_time: 'integer',
};

describe('wallet (components/topup/index.jsx, modals/TopupHistoryModal.jsx)', () => {
  it('GET /api/user/topup/info answers what the wallet offers', async () => {
    const info = expectOk(await alice.get('/api/user/topup/info'));
    expectShape(info, {
      enable_online_topup: 'boolean',
      enable_stripe_topup: 'boolean',
      enable_creem_topup: 'boolean',
      pay_methods: 'array',
      min_topup: 'integer',
      amount_options: 'array',
      discount: 'object',
    });
    expect(info.enable_online_topup).toBe(true);
  });

  it('GET /api/user/topup/self, GET /api/user/topup (admin) and POST /api/user/topup/complete', async () => {
    const ordered = await alice.post('/api/user/pay', { amount: 3, payment_method: 'alipay' });
    expect(ordered.body.message).toBe('success');
    const tradeNo = ordered.body.data.out_trade_no as string;

    const mine = expectPage(expectOk(await alice.get('/api/user/topup/self?p=1&page_size=10')), ORDER);
    expect(mine.map((o) => o.trade_no)).toEqual([tradeNo]);
    const all = expectPage(
      expectOk(await root.get(`/api/user/topup?p=1&page_size=10&keyword=${encodeURIComponent(tradeNo)}`)),
      ORDER,
    );
    expect(all.map((o) => [o.trade_no, o.status])).toEqual([[tradeNo, 'pending']]);

    expectOk(await root.post('/api/user/topup/complete', { trade_no: tradeNo }));
    const after = expectPage(expectOk(await alice.get('/api/user/topup/self?p=1&page_size=10')), ORDER);
    expect(after[0].status).toBe('success');
    expectRefusal(await root.post('/api/user/topup/complete', { trade_no: tradeNo }), 'TOPUP_ORDER_NOT_PENDING');
    expectRefusal(await alice.get('/api/user/topup?p=1&page_size=10'));
  });
});

/** PrefillGroupManagement / EditPrefillGroupModal.jsx. */
const GROUP: Shape = {
  id: 'integer',
  name: 'string',
  type: 'string',
  items: ['array', 'string'],
  description: 'string',
  created_time: 'integer',
  updated_time: 'integer',
};

describe('prefill groups (channel editor, EditPrefillGroupModal.jsx)', () => {
  it('POST, GET (?type=), PUT and DELETE /api/prefill_group', async () => {
    const created = expectOk(await root.post('/api/prefill_group', { name: 'm', type: 'model', items: ['a', 'b'] }));
    expectShape(created, GROUP);
    expectOk(await root.post('/api/prefill_group', { name: 'e', type: 'endpoint', items: '' }));
    const list = expectOk(await root.get('/api/prefill_group?type=model')) as unknown[];
    expect(list).toHaveLength(1);
    expectShape(list[0], GROUP);
    const changed = expectOk(await root.put('/api/prefill_group', { ...created, items: ['c'] }));
    expect(changed.items).toEqual(['c']);
    expectOk(await root.delete(`/api/prefill_group/${created.id}`));
    expect(expectOk(await root.get('/api/prefill_group'))).toHaveLength(1);
    expectRefusal(
      await root.post('/api/prefill_group', { name: 'e', type: 'tag', items: [] }),
      'PREFILL_GROUP_NAME_TAKEN',
    );
    expectRefusal(await alice.get('/api/prefill_group'));
  });
});
