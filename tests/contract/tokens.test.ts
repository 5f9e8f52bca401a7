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

/** The token page, its edit drawer and the chat pages (CATALOGUE.md "Tokens"). */

let g: ContractGateway;
let alice: FrontEnd;
let bob: FrontEnd;

beforeAll(async () => {
  g = await startContractGateway('10.41.0');
  alice = await g.user('alice');
  bob = await g.user('bob');
});

afterAll(async () => {
  await g?.stop();
});

/** TokensColumnDefs.jsx, EditTokenModal.jsx `loadToken`. */
const TOKEN: Shape = {
  id: 'integer',
  name: 'string',
  key: 'string',
  status: 'integer',
  remain_quota: 'integer',
  used_quota: 'integer',
  unlimited_quota: 'boolean',
  expired_time: 'integer',
  created_time: 'integer',
  accessed_time: 'integer',
  model_limits_enabled: 'boolean',
  model_limits: 'string',
  allow_ips: 'string',
  group: 'string',
};

/** EditTokenModal.jsx `submit` for a new token: every form field, the amount beside the raw quota. */
const createForm = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  remain_quota: 500000,
  remain_amount: 1,
  expired_time: -1,
  unlimited_quota: false,
  model_limits_enabled: false,
  model_limits: '',
  allow_ips: '',
  group: '',
  cross_group_retry: false,
  ...extra,
});

async function createToken(c: FrontEnd, name: string, extra: Record<string, unknown> = {}): Promise<number> {
  expectOk(await c.post('/api/token/', createForm(name, extra)));
  const items = expectOk(await c.get('/api/token/?p=1&size=100')).items as Array<{ id: number; name: string }>;
  const token = items.find((t) => t.name === name);
  expect(token, `token ${name} listed`).toBeDefined();
  return token!.id;
}

/** The relay's answer to the key as the front end hands it out (`sk-` + the revealed key). */
const relayStatus = async (key: string) =>
  (await fetch(`${g.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status;

describe('listing (useTokensData.jsx)', () => {
  it('answers a page whose keys are masked and carry no sk- prefix', async () => {
    await createToken(alice, 'list-1');
    const data = expectOk(await alice.get('/api/token/?p=1&size=10'));
    const items = expectPage(data, TOKEN);
    expect(items.length).toBeGreaterThan(0);
    expect(data.page).toBe(1);
    for (const token of items) {
      expect(token.key.startsWith('sk-'), token.key).toBe(false);
      expect(token.key, 'masked').toContain('*');
    }
  });

  it('searches by keyword and token with the page parameters the page sends', async () => {
    await createToken(alice, 'searchable-token');
    const data = expectOk(await alice.get('/api/token/search?keyword=searchable&token=&p=1&size=10'));
    const items = expectPage(data, TOKEN);
    expect(items.map((t) => t.name)).toEqual(['searchable-token']);
  });
});

describe('revealing the key (helpers/token.js fetchTokenKey)', () => {
  it('POST /api/token/{id}/key answers the full key without sk-, which the relay accepts with sk-', async () => {
    const id = await createToken(alice, 'reveal-1');
    const data = expectOk(await alice.post(`/api/token/${id}/key`));
    expectShape(data, { key: 'string' }, 'data');
    expect(data.key.startsWith('sk-')).toBe(false);
    expect(data.key).not.toContain('*');
    expect(await relayStatus(`sk-${data.key}`)).toBe(200);
    const listed = (expectOk(await alice.get('/api/token/?p=1&size=100')).items as any[]).find((t) => t.id === id);
    expect(listed.key).not.toBe(data.key);
    expect(listed.key).not.toContain(data.key);
  });

  it("refuses another user's token as a business refusal", async () => {
    const id = await createToken(alice, 'reveal-2');
    expectRefusal(await bob.post(`/api/token/${id}/key`));
    expectRefusal(await bob.get(`/api/token/${id}`));
  });
});

describe('the edit drawer (EditTokenModal.jsx)', () => {
  it('GET /api/token/{id} answers the record with a masked key and model_limits as a comma string', async () => {
    const id = await createToken(alice, 'detail-1', { model_limits_enabled: true, model_limits: 'gpt-4o,gpt-4o-mini' });
    const token = expectOk(await alice.get(`/api/token/${id}`));
    expectShape(token, TOKEN, 'token');
    expect(token.key.startsWith('sk-')).toBe(false);
    expect(token.key).toContain('*');
    expect(token.model_limits.split(',')).toEqual(['gpt-4o', 'gpt-4o-mini']);
    expect(token.expired_time).toBe(-1);
  });

  it('PUT /api/token/ with the loaded record merged with the form keeps the key and saves the edits', async () => {
    const id = await createToken(alice, 'edit-1');
    const before = expectOk(await alice.post(`/api/token/${id}/key`)).key;
    const loaded = expectOk(await alice.get(`/api/token/${id}`));
    const expires = Math.floor(Date.now() / 1000) + 86400;
    expectOk(
      await alice.put('/api/token/', {
        ...loaded,
        name: 'edit-1-renamed',
        remain_amount: 2,
        remain_quota: 1000000,
        expired_time: expires,
        model_limits: 'gpt-4o',
        model_limits_enabled: true,
        cross_group_retry: false,
        id,
      }),
    );
    const after = expectOk(await alice.get(`/api/token/${id}`));
    expect(after).toMatchObject({
      name: 'edit-1-renamed',
      remain_quota: 1000000,
      expired_time: expires,
      model_limits: 'gpt-4o',
      model_limits_enabled: true,
    });
    expect(expectOk(await alice.post(`/api/token/${id}/key`)).key).toBe(before);
  });

  it('refuses a name that is too long and an expiry in the past as business refusals', async () => {
    expectRefusal(await alice.post('/api/token/', createForm('x'.repeat(200))));
    const id = await createToken(alice, 'edit-2');
    const loaded = expectOk(await alice.get(`/api/token/${id}`));
    expectRefusal(await alice.put('/api/token/', { ...loaded, expired_time: 1_000_000, id }));
  });
});

describe('row actions (useTokensData.jsx manageToken, batchDeleteTokens)', () => {
  it('PUT ?status_only=true answers data.status for disable and enable', async () => {
    const id = await createToken(alice, 'status-1');
    expect(expectOk(await alice.put('/api/token/?status_only=true', { id, status: 2 })).status).toBe(2);
    expect(expectOk(await alice.put('/api/token/?status_only=true', { id, status: 1 })).status).toBe(1);
  });

  it('refuses to enable an expired token as a business refusal', async () => {
    const id = await createToken(alice, 'status-2');
    expectOk(await alice.put('/api/token/?status_only=true', { id, status: 2 }));
    // Expiry passes with time; set it in the past directly rather than wait.
    await g.gateway.store.db
      .updateTable('tokens')
      .set({ expired_time: Math.floor(Date.now() / 1000) - 60 })
      .where('id', '=', id)
      .execute();
    expectRefusal(await alice.put('/api/token/?status_only=true', { id, status: 1 }));
  });

  it('DELETE /api/token/{id}/ removes the token; a second delete is a business refusal', async () => {
    const id = await createToken(alice, 'delete-1');
    expectOk(await alice.delete(`/api/token/${id}/`));
    expectRefusal(await alice.get(`/api/token/${id}`));
    expectRefusal(await alice.delete(`/api/token/${id}/`));
  });

  it('POST /api/token/batch answers the number deleted', async () => {
    const ids = [await createToken(alice, 'batch-1'), await createToken(alice, 'batch-2')];
    expect(expectOk(await alice.post('/api/token/batch', { ids }))).toBe(2);
  });
});

describe('chat pages (hooks/chat/useTokenKeys.js)', () => {
  it('lists enabled tokens and reveals each key for the chat link', async () => {
    const c = await g.user('chatter');
    await createToken(c, 'chat-1');
    const data = expectOk(await c.get('/api/token/?p=1&size=10'));
    const enabled = (data.items as any[]).filter((t) => t.status === 1);
    expect(enabled.length).toBe(1);
    const key = expectOk(await c.post(`/api/token/${enabled[0].id}/key`)).key;
    expect(await relayStatus(`sk-${key}`)).toBe(200);
  });
});
