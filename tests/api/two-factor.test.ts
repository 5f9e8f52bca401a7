import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpAt } from '../../gateway/src/domain/accounts/two-factor/totp.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { clientsFrom, type DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
const { client, user } = clientsFrom(() => gateway.url, '10.19.1');
const db = () => gateway.store.db;

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

/** The code an authenticator shows now (offset in 30-second steps: -1, 0 or +1 are accepted). */
const codeOf = (secret: string, steps = 0) => totpAt(secret, Date.now() / 1000 + steps * 30);

/**
 * A code of a step not used yet: a code can be used once, so a test that needs several in a row
 * forgets the last step used (the replay guard itself is tested on its own).
 */
async function freshCode(userId: number, secret: string): Promise<string> {
  await db().updateTable('two_factor').set({ last_step: 0 }).where('user_id', '=', userId).execute();
  return codeOf(secret);
}

/** A user with two-factor sign-in enabled: the client (signed in), its secret and its backup codes. */
async function withTwoFactor(name: string) {
  const c = await user(name);
  const setup = await c.post('/api/user/2fa/setup');
  expect(setup.body, JSON.stringify(setup.body)).toMatchObject({ success: true });
  const { secret, backup_codes: backupCodes } = setup.body.data as { secret: string; backup_codes: string[] };
  expect((await c.post('/api/user/2fa/enable', { code: codeOf(secret) })).body).toMatchObject({ success: true });
  return { c, secret, backupCodes };
}

/** A password sign-in of a user with two-factor sign-in: the pending sign-in's token. */
async function firstStep(c: DashboardClient, username: string): Promise<string> {
  const answer = await c.post('/api/user/login', { username, password: 'password-1' });
  expect(answer.body).toMatchObject({ success: true, data: { require_2fa: true } });
  return answer.body.data.flow_token;
}

describe('setting up', () => {
  it('sets up, enables with a code of the new secret, and keeps the secret encrypted', async () => {
    const alice = await user('tf-alice');
    expect((await alice.get('/api/user/2fa/status')).body).toMatchObject({
      success: true,
      data: { enabled: false, locked: false },
    });
    const setup = await alice.post('/api/user/2fa/setup');
    const { secret, qr_code_data: qr, backup_codes: codes } = setup.body.data;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(qr).toContain(`secret=${secret}`);
    expect(qr.startsWith('otpauth://totp/')).toBe(true);
    expect(codes).toHaveLength(10);
    // Not enabled before a code proves the authenticator has the secret.
    expect((await alice.get('/api/user/2fa/status')).body.data.enabled).toBe(false);
    const stored = await db()
      .selectFrom('two_factor')
      .selectAll()
      .where('user_id', '=', alice.userId!)
      .executeTakeFirstOrThrow();
    expect(stored.secret).not.toContain(secret);
    const backups = await db()
      .selectFrom('two_factor_backup_codes')
      .select('code_hash')
      .where('user_id', '=', alice.userId!)
      .execute();
    expect(backups).toHaveLength(10);
    for (const code of codes) expect(backups.map((b) => b.code_hash)).not.toContain(code);

    const wrong = codeOf(secret) === '000000' ? '111111' : '000000';
    expect(refusalOf(await alice.post('/api/user/2fa/enable', { code: wrong }))).toEqual({
      status: 200,
      success: false,
      code: 'two_factor_code_invalid',
    });
    expect(refusalOf(await alice.post('/api/user/2fa/enable', {}))).toMatchObject({ code: 'two_factor_code_required' });
    expect((await alice.post('/api/user/2fa/enable', { code: codeOf(secret) })).body).toMatchObject({ success: true });
    expect((await alice.get('/api/user/2fa/status')).body.data).toEqual({
      enabled: true,
      locked: false,
      backup_codes_remaining: 10,
    });
    expect(refusalOf(await alice.post('/api/user/2fa/setup'))).toMatchObject({ code: 'two_factor_already_enabled' });
  });

  it('refuses enable before setup, and disable or new codes without an enabled factor', async () => {
    const bob = await user('tf-bob');
    expect(refusalOf(await bob.post('/api/user/2fa/enable', { code: '123456' }))).toMatchObject({
      code: 'two_factor_not_set_up',
    });
    expect(refusalOf(await bob.post('/api/user/2fa/disable', { code: '123456' }))).toMatchObject({
      code: 'two_factor_not_enabled',
    });
    expect(refusalOf(await bob.post('/api/user/2fa/backup_codes', { code: '123456' }))).toMatchObject({
      code: 'two_factor_not_enabled',
    });
  });

  it('answers racing setups and bad input with refusals, never a 5xx', async () => {
    const racer = await user('tf-racer');
    const answers = await Promise.all([1, 2, 3, 4].map(() => racer.post('/api/user/2fa/setup')));
    for (const answer of answers) expect(answer.status).toBe(200);
    expect(answers.some((answer) => answer.body.success)).toBe(true);
    const codes = await db()
      .selectFrom('two_factor_backup_codes')
      .select('code_hash')
      .where('user_id', '=', racer.userId!)
      .execute();
    expect(codes).toHaveLength(10);
    for (const body of [{ code: ['1'] }, { code: { a: 1 } }, { code: 'x'.repeat(65) }]) {
      expect(refusalOf(await racer.post('/api/user/2fa/enable', body))).toMatchObject({ status: 200, success: false });
    }
    expect(
      refusalOf(await client().post('/api/user/login/2fa', { flow_token: 'x'.repeat(129), code: '1' })),
    ).toMatchObject({
      status: 200,
      success: false,
    });
    expect((await client().get('/api/user/2fa/status')).status).toBe(401);
  });

  it('regenerates backup codes with a TOTP code; the old ones stop working', async () => {
    const { c, secret, backupCodes } = await withTwoFactor('tf-regen');
    const answer = await c.post('/api/user/2fa/backup_codes', { code: await freshCode(c.userId!, secret) });
    expect(answer.body).toMatchObject({ success: true });
    const fresh = answer.body.data.backup_codes as string[];
    expect(fresh).toHaveLength(10);
    const next = client();
    const token = await firstStep(next, 'tf-regen');
    expect(
      refusalOf(await next.post('/api/user/login/2fa', { flow_token: token, code: backupCodes[0] })),
    ).toMatchObject({
      code: 'two_factor_code_invalid',
    });
    expect((await next.post('/api/user/login/2fa', { flow_token: token, code: fresh[0] })).body).toMatchObject({
      success: true,
    });
  });

  it('disables with a code, after which the password alone signs in', async () => {
    const { c, secret } = await withTwoFactor('tf-off');
    expect((await c.post('/api/user/2fa/disable', { code: await freshCode(c.userId!, secret) })).body).toMatchObject({
      success: true,
    });
    expect((await c.get('/api/user/2fa/status')).body.data).toEqual({ enabled: false, locked: false });
    const next = client();
    expect((await next.login('tf-off', 'password-1')).body).toMatchObject({
      success: true,
      data: { username: 'tf-off' },
    });
  });
});

describe('signing in with a second factor', () => {
  it('answers require_2fa and no session, then signs in with the code; a code is never accepted twice', async () => {
    const { secret } = await withTwoFactor('tf-carol');
    const c = client();
    const login = await c.post('/api/user/login', { username: 'tf-carol', password: 'password-1' });
    expect(login.body).toMatchObject({ success: true, data: { require_2fa: true } });
    expect(login.body.data.id).toBeUndefined();
    expect(c.cookie).toBe('');
    // The pending sign-in is not a session.
    expect(login.headers.getSetCookie().some((cookie) => cookie.startsWith('session='))).toBe(false);

    const [userRow] = await db().selectFrom('users').select('id').where('username', '=', 'tf-carol').execute();
    const code = await freshCode(userRow!.id, secret);
    const second = await c.post('/api/user/login/2fa', { flow_token: login.body.data.flow_token, code });
    expect(second.body).toMatchObject({ success: true, data: { id: userRow!.id, username: 'tf-carol' } });
    c.userId = second.body.data.id;
    expect((await c.get('/api/user/self')).body).toMatchObject({ success: true, data: { username: 'tf-carol' } });

    // The same code in another sign-in: refused (it was used), and the used pending sign-in is gone.
    const other = client();
    const token = await firstStep(other, 'tf-carol');
    expect(refusalOf(await other.post('/api/user/login/2fa', { flow_token: token, code }))).toMatchObject({
      code: 'two_factor_code_invalid',
    });
    expect(
      refusalOf(
        await c.post('/api/user/login/2fa', { flow_token: login.body.data.flow_token, code: codeOf(secret, 1) }),
      ),
    ).toMatchObject({ code: 'two_factor_challenge_expired' });
  });

  it('takes the pending sign-in from its cookie when the client sends only the code', async () => {
    const { secret } = await withTwoFactor('tf-cookie');
    const c = client();
    const login = await c.post('/api/user/login', { username: 'tf-cookie', password: 'password-1' });
    const pending = login.headers.getSetCookie().find((cookie) => cookie.startsWith('two_factor_pending='));
    expect(pending).toContain('HttpOnly');
    const [row] = await db().selectFrom('users').select('id').where('username', '=', 'tf-cookie').execute();
    const code = await freshCode(row!.id, secret);
    const answer = await c.call('POST', '/api/user/login/2fa', { code }, { cookie: pending!.split(';')[0]! });
    expect(answer.body).toMatchObject({ success: true, data: { username: 'tf-cookie' } });
  });

  it('signs in with a backup code once; the same backup code then fails', async () => {
    const { backupCodes } = await withTwoFactor('tf-dave');
    const c = client();
    const token = await firstStep(c, 'tf-dave');
    // Typed in lower case with spaces: still the code.
    const typed = ` ${backupCodes[3]!.toLowerCase()} `;
    expect((await c.post('/api/user/login/2fa', { flow_token: token, code: typed })).body).toMatchObject({
      success: true,
    });
    const again = client();
    const token2 = await firstStep(again, 'tf-dave');
    expect(
      refusalOf(await again.post('/api/user/login/2fa', { flow_token: token2, code: backupCodes[3] })),
    ).toMatchObject({
      code: 'two_factor_code_invalid',
    });
    c.userId = (
      await db().selectFrom('users').select('id').where('username', '=', 'tf-dave').executeTakeFirstOrThrow()
    ).id;
    expect((await c.get('/api/user/2fa/status')).body.data.backup_codes_remaining).toBe(9);
  });

  it('bounds the attempts of a pending sign-in, and locks the factor after five wrong codes', async () => {
    const { c: owner, secret } = await withTwoFactor('tf-erin');
    const c = client();
    const token = await firstStep(c, 'tf-erin');
    const right = await freshCode(owner.userId!, secret);
    const wrong = right === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      expect(refusalOf(await c.post('/api/user/login/2fa', { flow_token: token, code: wrong }))).toMatchObject({
        code: 'two_factor_code_invalid',
      });
    }
    // Out of attempts: even the right code no longer ends this sign-in.
    expect(refusalOf(await c.post('/api/user/login/2fa', { flow_token: token, code: right }))).toMatchObject({
      code: 'two_factor_challenge_expired',
    });
    // Five wrong codes in a row locked the factor: a new sign-in is refused too, with 429.
    const next = client();
    const token2 = await firstStep(next, 'tf-erin');
    const locked = await next.post('/api/user/login/2fa', { flow_token: token2, code: right });
    expect(refusalOf(locked)).toEqual({ status: 429, success: false, code: 'two_factor_locked' });
    expect((await owner.get('/api/user/2fa/status')).body.data.locked).toBe(true);
  });

  it('lets a pending sign-in expire', async () => {
    const { c: owner, secret } = await withTwoFactor('tf-frank');
    const c = client();
    const token = await firstStep(c, 'tf-frank');
    await db()
      .updateTable('two_factor_challenges')
      .set({ expires_at: Math.floor(Date.now() / 1000) - 1 })
      .where('user_id', '=', owner.userId!)
      .execute();
    expect(
      refusalOf(
        await c.post('/api/user/login/2fa', { flow_token: token, code: await freshCode(owner.userId!, secret) }),
      ),
    ).toMatchObject({ code: 'two_factor_challenge_expired' });
    expect(refusalOf(await c.post('/api/user/login/2fa', { code: '123456' }))).toMatchObject({
      code: 'two_factor_challenge_expired',
    });
  });
});

describe('third-party sign-in', () => {
  it('a Telegram sign-in of a user with two-factor sign-in gets a pending sign-in, not a session', async () => {
    const botToken = '555:TWO-FACTOR-TEST';
    for (const [key, value] of Object.entries({ TelegramOAuthEnabled: 'true', TelegramBotToken: botToken })) {
      expect((await root.put('/api/option/', { key, value })).body).toMatchObject({ success: true });
    }
    const { c: owner, secret } = await withTwoFactor('tf-tele');
    await db().updateTable('users').set({ telegram_id: '9100001' }).where('id', '=', owner.userId!).execute();
    const fields: Record<string, string> = {
      id: '9100001',
      first_name: 'Tele',
      auth_date: String(Math.floor(Date.now() / 1000)),
    };
    const check = Object.keys(fields)
      .sort()
      .map((k) => `${k}=${fields[k]}`)
      .join('\n');
    const hash = createHmac('sha256', createHash('sha256').update(botToken).digest()).update(check).digest('hex');
    const c = client();
    const answer = await c.get(`/api/oauth/telegram/login?${new URLSearchParams({ ...fields, hash })}`);
    expect(answer.body).toMatchObject({ success: true, data: { require_2fa: true } });
    expect(c.cookie).toBe('');
    const done = await c.post('/api/user/login/2fa', {
      flow_token: answer.body.data.flow_token,
      code: await freshCode(owner.userId!, secret),
    });
    expect(done.body).toMatchObject({ success: true, data: { id: owner.userId, username: 'tf-tele' } });
    expect(c.cookie).not.toBe('');
  });
});

describe('step-up verification', () => {
  it('a user with two-factor sign-in verifies before revealing a key; one without does not', async () => {
    const { c, secret } = await withTwoFactor('tf-grace');
    const token = (await c.post('/api/token/', { name: 'k' })).body.data;
    expect(refusalOf(await c.post(`/api/token/${token.id}/key`))).toEqual({
      status: 200,
      success: false,
      code: 'verification_required',
    });
    expect(refusalOf(await c.post('/api/token/batch/keys', { ids: [token.id] }))).toMatchObject({
      code: 'verification_required',
    });
    expect((await c.get('/api/verify/status')).body.data).toEqual({ verified: false });
    expect(refusalOf(await c.post('/api/verify', { method: '2fa', code: '12' }))).toMatchObject({
      code: 'two_factor_code_invalid',
    });
    // Passkey step-up needs the passkey ceremony first (tests/api/passkeys.test.ts); other methods are unknown.
    expect(refusalOf(await c.post('/api/verify', { method: 'passkey' }))).toMatchObject({
      code: 'passkey_not_verified',
    });
    expect(refusalOf(await c.post('/api/verify', { method: 'sms' }))).toMatchObject({
      code: 'verification_method_unsupported',
    });
    const verified = await c.post('/api/verify', { method: '2fa', code: await freshCode(c.userId!, secret) });
    expect(verified.body).toMatchObject({ success: true, data: { verified: true } });
    expect(verified.body.data.expires_at).toBeGreaterThan(Date.now() / 1000 + 200);
    expect((await c.post(`/api/token/${token.id}/key`)).body).toMatchObject({
      success: true,
      data: { key: token.key },
    });
    // The verification belongs to this session: another sign-in of the same user starts unverified.
    const other = client();
    const pending = await firstStep(other, 'tf-grace');
    await other.post('/api/user/login/2fa', { flow_token: pending, code: await freshCode(c.userId!, secret) });
    other.userId = c.userId;
    expect(refusalOf(await other.post(`/api/token/${token.id}/key`))).toMatchObject({ code: 'verification_required' });
    // And it runs out.
    await db()
      .updateTable('sessions')
      .set({ verified_until: Math.floor(Date.now() / 1000) - 1 })
      .where('user_id', '=', c.userId!)
      .execute();
    expect(refusalOf(await c.post(`/api/token/${token.id}/key`))).toMatchObject({ code: 'verification_required' });

    const plain = await user('tf-plain');
    const own = (await plain.post('/api/token/', { name: 'k' })).body.data;
    expect((await plain.post(`/api/token/${own.id}/key`)).body).toMatchObject({ success: true });
  });

  it('a caller with an access token verifies too, and its verification is its own', async () => {
    const { c, secret } = await withTwoFactor('tf-script');
    const token = (await c.post('/api/token/', { name: 'k' })).body.data;
    const accessToken = (await c.get('/api/user/token')).body.data as string;
    const script = client();
    script.headers.authorization = `Bearer ${accessToken}`;
    script.userId = c.userId;
    expect(refusalOf(await script.post(`/api/token/${token.id}/key`))).toMatchObject({ code: 'verification_required' });
    expect(
      (await script.post('/api/verify', { method: '2fa', code: await freshCode(c.userId!, secret) })).body,
    ).toMatchObject({
      success: true,
    });
    expect((await script.post(`/api/token/${token.id}/key`)).body).toMatchObject({
      success: true,
      data: { key: token.key },
    });
    // The browser session did not verify.
    expect(refusalOf(await c.post(`/api/token/${token.id}/key`))).toMatchObject({ code: 'verification_required' });
  });

  it("an administrator with two-factor sign-in verifies before changing another user's quota or deleting a channel", async () => {
    const { c: boss, secret } = await withTwoFactor('tf-boss');
    expect((await root.post('/api/user/manage', { id: boss.userId, action: 'promote' })).body).toMatchObject({
      success: true,
    });
    const target = await user('tf-target');
    const quota = (await boss.get(`/api/user/${target.userId}`)).body.data.quota as number;
    expect(
      refusalOf(
        await boss.post('/api/user/manage', { id: target.userId, action: 'add_quota', mode: 'add', value: 10 }),
      ),
    ).toMatchObject({ code: 'verification_required' });
    expect(refusalOf(await boss.put('/api/user/', { id: target.userId, quota: quota + 5 }))).toMatchObject({
      code: 'verification_required',
    });
    // An edit that leaves the quota as it is needs no verification.
    expect((await boss.put('/api/user/', { id: target.userId, quota, remark: 'noted' })).body).toMatchObject({
      success: true,
    });
    const channel = (await root.post('/api/channel/', { name: 'tf-ch', key: 'sk-x', models: 'gpt-4o' })).body.data;
    const channelId =
      channel?.id ??
      (await db().selectFrom('channels').select('id').where('name', '=', 'tf-ch').executeTakeFirstOrThrow()).id;
    expect(refusalOf(await boss.delete(`/api/channel/${channelId}`))).toMatchObject({ code: 'verification_required' });
    const rest = await boss.call('DELETE', `/rest/channel/${channelId}`);
    expect(rest.status).toBe(403);
    expect(rest.body.code ?? rest.body.error?.code).toBe('verification_required');
    expect((await target.get('/api/user/self')).body.data.quota).toBe(quota);

    await boss.post('/api/verify', { method: '2fa', code: await freshCode(boss.userId!, secret) });
    expect(
      (await boss.post('/api/user/manage', { id: target.userId, action: 'add_quota', mode: 'add', value: 10 })).body,
    ).toMatchObject({ success: true });
    expect((await boss.delete(`/api/channel/${channelId}`)).body).toMatchObject({ success: true });
  });
});

describe('administrators', () => {
  it('counts users with two-factor sign-in and resets a lower-ranked user', async () => {
    const stats = await root.get('/api/user/2fa/stats');
    const total = Number(
      (
        await db()
          .selectFrom('users')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('deleted_at', 'is', null)
          .executeTakeFirstOrThrow()
      ).n,
    );
    const enabled = Number(
      (
        await db()
          .selectFrom('two_factor')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('enabled', '=', true)
          .executeTakeFirstOrThrow()
      ).n,
    );
    expect(stats.body).toMatchObject({
      success: true,
      data: { total_users: total, enabled_users: enabled, enabled_rate: `${((enabled / total) * 100).toFixed(1)}%` },
    });
    const { c } = await withTwoFactor('tf-lost');
    expect((await root.delete(`/api/user/${c.userId}/2fa`)).body).toMatchObject({ success: true });
    expect((await c.get('/api/user/2fa/status')).body.data.enabled).toBe(false);
    expect(refusalOf(await root.delete(`/api/user/${c.userId}/2fa`))).toMatchObject({ code: 'two_factor_not_enabled' });
    const plain = await user('tf-peer');
    expect(refusalOf(await plain.get('/api/user/2fa/stats'))).toMatchObject({ code: 'FORBIDDEN' });
    expect(refusalOf(await plain.delete(`/api/user/${c.userId}/2fa`))).toMatchObject({ code: 'FORBIDDEN' });
  });

  it('with TwoFactorRequiredForAdmins, an administrator without it reaches only the user routes until enabling it', async () => {
    // Root enables its own second factor first, or the rule would lock it out of the option page too.
    const setup = await root.post('/api/user/2fa/setup');
    const rootSecret = setup.body.data.secret as string;
    expect((await root.post('/api/user/2fa/enable', { code: codeOf(rootSecret) })).body).toMatchObject({
      success: true,
    });
    expect((await root.put('/api/option/', { key: 'TwoFactorRequiredForAdmins', value: 'true' })).body).toMatchObject({
      success: true,
    });
    try {
      const admin = await user('tf-admin');
      expect((await root.post('/api/user/manage', { id: admin.userId, action: 'promote' })).body).toMatchObject({
        success: true,
      });
      expect(refusalOf(await admin.get('/api/user/'))).toEqual({
        status: 200,
        success: false,
        code: 'two_factor_required',
      });
      expect(refusalOf(await admin.get('/api/channel/'))).toMatchObject({ code: 'two_factor_required' });
      expect((await admin.call('GET', '/rest/user')).status).toBe(403);
      expect((await admin.get('/api/user/self')).body).toMatchObject({ success: true });
      const s = await admin.post('/api/user/2fa/setup');
      expect((await admin.post('/api/user/2fa/enable', { code: codeOf(s.body.data.secret) })).body).toMatchObject({
        success: true,
      });
      expect((await admin.get('/api/user/')).body).toMatchObject({ success: true });
      expect((await admin.call('GET', '/rest/user')).status).toBe(200);
      // Common users are not concerned.
      const plain = await user('tf-common');
      expect((await plain.get('/api/user/self')).body).toMatchObject({ success: true });
    } finally {
      await root.put('/api/option/', { key: 'TwoFactorRequiredForAdmins', value: 'false' });
    }
  });
});
