import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { clientsFrom, type DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
const { client, user } = clientsFrom(() => gateway.url, '10.19.3');

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace(), { TRUST_PROXY: 'true' }));
  root = await setupRoot(gateway.url);
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

const refused = (code: string) => ({ status: 200, success: false, code });

/** Another sign-in of `username` from its own address and browser. */
async function signIn(username: string, agent: string, password = 'password-1'): Promise<DashboardClient> {
  const c = client();
  c.headers['user-agent'] = agent;
  const answer = await c.login(username, password);
  expect(answer.body.success, JSON.stringify(answer.body)).toBe(true);
  return c;
}

const sessionsOf = async (c: DashboardClient) => {
  const answer = await c.get('/api/user/sessions');
  expect(answer.body.success, JSON.stringify(answer.body)).toBe(true);
  return answer.body.data as any[];
};

const setUser = (id: number, changes: Record<string, string>) =>
  gateway.store.db.updateTable('users').set(changes).where('id', '=', id).execute();
const userRow = (id: number) =>
  gateway.store.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('own sessions', () => {
  it('lists each sign-in with its address and browser, marks the current one and revokes another', async () => {
    await user('sess1');
    const laptop = await signIn('sess1', 'Laptop/1.0');
    const phone = await signIn('sess1', 'Phone/2.0');
    const listed = await sessionsOf(laptop);
    const mine = listed.filter((s) => ['Laptop/1.0', 'Phone/2.0'].includes(s.user_agent));
    expect(mine).toHaveLength(2);
    const current = listed.filter((s) => s.current);
    expect(current).toHaveLength(1);
    expect(current[0].user_agent).toBe('Laptop/1.0');
    expect(current[0].ip).toBe(laptop.headers['x-forwarded-for']);
    const other = mine.find((s) => s.user_agent === 'Phone/2.0');
    expect(other.ip).toBe(phone.headers['x-forwarded-for']);
    for (const s of listed) {
      expect(s.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(s.created_at).toBeGreaterThan(0);
      expect(s.last_seen_at).toBeGreaterThanOrEqual(s.created_at);
      expect(s.expires_at).toBeGreaterThan(s.last_seen_at);
    }

    expect((await phone.get('/api/user/self')).status).toBe(200);
    const revoked = await laptop.delete(`/api/user/sessions/${other.id}`);
    expect(revoked.body.success, JSON.stringify(revoked.body)).toBe(true);
    expect((await phone.get('/api/user/self')).status).toBe(401);
    expect((await laptop.get('/api/user/self')).status).toBe(200);
    expect((await sessionsOf(laptop)).map((s) => s.user_agent)).not.toContain('Phone/2.0');
  });

  it('signs out every other session and keeps the one that asked', async () => {
    await user('sess2');
    const a = await signIn('sess2', 'A');
    const b = await signIn('sess2', 'B');
    const c = await signIn('sess2', 'C');
    expect((await a.delete('/api/user/sessions')).body.success).toBe(true);
    expect((await b.get('/api/user/self')).status).toBe(401);
    expect((await c.get('/api/user/self')).status).toBe(401);
    expect((await a.get('/api/user/self')).status).toBe(200);
    const left = await sessionsOf(a);
    expect(left).toHaveLength(1);
    expect(left[0].current).toBe(true);
  });

  it('revoking the current session signs this browser out and clears its cookie', async () => {
    await user('sess3');
    const a = await signIn('sess3', 'A');
    const [current] = (await sessionsOf(a)).filter((s) => s.current);
    const answer = await a.delete(`/api/user/sessions/${current.id}`);
    expect(answer.body.success).toBe(true);
    expect(answer.headers.getSetCookie().some((c) => /^session=;/.test(c))).toBe(true);
    expect((await a.get('/api/user/self')).status).toBe(401);
  });

  it("refuses another user's session, an unknown id and a malformed one, and changes nothing", async () => {
    await user('sess4');
    await user('sess5');
    const mine = await signIn('sess4', 'mine');
    const theirs = await signIn('sess5', 'theirs');
    const [theirId] = (await sessionsOf(theirs)).filter((s) => s.current).map((s) => s.id);
    expect(refusalOf(await mine.delete(`/api/user/sessions/${theirId}`))).toEqual(refused('SESSION_NOT_FOUND'));
    expect(refusalOf(await mine.delete(`/api/user/sessions/${'x'.repeat(43)}`))).toEqual(refused('SESSION_NOT_FOUND'));
    const malformed = await mine.delete(`/api/user/sessions/${'a'.repeat(65)}`);
    expect(malformed.status).toBe(200);
    expect(malformed.body.success).toBe(false);
    expect(malformed.body.code).toBeTruthy();
    expect((await theirs.get('/api/user/self')).status).toBe(200);
  });

  it('records the address a session was last used from, at most once a minute', async () => {
    await user('sess6');
    const a = await signIn('sess6', 'A');
    const [current] = (await sessionsOf(a)).filter((s) => s.current);
    // Pretend the last use was two minutes ago, from elsewhere; the next call refreshes both.
    await gateway.store.db
      .updateTable('sessions')
      .set({ last_seen_at: current.last_seen_at - 120, ip: '192.0.2.1' })
      .where('id_hash', '=', current.id)
      .execute();
    a.headers['x-forwarded-for'] = '10.19.99.7';
    const [after] = (await sessionsOf(a)).filter((s) => s.current);
    expect(after.ip).toBe('10.19.99.7');
    expect(after.last_seen_at).toBeGreaterThanOrEqual(current.last_seen_at);
  });

  it('needs a sign-in', async () => {
    expect((await client().get('/api/user/sessions')).status).toBe(401);
  });
});

describe("an administrator and a user's sessions", () => {
  it('lists, revokes one and revokes all of a lower-level user', async () => {
    const first = await user('sess7');
    const second = await signIn('sess7', 'Second');
    const id = first.userId!;
    const listed = (await root.get(`/api/user/${id}/sessions`)).body.data as any[];
    expect(listed).toHaveLength(2);
    expect(listed.every((s) => s.current === false)).toBe(true);
    const target = listed.find((s) => s.user_agent === 'Second');
    expect((await root.delete(`/api/user/${id}/sessions/${target.id}`)).body.success).toBe(true);
    expect((await second.get('/api/user/self')).status).toBe(401);
    expect((await first.get('/api/user/self')).status).toBe(200);
    expect((await root.delete(`/api/user/${id}/sessions`)).body.success).toBe(true);
    expect((await first.get('/api/user/self')).status).toBe(401);
    expect((await root.get(`/api/user/${id}/sessions`)).body.data).toEqual([]);
    expect(refusalOf(await root.delete(`/api/user/${id}/sessions/${target.id}`))).toEqual(refused('SESSION_NOT_FOUND'));
  });

  it('refuses a normal user, and an administrator over root', async () => {
    const normal = await user('sess8');
    expect(refusalOf(await normal.get(`/api/user/${root.userId}/sessions`)).code).toBe('FORBIDDEN');
    const admin = await user('sess9');
    expect((await root.post('/api/user/manage', { id: admin.userId, action: 'promote' })).body.success).toBe(true);
    expect(refusalOf(await admin.get(`/api/user/${root.userId}/sessions`))).toEqual(refused('SAME_OR_HIGHER_LEVEL'));
    expect(refusalOf(await admin.delete(`/api/user/${root.userId}/sessions`))).toEqual(refused('SAME_OR_HIGHER_LEVEL'));
    expect((await root.get('/api/user/self')).status).toBe(200);
    expect(refusalOf(await root.get('/api/user/999999/sessions')).code).toBe('USER_NOT_FOUND');
  });
});

describe('own bindings', () => {
  it('lists each bound provider with its account id and unbinds one', async () => {
    const c = await user('bind1');
    const id = c.userId!;
    await setUser(id, { github_id: 'gh-1', telegram_id: 'tg-9' });
    const listed = (await c.get('/api/user/oauth/bindings')).body.data;
    expect(listed).toEqual([
      {
        provider_id: 'github',
        provider_name: 'GitHub',
        provider_slug: 'github',
        provider_icon: '',
        provider_user_id: 'gh-1',
      },
      {
        provider_id: 'telegram',
        provider_name: 'Telegram',
        provider_slug: 'telegram',
        provider_icon: '',
        provider_user_id: 'tg-9',
      },
    ]);
    expect((await c.delete('/api/user/oauth/bindings/github')).body.success).toBe(true);
    expect((await userRow(id)).github_id).toBe('');
    expect((await userRow(id)).telegram_id).toBe('tg-9');
    expect((await c.get('/api/user/oauth/bindings')).body.data.map((b: any) => b.provider_slug)).toEqual(['telegram']);
    expect(refusalOf(await c.delete('/api/user/oauth/bindings/github'))).toEqual(refused('BINDING_NOT_FOUND'));
    expect(refusalOf(await c.delete('/api/user/oauth/bindings/myspace'))).toEqual(refused('BINDING_PROVIDER_UNKNOWN'));
  });

  it('a user with a password may remove their last binding', async () => {
    const c = await user('bind2');
    await setUser(c.userId!, { oidc_id: 'sub-1' });
    expect((await c.delete('/api/user/oauth/bindings/oidc')).body.success).toBe(true);
    expect((await c.get('/api/user/oauth/bindings')).body.data).toEqual([]);
  });

  it('refuses removing the last way to sign in of an account without a password', async () => {
    const c = await user('bind3');
    const id = c.userId!;
    await setUser(id, { password: '', github_id: 'gh-3', linux_do_id: 'ld-3' });
    expect((await c.delete('/api/user/oauth/bindings/linuxdo')).body.success).toBe(true);
    const last = await c.delete('/api/user/oauth/bindings/github');
    expect(refusalOf(last)).toEqual(refused('BINDING_LAST_SIGN_IN'));
    expect(last.body.message).toMatch(/GitHub/);
    expect((await userRow(id)).github_id).toBe('gh-3');
  });

  it('two unbinds racing for the last two bindings leave one of them', async () => {
    const c = await user('bind4');
    const id = c.userId!;
    await setUser(id, { password: '', github_id: 'gh-4', wechat_id: 'wx-4' });
    const answers = await Promise.all([
      c.delete('/api/user/oauth/bindings/github'),
      c.delete('/api/user/oauth/bindings/wechat'),
    ]);
    expect(answers.filter((a) => a.body.success)).toHaveLength(1);
    expect(answers.filter((a) => a.body.code === 'BINDING_LAST_SIGN_IN')).toHaveLength(1);
    const row = await userRow(id);
    expect([row.github_id, row.wechat_id].filter((v) => v !== '')).toHaveLength(1);
  });

  it('an account without a password cannot sign in with an empty one', async () => {
    const c = await user('bind5');
    await setUser(c.userId!, { password: '', github_id: 'gh-5' });
    expect(refusalOf(await client().login('bind5', 'password-1')).code).toBe('LOGIN_FAILED');
    expect(refusalOf(await client().post('/api/user/login', { username: 'bind5', password: '' })).success).toBe(false);
  });
});

describe("an administrator and a user's bindings", () => {
  it("lists and removes a user's bindings through both of new-api's paths, keeping the last-way rule", async () => {
    const c = await user('bind6');
    const id = c.userId!;
    await setUser(id, { password: '', github_id: 'gh-6', oidc_id: 'sub-6', telegram_id: 'tg-6' });
    const listed = (await root.get(`/api/user/${id}/oauth/bindings`)).body.data;
    expect(listed.map((b: any) => [b.provider_id, b.provider_user_id])).toEqual([
      ['github', 'gh-6'],
      ['oidc', 'sub-6'],
      ['telegram', 'tg-6'],
    ]);
    expect((await root.delete(`/api/user/${id}/bindings/GitHub`)).body.success).toBe(true);
    expect((await root.delete(`/api/user/${id}/oauth/bindings/oidc`)).body.success).toBe(true);
    expect(refusalOf(await root.delete(`/api/user/${id}/bindings/telegram`))).toEqual(refused('BINDING_LAST_SIGN_IN'));
    const row = await userRow(id);
    expect([row.github_id, row.oidc_id, row.telegram_id]).toEqual(['', '', 'tg-6']);
  });

  it("clears a user's email through /bindings/email only", async () => {
    const c = await user('bind9');
    const id = c.userId!;
    await setUser(id, { email: 'bind9@example.com' });
    expect(refusalOf(await root.delete(`/api/user/${id}/oauth/bindings/email`))).toEqual(
      refused('BINDING_PROVIDER_UNKNOWN'),
    );
    expect(refusalOf(await c.delete('/api/user/oauth/bindings/email'))).toEqual(refused('BINDING_PROVIDER_UNKNOWN'));
    expect((await root.delete(`/api/user/${id}/bindings/email`)).body.success).toBe(true);
    expect((await userRow(id)).email).toBe('');
    expect(refusalOf(await root.delete(`/api/user/${id}/bindings/email`))).toEqual(refused('BINDING_NOT_FOUND'));
  });

  it('refuses a normal user and an administrator over an equal or higher level', async () => {
    const normal = await user('bind7');
    expect(refusalOf(await normal.get(`/api/user/${root.userId}/oauth/bindings`)).code).toBe('FORBIDDEN');
    const admin = await user('bind8');
    expect((await root.post('/api/user/manage', { id: admin.userId, action: 'promote' })).body.success).toBe(true);
    await setUser(root.userId!, { github_id: 'gh-root' });
    expect(refusalOf(await admin.delete(`/api/user/${root.userId}/bindings/github`))).toEqual(
      refused('SAME_OR_HIGHER_LEVEL'),
    );
    expect((await userRow(root.userId!)).github_id).toBe('gh-root');
  });
});
