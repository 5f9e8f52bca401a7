import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { clientsFrom, type DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { SoftwareAuthenticator } from '../support/software-authenticator.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
const { client, user } = clientsFrom(() => gateway.url, '10.19.22');
const db = () => gateway.store.db;

const setOption = async (key: string, value: string) =>
  expect((await root.put('/api/option/', { key, value })).body).toMatchObject({ success: true });

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace(), { TRUST_PROXY: 'true' }));
  root = await setupRoot(gateway.url);
  await setOption('passkey.enabled', 'true');
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

/** A signed-in user with a passkey on their own software authenticator. */
async function withPasskey(name: string) {
  const c = await user(name);
  const authenticator = new SoftwareAuthenticator(gateway.url);
  const begin = await c.post('/api/user/passkey/register/begin');
  expect(begin.body, JSON.stringify(begin.body)).toMatchObject({ success: true });
  const finish = await c.post(
    '/api/user/passkey/register/finish',
    authenticator.create(begin.body.data.options.publicKey),
  );
  expect(finish.body, JSON.stringify(finish.body)).toMatchObject({ success: true });
  return { c, authenticator };
}

/** A passkey sign-in from a fresh client: the begin, the assertion and the finish's answer. */
async function passkeySignIn(authenticator: SoftwareAuthenticator, twist = {}) {
  const c = client();
  const begin = await c.post('/api/user/passkey/login/begin');
  expect(begin.body, JSON.stringify(begin.body)).toMatchObject({ success: true });
  const assertion = authenticator.get(begin.body.data.options.publicKey, twist);
  const answer = await c.post('/api/user/passkey/login/finish', assertion);
  if (answer.body?.success) c.userId = answer.body.data.id;
  return { c, assertion, answer };
}

const stored = (userId: number) =>
  db().selectFrom('passkey_credentials').selectAll().where('user_id', '=', userId).executeTakeFirst();

describe('registering', () => {
  it('registers a passkey, lists it, and keeps the public key and counter', async () => {
    const { c, authenticator } = await withPasskey('pk-alice');
    expect((await c.get('/api/user/passkey')).body).toEqual({
      success: true,
      message: '',
      data: { enabled: true, last_used_at: null },
    });
    const row = await stored(c.userId!);
    expect(row).toMatchObject({ credential_id: authenticator.credentialId(), sign_count: 0, attachment: 'platform' });
    expect(JSON.parse(row!.transports)).toEqual(['internal']);
    const nobody = await user('pk-nobody');
    expect((await nobody.get('/api/user/passkey')).body.data).toEqual({ enabled: false });
  });

  it('answers the creation options new-api answers, from the options', async () => {
    const c = await user('pk-options');
    await setOption('passkey.rp_display_name', 'Gate Keys');
    await setOption('passkey.attachment_preference', 'platform');
    try {
      const { publicKey } = (await c.post('/api/user/passkey/register/begin')).body.data.options;
      expect(publicKey.rp).toEqual({ name: 'Gate Keys', id: '127.0.0.1' });
      expect(publicKey.user).toMatchObject({
        name: 'pk-options',
        id: Buffer.from(String(c.userId)).toString('base64url'),
      });
      expect(publicKey.authenticatorSelection).toMatchObject({
        residentKey: 'required',
        userVerification: 'preferred',
        authenticatorAttachment: 'platform',
      });
      expect(publicKey.attestation).toBe('none');
    } finally {
      await setOption('passkey.rp_display_name', '');
      await setOption('passkey.attachment_preference', '');
    }
  });

  it('refuses a response from another origin, for another RP id, or a replayed one', async () => {
    const c = await user('pk-mallory');
    const authenticator = new SoftwareAuthenticator(gateway.url);
    const begin = async () => (await c.post('/api/user/passkey/register/begin')).body.data.options.publicKey;
    const wrongOrigin = authenticator.create(await begin(), { origin: 'https://evil.example' });
    expect(refusalOf(await c.post('/api/user/passkey/register/finish', wrongOrigin))).toEqual({
      status: 200,
      success: false,
      code: 'passkey_response_invalid',
    });
    const wrongRp = authenticator.create(await begin(), { rpId: 'evil.example' });
    expect(refusalOf(await c.post('/api/user/passkey/register/finish', wrongRp))).toMatchObject({
      code: 'passkey_response_invalid',
    });
    const good = authenticator.create(await begin());
    expect((await c.post('/api/user/passkey/register/finish', good)).body).toMatchObject({ success: true });
    expect(refusalOf(await c.post('/api/user/passkey/register/finish', good))).toMatchObject({
      code: 'passkey_challenge_invalid',
    });
    // Another user cannot finish a ceremony this user began.
    const other = await user('pk-mallory-2');
    const stolen = authenticator.create(await begin());
    expect(refusalOf(await other.post('/api/user/passkey/register/finish', stolen))).toMatchObject({
      code: 'passkey_challenge_invalid',
    });
    expect(await stored(other.userId!)).toBeUndefined();
  });

  it("refuses a passkey that is another user's", async () => {
    const { c: owner, authenticator } = await withPasskey('pk-owner');
    const other = await user('pk-borrower');
    const publicKey = (await other.post('/api/user/passkey/register/begin')).body.data.options.publicKey;
    const borrowed = authenticator.create(publicKey, { credentialId: authenticator.credentialId() });
    expect(refusalOf(await other.post('/api/user/passkey/register/finish', borrowed))).toMatchObject({
      code: 'passkey_in_use',
    });
    expect(await stored(other.userId!)).toBeUndefined();
    expect((await stored(owner.userId!))?.credential_id).toBe(authenticator.credentialId());
  });

  it('requires user verification when the option says so', async () => {
    const c = await user('pk-uv');
    await setOption('passkey.user_verification', 'required');
    try {
      const publicKey = (await c.post('/api/user/passkey/register/begin')).body.data.options.publicKey;
      expect(publicKey.authenticatorSelection.userVerification).toBe('required');
      const unverified = new SoftwareAuthenticator(gateway.url).create(publicKey, { userVerified: false });
      expect(refusalOf(await c.post('/api/user/passkey/register/finish', unverified))).toMatchObject({
        code: 'passkey_response_invalid',
      });
    } finally {
      await setOption('passkey.user_verification', 'preferred');
    }
  });

  it('refuses malformed bodies with a clear error and never a 5xx', async () => {
    const c = await user('pk-garbage');
    for (const body of [{}, { id: 'x', rawId: 'x', type: 'public-key', response: { clientDataJSON: '!!' } }]) {
      const answer = await c.post('/api/user/passkey/register/finish', body);
      expect(answer.status).toBeLessThan(500);
      expect(answer.body.success).toBe(false);
    }
    const garbage = {
      id: 'x',
      rawId: 'x',
      type: 'public-key',
      response: { clientDataJSON: 'e30', attestationObject: 'AA' },
    };
    expect(refusalOf(await c.post('/api/user/passkey/register/finish', garbage))).toMatchObject({
      code: 'passkey_challenge_invalid',
    });
  });
});

describe('signing in', () => {
  it('signs in with the passkey alone, starting a session like a password sign-in', async () => {
    const { c: owner, authenticator } = await withPasskey('pk-bob');
    const { c, answer } = await passkeySignIn(authenticator);
    expect(answer.body).toMatchObject({ success: true, data: { id: owner.userId, username: 'pk-bob' } });
    expect((await c.get('/api/user/self')).body).toMatchObject({ success: true, data: { username: 'pk-bob' } });
    const row = await stored(owner.userId!);
    expect(row?.sign_count).toBe(1);
    expect(row?.last_used_at).toBeGreaterThan(Date.now() / 1000 - 60);
    expect((await owner.get('/api/user/passkey')).body.data.last_used_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    const user = await db()
      .selectFrom('users')
      .select('last_login_at')
      .where('id', '=', owner.userId!)
      .executeTakeFirst();
    expect(user?.last_login_at).toBeGreaterThan(Date.now() / 1000 - 60);
  });

  it('refuses a replayed assertion, a wrong origin or RP id, and a counter going backwards', async () => {
    const { authenticator } = await withPasskey('pk-carol');
    const { c, assertion } = await passkeySignIn(authenticator);
    expect(refusalOf(await c.post('/api/user/passkey/login/finish', assertion))).toMatchObject({
      code: 'passkey_challenge_invalid',
    });
    expect(refusalOf((await passkeySignIn(authenticator, { origin: 'https://evil.example' })).answer)).toMatchObject({
      code: 'passkey_response_invalid',
    });
    expect(refusalOf((await passkeySignIn(authenticator, { rpId: 'evil.example' })).answer)).toMatchObject({
      code: 'passkey_response_invalid',
    });
    // The stored counter is 1 now; an authenticator answering 1 again (or less) is a clone.
    expect(refusalOf((await passkeySignIn(authenticator, { counter: 1 })).answer)).toMatchObject({
      code: 'passkey_counter_regressed',
    });
    expect((await passkeySignIn(authenticator, { counter: 7 })).answer.body).toMatchObject({ success: true });
  });

  it('does not ask a user with two-factor sign-in for a code, and refuses a banned user', async () => {
    const { c: owner, authenticator } = await withPasskey('pk-dave');
    await db()
      .insertInto('two_factor')
      .values({ user_id: owner.userId!, secret: 'x', enabled: true, created_at: 1 })
      .execute();
    const { answer } = await passkeySignIn(authenticator);
    expect(answer.body).toMatchObject({ success: true, data: { id: owner.userId } });
    expect(answer.body.data.require_2fa).toBeUndefined();
    await db().updateTable('users').set({ status: 2 }).where('id', '=', owner.userId!).execute();
    const banned = await passkeySignIn(authenticator);
    expect(refusalOf(banned.answer)).toMatchObject({ success: false, code: 'USER_BANNED' });
    expect(banned.c.cookie).toBe('');
  });

  it('refuses an unknown passkey', async () => {
    const stranger = new SoftwareAuthenticator(gateway.url);
    const c = await user('pk-stranger');
    stranger.create((await c.post('/api/user/passkey/register/begin')).body.data.options.publicKey);
    expect(refusalOf((await passkeySignIn(stranger)).answer)).toMatchObject({ code: 'passkey_unknown_credential' });
  });
});

describe('removing', () => {
  it("deletes the user's own passkey, but not the last way into an account", async () => {
    const { c, authenticator } = await withPasskey('pk-erin');
    await db().updateTable('users').set({ password: '' }).where('id', '=', c.userId!).execute();
    expect(refusalOf(await c.delete('/api/user/passkey'))).toMatchObject({ code: 'passkey_last_sign_in_method' });
    expect(await stored(c.userId!)).toBeDefined();
    await db().updateTable('users').set({ github_id: 'gh-erin' }).where('id', '=', c.userId!).execute();
    expect((await c.delete('/api/user/passkey')).body).toMatchObject({ success: true });
    expect((await c.get('/api/user/passkey')).body.data).toEqual({ enabled: false });
    expect(refusalOf((await passkeySignIn(authenticator)).answer)).toMatchObject({
      code: 'passkey_unknown_credential',
    });
  });

  it('counts as a way to sign in: the last provider binding can go while the passkey stays', async () => {
    const { c, authenticator } = await withPasskey('pk-ivy');
    await db().updateTable('users').set({ password: '', github_id: 'gh-ivy' }).where('id', '=', c.userId!).execute();
    expect((await c.delete('/api/user/oauth/bindings/github')).body).toMatchObject({ success: true });
    // Now the passkey is the last way in, and stays.
    expect(refusalOf(await c.delete('/api/user/passkey'))).toMatchObject({ code: 'passkey_last_sign_in_method' });
    expect((await passkeySignIn(authenticator)).answer.body).toMatchObject({ success: true });
  });

  it('lets an administrator reset a lower-ranked user, and nobody else', async () => {
    const { c, authenticator } = await withPasskey('pk-frank');
    const peer = await user('pk-peer');
    expect((await peer.delete(`/api/user/${c.userId}/reset_passkey`)).body.success).toBe(false);
    expect(await stored(c.userId!)).toBeDefined();
    expect((await root.delete(`/api/user/${c.userId}/reset_passkey`)).body).toMatchObject({ success: true });
    expect(refusalOf((await passkeySignIn(authenticator)).answer)).toMatchObject({
      code: 'passkey_unknown_credential',
    });
    expect(refusalOf(await root.delete(`/api/user/${c.userId}/reset_passkey`))).toMatchObject({
      code: 'passkey_not_registered',
    });
    expect(refusalOf(await root.delete('/api/user/999999/reset_passkey'))).toMatchObject({ code: 'USER_NOT_FOUND' });
  });

  it('removes the passkey of an account deleted by its owner or an administrator', async () => {
    const { c } = await withPasskey('pk-gone');
    expect((await c.delete('/api/user/self')).body).toMatchObject({ success: true });
    expect(await stored(c.userId!)).toBeUndefined();
    const { c: managed } = await withPasskey('pk-managed');
    expect((await root.post('/api/user/manage', { id: managed.userId, action: 'delete' })).body).toMatchObject({
      success: true,
    });
    expect(await stored(managed.userId!)).toBeUndefined();
    const { c: removed, authenticator } = await withPasskey('pk-removed');
    expect((await root.delete(`/api/user/${removed.userId}`)).body).toMatchObject({ success: true });
    expect(await stored(removed.userId!)).toBeUndefined();
    expect(refusalOf((await passkeySignIn(authenticator)).answer)).toMatchObject({
      code: 'passkey_unknown_credential',
    });
  });
});

describe('step-up verification by passkey', () => {
  it('a user with a passkey and no code verifies with it before revealing a key', async () => {
    const { c, authenticator } = await withPasskey('pk-grace');
    const token = (await c.post('/api/token/', { name: 'k' })).body.data;
    expect(refusalOf(await c.post(`/api/token/${token.id}/key`))).toMatchObject({ code: 'verification_required' });
    expect(refusalOf(await c.post('/api/verify', { method: 'passkey' }))).toMatchObject({
      code: 'passkey_not_verified',
    });

    const begin = await c.post('/api/user/passkey/verify/begin');
    const publicKey = begin.body.data.options.publicKey;
    expect(publicKey.allowCredentials).toEqual([
      { id: authenticator.credentialId(), type: 'public-key', transports: ['internal'] },
    ]);
    expect((await c.post('/api/user/passkey/verify/finish', authenticator.get(publicKey))).body).toMatchObject({
      success: true,
    });
    const verified = await c.post('/api/verify', { method: 'passkey' });
    expect(verified.body).toMatchObject({ success: true, data: { verified: true } });
    expect((await c.post(`/api/token/${token.id}/key`)).body).toMatchObject({
      success: true,
      data: { key: token.key },
    });
    // The passkey verification turned into one step-up: it cannot be used again.
    expect(refusalOf(await c.post('/api/verify', { method: 'passkey' }))).toMatchObject({
      code: 'passkey_not_verified',
    });
  });

  it("refuses another user's passkey for a verification", async () => {
    const { c } = await withPasskey('pk-heidi');
    const { authenticator: other } = await withPasskey('pk-ivan');
    const publicKey = (await c.post('/api/user/passkey/verify/begin')).body.data.options.publicKey;
    const foreign = other.get(publicKey, { credentialId: other.credentialId() });
    expect(refusalOf(await c.post('/api/user/passkey/verify/finish', foreign))).toMatchObject({
      code: 'passkey_unknown_credential',
    });
    const none = await user('pk-none');
    expect(refusalOf(await none.post('/api/user/passkey/verify/begin'))).toMatchObject({
      code: 'passkey_not_registered',
    });
  });
});

describe('settings', () => {
  it('answers the passkey settings in /api/status, and the switch off refuses every ceremony', async () => {
    const { c, authenticator } = await withPasskey('pk-judy');
    expect((await client().get('/api/status')).body.data).toMatchObject({
      passkey_login: true,
      passkey_display_name: '',
      passkey_rp_id: '',
      passkey_origins: '',
      passkey_allow_insecure: false,
      passkey_user_verification: 'preferred',
      passkey_attachment: '',
    });
    await setOption('passkey.enabled', 'false');
    try {
      expect((await client().get('/api/status')).body.data.passkey_login).toBe(false);
      for (const path of ['login/begin', 'register/begin', 'verify/begin']) {
        const who = path === 'login/begin' ? client() : c;
        expect(refusalOf(await who.post(`/api/user/passkey/${path}`))).toEqual({
          status: 200,
          success: false,
          code: 'passkey_disabled',
        });
      }
    } finally {
      await setOption('passkey.enabled', 'true');
    }
    expect((await passkeySignIn(authenticator)).answer.body).toMatchObject({ success: true });
  });

  it('uses the configured origins and RP id, and refuses plain http unless allowed', async () => {
    const c = await user('pk-origins');
    await setOption('passkey.origins', 'http://gw.example.com');
    try {
      expect(refusalOf(await c.post('/api/user/passkey/register/begin'))).toMatchObject({
        code: 'passkey_https_required',
      });
      await setOption('passkey.allow_insecure_origin', 'true');
      const { publicKey } = (await c.post('/api/user/passkey/register/begin')).body.data.options;
      expect(publicKey.rp.id).toBe('gw.example.com');
      // The request's own origin is no longer one of the allowed ones.
      const answer = new SoftwareAuthenticator(gateway.url).create(publicKey, { rpId: 'gw.example.com' });
      expect(refusalOf(await c.post('/api/user/passkey/register/finish', answer))).toMatchObject({
        code: 'passkey_response_invalid',
      });
      await setOption('passkey.rp_id', 'example.com');
      expect((await c.post('/api/user/passkey/register/begin')).body.data.options.publicKey.rp.id).toBe('example.com');
    } finally {
      await setOption('passkey.origins', '');
      await setOption('passkey.rp_id', '');
      await setOption('passkey.allow_insecure_origin', 'false');
    }
  });
});
