import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockServer, serveMock } from '../support/mock-server.ts';
import {
  type ContractGateway,
  expectOk,
  expectRefusal,
  expectShape,
  expectSignedOut,
  type FrontEnd,
  type Shape,
  startContractGateway,
} from './support.ts';

/**
 * Sign-in sessions and third-party bindings (CATALOGUE.md "Sessions and bindings"): the personal page's
 * sessions and bindings cards and the user editor's bindings, as the console and new-api's front end call
 * them. A fake WeChat account server stands in for a provider, so bindings are made the real way.
 */

let g: ContractGateway;
let wechat: MockServer;
const wechatCodes = new Map<string, string>();
const WECHAT_TOKEN = 'wx-sessions-token';
const wechatCode = (openid: string) => {
  const code = String(200000 + wechatCodes.size);
  wechatCodes.set(code, openid);
  return code;
};

const SESSION: Shape = {
  id: 'string',
  created_at: 'integer',
  last_seen_at: 'integer',
  expires_at: 'integer',
  ip: 'string',
  user_agent: 'string',
  current: 'boolean',
};

/** new-api's UserOAuthBindingResponse (web/src/components/settings/personal: the bindings list). */
const BINDING: Shape = {
  provider_id: ['string', 'integer'],
  provider_name: 'string',
  provider_slug: 'string',
  provider_icon: 'string',
  provider_user_id: 'string',
};

beforeAll(async () => {
  wechat = await serveMock(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://wechat');
    const openid =
      url.pathname === '/api/wechat/user' && req.headers.authorization === WECHAT_TOKEN
        ? wechatCodes.get(url.searchParams.get('code') ?? '')
        : undefined;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(openid ? { success: true, message: '', data: openid } : { success: false, message: 'wrong code' }),
    );
  });
  g = await startContractGateway('10.52.19');
  for (const [key, value] of Object.entries({
    WeChatAuthEnabled: 'true',
    WeChatServerAddress: wechat.url,
    WeChatServerToken: WECHAT_TOKEN,
  })) {
    expectOk(await g.root.put('/api/option/', { key, value }));
  }
});

afterAll(async () => {
  await g?.stop();
  await wechat?.close();
});

/** A second browser of the same account. */
async function secondBrowser(username: string, password = 'password-1'): Promise<FrontEnd> {
  const c = g.visitor();
  expectOk(await c.login(username, password));
  return c;
}

const listSessions = async (c: FrontEnd) => {
  const data = expectOk(await c.get('/api/user/sessions'));
  expect(Array.isArray(data)).toBe(true);
  for (const [i, s] of (data as unknown[]).entries()) expectShape(s, SESSION, `data[${i}]`);
  return data as any[];
};

describe('sessions (personal page, sessions card)', () => {
  it('GET /api/user/sessions lists the sign-ins with exactly one current', async () => {
    const a = await g.user('cs-list');
    await secondBrowser('cs-list');
    const sessions = await listSessions(a);
    expect(sessions).toHaveLength(2);
    expect(sessions.filter((s) => s.current)).toHaveLength(1);
  });

  it('DELETE /api/user/sessions/:id (no body) signs that browser out', async () => {
    const a = await g.user('cs-one');
    const b = await secondBrowser('cs-one');
    const other = (await listSessions(a)).find((s) => !s.current);
    expectOk(await a.delete(`/api/user/sessions/${other.id}`));
    expectSignedOut(await b.get('/api/user/self'));
    expectOk(await a.get('/api/user/self'));
    expectRefusal(await a.delete(`/api/user/sessions/${other.id}`), 'SESSION_NOT_FOUND');
  });

  it('DELETE /api/user/sessions (no body) signs out every other browser', async () => {
    const a = await g.user('cs-all');
    const b = await secondBrowser('cs-all');
    expectOk(await a.delete('/api/user/sessions'));
    expectSignedOut(await b.get('/api/user/self'));
    expect(await listSessions(a)).toHaveLength(1);
  });

  it('answers 401 when not signed in', async () => {
    expectSignedOut(await g.visitor().get('/api/user/sessions'));
  });
});

describe('sessions of a user (administrator)', () => {
  it('GET /api/user/:id/sessions, DELETE /api/user/:id/sessions/:session_id and DELETE /api/user/:id/sessions', async () => {
    const a = await g.user('cs-admin');
    const b = await secondBrowser('cs-admin');
    const sessions = expectOk(await g.root.get(`/api/user/${a.userId}/sessions`)) as any[];
    expect(sessions).toHaveLength(2);
    for (const s of sessions) expectShape(s, SESSION);
    expectOk(await g.root.delete(`/api/user/${a.userId}/sessions/${sessions[0].id}`));
    expectOk(await g.root.delete(`/api/user/${a.userId}/sessions`));
    expectSignedOut(await a.get('/api/user/self'));
    expectSignedOut(await b.get('/api/user/self'));
  });

  it('refuses a normal user as a business refusal', async () => {
    const c = await g.user('cs-normal');
    expectRefusal(await c.get(`/api/user/${g.root.userId}/sessions`), 'FORBIDDEN');
  });
});

describe('bindings (personal page, bindings card; new-api PersonalSetting custom OAuth list)', () => {
  it('GET /api/user/oauth/bindings lists a binding made with the provider, DELETE removes it', async () => {
    const c = await g.user('cb-self');
    expect(expectOk(await c.get('/api/user/oauth/bindings'))).toEqual([]);
    expectOk(await c.get(`/api/oauth/wechat/bind?code=${wechatCode('openid-cb-self')}`));
    const bindings = expectOk(await c.get('/api/user/oauth/bindings')) as any[];
    expect(bindings).toHaveLength(1);
    expectShape(bindings[0], BINDING, 'data[0]');
    expect(bindings[0]).toMatchObject({ provider_slug: 'wechat', provider_user_id: 'openid-cb-self' });
    expectOk(await c.delete(`/api/user/oauth/bindings/${bindings[0].provider_id}`));
    expect(expectOk(await c.get('/api/user/self')).wechat_id).toBe('');
    expectRefusal(await c.delete('/api/user/oauth/bindings/wechat'), 'BINDING_NOT_FOUND');
    expectRefusal(await c.delete('/api/user/oauth/bindings/42'), 'BINDING_PROVIDER_UNKNOWN');
  });

  it('an account made by signing in with a provider cannot remove that last way to sign in', async () => {
    const c = g.visitor();
    const user = expectOk(await c.get(`/api/oauth/wechat?code=${wechatCode('openid-cb-only')}`));
    c.userId = user.id;
    expectRefusal(await c.delete('/api/user/oauth/bindings/wechat'), 'BINDING_LAST_SIGN_IN');
    expect(expectOk(await c.get('/api/user/oauth/bindings'))).toHaveLength(1);
  });
});

describe("bindings of a user (administrator; new-api's admin paths)", () => {
  it('GET /api/user/:id/oauth/bindings, DELETE /api/user/:id/bindings/:binding_type and /oauth/bindings/:provider_id', async () => {
    const c = await g.user('cb-admin');
    expectOk(await c.get(`/api/oauth/wechat/bind?code=${wechatCode('openid-cb-admin')}`));
    const bindings = expectOk(await g.root.get(`/api/user/${c.userId}/oauth/bindings`)) as any[];
    expect(bindings.map((b) => b.provider_slug)).toEqual(['wechat']);
    expectShape(bindings[0], BINDING);
    expectOk(await g.root.delete(`/api/user/${c.userId}/bindings/wechat`));
    expectRefusal(await g.root.delete(`/api/user/${c.userId}/oauth/bindings/wechat`), 'BINDING_NOT_FOUND');
    expect(expectOk(await g.root.get(`/api/user/${c.userId}/oauth/bindings`))).toEqual([]);
  });
});
