import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../gateway/src/domain/accounts/password.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { clientsFrom, DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let turnstile: Server;
/** Each client comes from its own address, so the per-IP sign-in limit never spills between tests. */
const { client, user } = clientsFrom(() => gateway.url, '10.1.0');

beforeAll(async () => {
  // A stand-in for Cloudflare's siteverify: the token "good-token" passes with the right secret.
  turnstile = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const form = new URLSearchParams(body);
      const success = form.get('secret') === 'turnstile-secret' && form.get('response') === 'good-token';
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ success }));
    });
  });
  await new Promise<void>((resolve) => turnstile.listen(0, '127.0.0.1', resolve));
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), {
      TRUST_PROXY: 'true',
      TURNSTILE_VERIFY_URL: `http://127.0.0.1:${(turnstile.address() as AddressInfo).port}/siteverify`,
    }),
  );
  root = await setupRoot(gateway.url);
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  turnstile?.close();
});

async function register(username: string, password = 'password-1', extra: Record<string, unknown> = {}) {
  return client().post('/api/user/register', { username, password, ...extra });
}

async function admin(username: string): Promise<DashboardClient> {
  const c = await user(username);
  expect((await root.post('/api/user/manage', { id: c.userId, action: 'promote' })).body.data).toEqual({
    status: 1,
    role: 10,
  });
  return c;
}

const row = (id: number) =>
  gateway.store.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('registration', () => {
  it.each([
    ['no username', { password: 'password-1' }, 200, 'USERNAME_AND_PASSWORD_REQUIRED'],
    ['no password', { username: 'nopass' }, 200, 'USERNAME_AND_PASSWORD_REQUIRED'],
    ['a 13-character username', { username: 'abcdefghijklm', password: 'password-1' }, 200, 'USERNAME_TOO_LONG'],
    ['a 7-character password', { username: 'short', password: '1234567' }, 200, 'PASSWORD_LENGTH'],
    ['a 21-character password', { username: 'long', password: 'x'.repeat(21) }, 200, 'PASSWORD_LENGTH'],
    [
      'different passwords',
      { username: 'differ', password: 'password-1', password2: 'password-2' },
      200,
      'PASSWORD_MISMATCH',
    ],
    ['a number for a username', { username: 42, password: 'password-1' }, 200, 'INVALID_REQUEST'],
  ])('refuses %s and creates nobody', async (_name, body, status, code) => {
    const usersBefore = Number(
      (
        await gateway.store.db
          .selectFrom('users')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    const answer = await client().post('/api/user/register', body);
    expect(answer.status).toBe(status);
    expect(answer.body).toMatchObject({ success: false, code });
    const count = await gateway.store.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(usersBefore);
  });

  it('registers a user with the new-user grant, and refuses the same name twice', async () => {
    await gateway.options.set('QuotaForNewUser', '1000');
    const answer = await register('newbie');
    expect(answer.body).toEqual({ success: true, message: 'Registration successful' });
    const created = await gateway.store.db
      .selectFrom('users')
      .selectAll()
      .where('username', '=', 'newbie')
      .executeTakeFirstOrThrow();
    expect(created).toMatchObject({ role: 1, status: 1, group: 'default', quota: 1000, display_name: 'newbie' });
    expect(created.password).toMatch(/^\$2[aby]\$/);
    expect((await register('newbie')).body).toMatchObject({ success: false, code: 'USERNAME_TAKEN' });
    await gateway.options.set('QuotaForNewUser', '0');
  });

  it('credits the inviter and the invitee for an invitation code, and refuses an unknown code', async () => {
    await gateway.options.setMany({ QuotaForInviter: '300', QuotaForInvitee: '200' });
    const inviter = await user('inviter');
    const code = (await inviter.get('/api/user/aff')).body.data;
    expect(code).toMatch(/^\w{6}$/);
    expect((await inviter.get('/api/user/aff')).body.data).toBe(code);
    expect((await register('invitee', 'password-1', { aff_code: code })).body.success).toBe(true);
    const invitee = await gateway.store.db
      .selectFrom('users')
      .selectAll()
      .where('username', '=', 'invitee')
      .executeTakeFirstOrThrow();
    expect(invitee).toMatchObject({ quota: 200, inviter_id: inviter.userId });
    expect(await row(inviter.userId!)).toMatchObject({ aff_count: 1, aff_quota: 300, aff_history_quota: 300 });
    expect((await register('stranger', 'password-1', { aff_code: 'nope00' })).body.code).toBe('INVITE_CODE_INVALID');
    await gateway.options.setMany({ QuotaForInviter: '0', QuotaForInvitee: '0' });
  });

  it('honours the registration switches and email verification', async () => {
    await gateway.options.set('RegisterEnabled', 'false');
    expect((await register('closed1')).body.code).toBe('REGISTER_DISABLED');
    await gateway.options.setMany({ RegisterEnabled: 'true', PasswordRegisterEnabled: 'false' });
    expect((await register('closed2')).body.code).toBe('PASSWORD_REGISTER_DISABLED');
    await gateway.options.setMany({ PasswordRegisterEnabled: 'true', EmailVerificationEnabled: 'true' });
    expect((await register('closed3')).body.code).toBe('EMAIL_AND_CODE_REQUIRED');
    expect(
      (await register('closed3', 'password-1', { email: 'a@b.example', verification_code: '000000' })).body.code,
    ).toBe('VERIFICATION_CODE_INVALID');
    await gateway.options.set('EmailVerificationEnabled', 'false');
    const names = (await gateway.store.db.selectFrom('users').select('username').execute()).map((u) => u.username);
    expect(names).not.toEqual(expect.arrayContaining(['closed1']));
    expect(names.filter((n) => n.startsWith('closed'))).toEqual([]);
  });
});

describe('sign-in and sessions', () => {
  it('signs in by username or email with a secure session cookie, and refuses wrong passwords', async () => {
    await user('signin');
    await gateway.store.db
      .updateTable('users')
      .set({ email: 'signin@example.com' })
      .where('username', '=', 'signin')
      .execute();
    const c = client();
    expect((await c.login('signin', 'wrong-password')).body).toMatchObject({ success: false, code: 'LOGIN_FAILED' });
    expect((await c.post('/api/user/login', {})).body.code).toBe('USERNAME_AND_PASSWORD_REQUIRED');
    const ok = await c.login('signin@example.com', 'password-1');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ success: true, message: 'Login successful' });
    expect(Object.keys(ok.body.data).sort()).toEqual(['display_name', 'group', 'id', 'role', 'status', 'username']);
    const cookie = ok.headers.getSetCookie().find((h) => h.startsWith('session='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect(cookie).not.toMatch(/Secure/i);
    const tls = await client().call(
      'POST',
      '/api/user/login',
      { username: 'signin', password: 'password-1' },
      { 'x-forwarded-proto': 'https' },
    );
    expect(tls.headers.getSetCookie().find((h) => h.startsWith('session='))).toMatch(/Secure/i);
  });

  it('requires the session and a matching New-Api-User header on dashboard calls', async () => {
    const c = await user('headers');
    expect((await c.get('/api/user/self')).status).toBe(200);
    const anonymous = client();
    expect(await anonymous.get('/api/user/self')).toMatchObject({ status: 401, body: { code: 'NOT_LOGGED_IN' } });
    expect((await c.get('/api/user/self', { 'new-api-user': '' })).body.code).toBe('USER_HEADER_MISSING');
    const mismatch = await c.get('/api/user/self', { 'new-api-user': String(root.userId) });
    expect(mismatch).toMatchObject({ status: 401, body: { code: 'USER_HEADER_MISMATCH' } });
    expect((await c.get('/api/user/logout')).body.success).toBe(true);
    expect((await c.get('/api/user/self')).status).toBe(401);
  });

  it('turns password sign-in off when the option says so', async () => {
    await gateway.options.set('PasswordLoginEnabled', 'false');
    expect((await client().login('root', 'root-password')).body.code).toBe('PASSWORD_LOGIN_DISABLED');
    await gateway.options.set('PasswordLoginEnabled', 'true');
  });

  it('warns the root signing in with the well-known default password', async () => {
    const original = await row(root.userId!);
    await gateway.store.db
      .updateTable('users')
      .set({ password: await hashPassword('123456') })
      .where('id', '=', root.userId!)
      .execute();
    const answer = await client().login('root', '123456');
    expect(answer.body.success).toBe(true);
    expect(answer.body.message).toBe('You are using the default password, change it immediately!');
    await gateway.store.db
      .updateTable('users')
      .set({ password: original.password })
      .where('id', '=', root.userId!)
      .execute();
  });

  it('accepts a personal access token instead of the session, until it is regenerated', async () => {
    const c = await user('tokenuser');
    const token = (await c.get('/api/user/token')).body.data;
    expect(token).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(JSON.stringify(await row(c.userId!))).not.toContain(token);
    const script = new DashboardClient(gateway.url);
    script.userId = c.userId;
    const viaToken = await script.get('/api/user/self', { authorization: token });
    expect(viaToken.body.data.username).toBe('tokenuser');
    expect((await script.get('/api/user/self', { authorization: `Bearer ${token}` })).status).toBe(200);
    await c.get('/api/user/token');
    expect(await script.get('/api/user/self', { authorization: token })).toMatchObject({
      status: 401,
      body: { code: 'ACCESS_TOKEN_INVALID' },
    });
  });

  it('checks the human-verification token when Turnstile is on', async () => {
    await gateway.options.setMany({ TurnstileCheckEnabled: 'true', TurnstileSecretKey: 'turnstile-secret' });
    const c = client();
    expect((await c.post('/api/user/login', { username: 'root', password: 'root-password' })).body.code).toBe(
      'TURNSTILE_REQUIRED',
    );
    expect(
      (await c.post('/api/user/login?turnstile=bad', { username: 'root', password: 'root-password' })).body.code,
    ).toBe('TURNSTILE_FAILED');
    expect(
      (await c.post('/api/user/register?turnstile=bad', { username: 'human', password: 'password-1' })).status,
    ).toBe(200);
    const passed = await c.post('/api/user/login?turnstile=good-token', {
      username: 'root',
      password: 'root-password',
    });
    expect(passed.body.success).toBe(true);
    await gateway.options.setMany({ TurnstileCheckEnabled: 'false', TurnstileSecretKey: '' });
  });
});

describe('roles and permissions', () => {
  it('keeps normal users out of user management and other users’ data', async () => {
    const normal = await user('normal');
    const before = await gateway.store.db.selectFrom('users').selectAll().orderBy('id').execute();
    for (const [method, path, body] of [
      ['GET', '/api/user/', undefined],
      ['GET', '/api/user/search?keyword=root', undefined],
      ['GET', `/api/user/${root.userId}`, undefined],
      ['POST', '/api/user/', { username: 'sneaky', password: 'password-1' }],
      ['PUT', '/api/user/', { id: root.userId, quota: 1 }],
      ['POST', '/api/user/manage', { id: root.userId, action: 'disable' }],
      ['DELETE', `/api/user/${root.userId}`, undefined],
      ['GET', '/api/group/', undefined],
    ] as const) {
      const answer = await normal.call(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(200);
      expect(answer.body.code).toBe('FORBIDDEN');
    }
    expect(await gateway.store.db.selectFrom('users').selectAll().orderBy('id').execute()).toEqual(before);
  });

  it('lets an administrator manage normal users only, within the rules', async () => {
    const boss = await admin('boss');
    const peer = await admin('peer');
    const worker = await user('worker');
    // Same level, higher level, and the protected root.
    expect((await boss.post('/api/user/manage', { id: peer.userId, action: 'disable' })).body.code).toBe(
      'SAME_OR_HIGHER_LEVEL',
    );
    expect((await boss.get(`/api/user/${peer.userId}`)).body.code).toBe('SAME_OR_HIGHER_LEVEL');
    expect((await boss.put('/api/user/', { id: peer.userId, quota: 5 })).body.code).toBe('SAME_OR_HIGHER_LEVEL');
    for (const action of ['disable', 'delete', 'demote']) {
      expect((await boss.post('/api/user/manage', { id: root.userId, action })).body.code).toBe('ROOT_PROTECTED');
    }
    expect((await boss.post('/api/user/manage', { id: worker.userId, action: 'promote' })).body.code).toBe(
      'CANNOT_PROMOTE_TO_ADMIN',
    );
    expect((await boss.post('/api/user/', { username: 'newadmin', password: 'password-1', role: 10 })).body.code).toBe(
      'CANNOT_CREATE_HIGHER_ROLE',
    );
    expect(await row(peer.userId!)).toMatchObject({ status: 1, role: 10 });
    expect(await row(worker.userId!)).toMatchObject({ status: 1, role: 1 });

    // What an administrator may do.
    expect((await boss.get(`/api/user/${worker.userId}`)).body.data.username).toBe('worker');
    expect((await boss.post('/api/user/manage', { id: worker.userId, action: 'disable' })).body.data).toEqual({
      status: 2,
      role: 1,
    });
    expect((await worker.get('/api/user/self')).status).toBe(401);
    expect((await worker.login('worker', 'password-1')).body.code).toBe('LOGIN_FAILED');
    expect((await boss.post('/api/user/manage', { id: worker.userId, action: 'enable' })).body.data).toEqual({
      status: 1,
      role: 1,
    });
    expect((await worker.login('worker', 'password-1')).body.success).toBe(true);
    expect((await boss.post('/api/user/manage', { id: worker.userId, action: 'explode' })).body.code).toBe(
      'INVALID_ACTION',
    );
  });

  it('lets the root promote and demote, and protects the root from itself', async () => {
    const c = await user('climber');
    expect((await root.post('/api/user/manage', { id: c.userId, action: 'promote' })).body.data.role).toBe(10);
    expect((await c.get('/api/user/')).body.success).toBe(true);
    expect((await root.post('/api/user/manage', { id: c.userId, action: 'demote' })).body.data.role).toBe(1);
    expect(refusalOf(await c.get('/api/user/'))).toMatchObject({ status: 200, success: false });
    for (const action of ['disable', 'delete', 'demote']) {
      expect((await root.post('/api/user/manage', { id: root.userId, action })).body.code).toBe('ROOT_PROTECTED');
    }
    expect(await row(root.userId!)).toMatchObject({ role: 100, status: 1, deleted_at: null });
  });

  it('creates and edits users, with quota as an integer and a password change signing the user out', async () => {
    const created = await root.post('/api/user/', { username: 'made', password: 'password-1', display_name: 'Made' });
    expect(created.body).toMatchObject({ success: true, data: { username: 'made', display_name: 'Made', role: 1 } });
    expect((await root.post('/api/user/', { username: 'made', password: 'password-1' })).body.code).toBe(
      'USERNAME_TAKEN',
    );
    expect((await root.post('/api/user/', { username: '', password: '' })).body.code).toBe(
      'USERNAME_AND_PASSWORD_REQUIRED',
    );
    const id = created.body.data.id;
    const made = client();
    await made.login('made', 'password-1');
    expect((await root.put('/api/user/', { id, quota: 1.5 })).body.code).toBe('QUOTA_NOT_INTEGER');
    expect((await root.put('/api/user/', { id, username: 'root' })).body.code).toBe('USERNAME_TAKEN');
    const edited = await root.put('/api/user/', {
      id,
      quota: -50,
      group: 'vip',
      display_name: 'Renamed',
      password: 'password-2',
    });
    expect(edited.body.data).toMatchObject({ quota: -50, group: 'vip', display_name: 'Renamed' });
    expect((await made.get('/api/user/self')).status).toBe(401);
    expect((await made.login('made', 'password-2')).body.success).toBe(true);
    const logs = await gateway.store.db.selectFrom('logs').selectAll().where('user_id', '=', id).execute();
    expect(logs.map((l) => l.type)).toContain(3);
  });

  it("lets administrators set a user's rate limits, which the user sees and cannot change", async () => {
    const created = await root.post('/api/user/', { username: 'limited', password: 'password-1' });
    const id = created.body.data.id;
    expect(created.body.data.rate_limits).toEqual({});
    const edited = await root.put('/api/user/', { id, rate_limits: { '*': { rpm: 30, tpm: 20000 } } });
    expect(edited.body.data.rate_limits).toEqual({ '*': { rpm: 30, tpm: 20000 } });
    const refused = await root.put('/api/user/', { id, rate_limits: { '*': { tpm: -5 } } });
    expect(refusalOf(refused)).toMatchObject({ status: 200, success: false });
    const limited = client();
    await limited.login('limited', 'password-1');
    await limited.put('/api/user/self', { rate_limits: {} });
    expect((await limited.get('/api/user/self')).body.data.rate_limits).toEqual({ '*': { rpm: 30, tpm: 20000 } });
  });

  it('sets quota net of what pods hold in leases, so returned leases are not counted twice', async () => {
    const created = await root.post('/api/user/', { username: 'leased', password: 'password-1' });
    const id = created.body.data.id;
    await gateway.store.db
      .insertInto('quota_leases')
      .values({
        id: 'lease-test',
        account_type: 'user',
        account_id: id,
        holder: 'pod-x',
        amount: 1000,
        created_at: 1,
        expires_at: 9_999_999_999,
      })
      .execute();
    await root.put('/api/user/', { id, quota: 5000 });
    expect((await row(id)).quota).toBe(4000);
    await gateway.store.db.deleteFrom('quota_leases').where('id', '=', 'lease-test').execute();

    const token = (await root.post('/api/token/', { name: 'leased', remain_quota: 9000 })).body.data;
    await gateway.store.db
      .insertInto('quota_leases')
      .values({
        id: 'lease-token',
        account_type: 'token',
        account_id: token.id,
        holder: 'pod-x',
        amount: 700,
        created_at: 1,
        expires_at: 9_999_999_999,
      })
      .execute();
    expect((await root.put('/api/token/', { id: token.id, remain_quota: 3000 })).body.success).toBe(true);
    const stored = await gateway.store.db
      .selectFrom('tokens')
      .select('remain_quota')
      .where('id', '=', token.id)
      .executeTakeFirstOrThrow();
    expect(stored.remain_quota).toBe(2300);
    await gateway.store.db.deleteFrom('quota_leases').where('id', '=', 'lease-token').execute();
  });

  it('lists and searches users by id, names and email, with a group filter and paging', async () => {
    const all = await root.get('/api/user/?p=1&page_size=100');
    expect(all.body.data.total).toBe(all.body.data.items.length);
    expect(all.body.data).toMatchObject({ page: 1, page_size: 100 });
    const first = await root.get('/api/user/?p=1&page_size=2');
    const second = await root.get('/api/user/?p=2&page_size=2');
    expect(first.body.data.items).toHaveLength(2);
    expect(second.body.data.items[0].id).toBeLessThan(first.body.data.items[1].id);
    expect((await root.get('/api/user/search?keyword=climb')).body.data.items.map((u: any) => u.username)).toEqual([
      'climber',
    ]);
    expect((await root.get(`/api/user/search?keyword=${root.userId}`)).body.data.items.map((u: any) => u.id)).toContain(
      root.userId,
    );
    expect((await root.get('/api/user/search?keyword=signin%40example')).body.data.items[0].username).toBe('signin');
    const vip = await root.get('/api/user/search?group=vip');
    expect(vip.body.data.items.map((u: any) => u.username)).toEqual(['made']);
    for (const item of all.body.data.items) {
      expect(Object.keys(item)).not.toEqual(expect.arrayContaining(['password']));
      expect(JSON.stringify(item)).not.toMatch(/\$2[aby]\$|access_token/);
    }
    expect((await root.get('/api/group/')).body.data).toEqual(['default', 'vip', 'svip']);
  });
});

describe('self-service', () => {
  it('changes the password only with the original, signing out the other sessions', async () => {
    const here = await user('changer');
    const elsewhere = client();
    await elsewhere.login('changer', 'password-1');
    expect((await here.put('/api/user/self', { password: 'password-2' })).body.code).toBe('ORIGINAL_PASSWORD_REQUIRED');
    expect(
      (await here.put('/api/user/self', { password: 'password-2', original_password: 'wrong-one' })).body.code,
    ).toBe('ORIGINAL_PASSWORD_WRONG');
    expect(
      (await here.put('/api/user/self', { password: 'password-1', original_password: 'password-1' })).body.code,
    ).toBe('PASSWORD_UNCHANGED');
    expect((await here.put('/api/user/self', { password: 'short', original_password: 'password-1' })).body.code).toBe(
      'PASSWORD_LENGTH',
    );
    expect(
      (await here.put('/api/user/self', { password: 'password-2', original_password: 'password-1' })).body.success,
    ).toBe(true);
    expect((await here.get('/api/user/self')).status).toBe(200);
    expect((await elsewhere.get('/api/user/self')).status).toBe(401);
    expect((await client().login('changer', 'password-2')).body.success).toBe(true);
  });

  it('shows the own account without secrets, and the usable groups', async () => {
    const c = await user('viewer');
    const self = (await c.get('/api/user/self')).body.data;
    expect(self).toMatchObject({ username: 'viewer', role: 1, group: 'default', DeletedAt: null });
    expect(self).not.toHaveProperty('password');
    expect((await c.get('/api/user/self/groups')).body.data).toEqual({
      default: { desc: '默认分组', ratio: 1 },
      vip: { desc: 'vip分组', ratio: 1 },
    });
    expect((await c.get('/api/user/models')).body.data).toEqual([]);
    const channel = await gateway.store.db
      .insertInto('channels')
      .values({ type: 1, name: 'c', key_encrypted: 'x', created_time: 1 })
      .returning('id')
      .executeTakeFirstOrThrow();
    await gateway.store.db
      .insertInto('abilities')
      .values([
        { group: 'default', model: 'gpt-4o', channel_id: channel.id, enabled: true },
        { group: 'svip', model: 'secret-model', channel_id: channel.id, enabled: true },
        { group: 'vip', model: 'off-model', channel_id: channel.id, enabled: false },
      ])
      .execute();
    expect((await c.get('/api/user/models')).body.data).toEqual(['gpt-4o']);
  });

  it('saves notification settings, keeping the webhook secret encrypted and out of answers', async () => {
    const c = await user('notified');
    for (const [body, detail] of [
      [{ notify_type: 'pigeon' }, /notify_type/],
      [{ notify_type: 'webhook', webhook_url: 'http://plain.example/hook' }, /https/],
      [{ notify_type: 'webhook' }, /required/],
      [{ quota_warning_threshold: -1 }, /≥ 0/],
      [{ notification_email: 'not-an-email' }, /email/],
    ] as const) {
      const answer = await c.put('/api/user/setting', body);
      expect(answer.status).toBe(200);
      expect(answer.body.code).toBe('SETTING_INVALID');
      expect(answer.body.message).toMatch(detail);
    }
    const saved = await c.put('/api/user/setting', {
      notify_type: 'webhook',
      webhook_url: 'https://hooks.example/notify',
      webhook_secret: 'hook-secret-value',
      quota_warning_threshold: 100000,
      accept_unset_model_ratio_model: true,
    });
    expect(saved.body.success).toBe(true);
    expect((await row(c.userId!)).setting).not.toContain('hook-secret-value');
    const setting = JSON.parse((await c.get('/api/user/self')).body.data.setting);
    expect(setting).toEqual({
      notify_type: 'webhook',
      quota_warning_threshold: 100000,
      webhook_url: 'https://hooks.example/notify',
      webhook_secret_set: true,
      notification_email: '',
      bark_url: '',
      gotify_url: '',
      gotify_priority: 5,
      gotify_token_set: false,
      accept_unset_model_ratio_model: true,
    });
  });

  it('refuses a webhook the gateway may not call when it is saved, as fetch_setting says', async () => {
    const c = await user('hooked');
    const save = (webhook_url: string) => c.put('/api/user/setting', { notify_type: 'webhook', webhook_url });
    for (const [url, reason] of [
      ['https://127.0.0.1/hook', 'private_ip'],
      ['https://[::ffff:169.254.169.254]/latest', 'private_ip'],
      ['https://localhost/hook', 'private_ip'],
      ['https://hooks.example:22/hook', 'port'],
    ] as const) {
      const answer = await save(url);
      expect(answer.status, url).toBe(200);
      expect(answer.body, url).toMatchObject({ success: false, code: 'OUTBOUND_URL_REFUSED' });
      expect(answer.body.message, url).toContain(`(${reason})`);
    }
    expect(JSON.parse((await c.get('/api/user/self')).body.data.setting).webhook_url).toBe('');

    const option = async (key: string, value: string) =>
      expect((await root.put('/api/option/', { key, value })).body.success).toBe(true);
    await option('fetch_setting.allow_private_ip', 'true');
    expect((await save('https://127.0.0.1/hook')).body.success).toBe(true);
    await option('fetch_setting.allow_private_ip', 'false');
    await option('fetch_setting.enable_ssrf_protection', 'false');
    expect((await save('https://hooks.example:22/hook')).body.success).toBe(true);
    await option('fetch_setting.enable_ssrf_protection', 'true');
  });

  it('transfers affiliate earnings of at least one unit, never more than earned, even when racing', async () => {
    const c = await user('earner');
    await gateway.store.db
      .updateTable('users')
      .set({ aff_quota: 800_000, quota: 0 })
      .where('id', '=', c.userId!)
      .execute();
    expect((await c.post('/api/user/aff_transfer', { quota: 499_999 })).body).toMatchObject({
      code: 'TRANSFER_TOO_SMALL',
      message: 'The minimum transfer amount is 500000',
    });
    expect((await c.post('/api/user/aff_transfer', { quota: 900_000 })).body.code).toBe('TRANSFER_EXCEEDS_BALANCE');
    const raced = await Promise.all([1, 2, 3].map(() => c.post('/api/user/aff_transfer', { quota: 600_000 })));
    expect(raced.filter((a) => a.body.success)).toHaveLength(1);
    expect(await row(c.userId!)).toMatchObject({ aff_quota: 200_000, quota: 600_000 });
  });

  it('deletes the own account (a username sent must be its own), and never the root', async () => {
    const c = await user('leaver');
    expect((await c.delete('/api/user/self', { username: 'someone' })).body.code).toBe('DELETE_CONFIRMATION_MISMATCH');
    expect((await root.delete('/api/user/self', { username: 'root' })).body.code).toBe('ROOT_PROTECTED');
    expect((await c.delete('/api/user/self', { username: 'leaver' })).body.success).toBe(true);
    expect((await c.get('/api/user/self')).status).toBe(401);
    expect((await client().login('leaver', 'password-1')).body.code).toBe('LOGIN_FAILED');
    const listed = (await root.get('/api/user/search?keyword=leaver')).body.data.items[0];
    expect(listed.DeletedAt).toMatch(/^\d{4}-/);
    expect((await register('leaver')).body.success).toBe(true);
  });
});
