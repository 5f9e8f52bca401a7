import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SoftwareAuthenticator } from '../support/software-authenticator.ts';
import {
  type ContractGateway,
  expectOk,
  expectRefusal,
  expectShape,
  type FrontEnd,
  type Shape,
  startContractGateway,
} from './support.ts';

/**
 * Passkeys as new-api's front end drives them (CATALOGUE.md "Passkeys"): the personal settings card (status,
 * register begin/finish, delete), the login page's passkey button, secure verification by passkey, the
 * status flags and the admin reset. Options come back as `data.options.publicKey` (helpers/passkey.js reads
 * `publicKey`); credentials go back as the JSON helpers/passkey.js builds (base64url, `userHandle` null allowed).
 */

let g: ContractGateway;

beforeAll(async () => {
  g = await startContractGateway('10.19.23');
  expectOk(await g.root.put('/api/option/', { key: 'passkey.enabled', value: 'true' }));
});

afterAll(async () => {
  await g?.stop();
});

const SESSION_USER: Shape = {
  id: 'integer',
  username: 'string',
  display_name: 'string',
  role: 'integer',
  status: 'integer',
  group: 'string',
};
const CREATION: Shape = {
  challenge: 'string',
  rp: 'object',
  user: 'object',
  pubKeyCredParams: 'array',
  authenticatorSelection: 'object',
};
const REQUEST: Shape = { challenge: 'string', rpId: 'string' };

/** A user with a passkey registered as the personal settings card does it. */
async function registered(name: string): Promise<{ c: FrontEnd; authenticator: SoftwareAuthenticator }> {
  const c = await g.user(name);
  const authenticator = new SoftwareAuthenticator(g.url);
  const begin = expectOk(await c.post('/api/user/passkey/register/begin'));
  expectShape(begin.options.publicKey, CREATION, 'register/begin data.options.publicKey');
  expectOk(await c.post('/api/user/passkey/register/finish', authenticator.create(begin.options.publicKey)));
  return { c, authenticator };
}

describe('personal settings card', () => {
  it('status, register and delete answer what the card reads', async () => {
    const c = await g.user('ct-pk-card');
    expect(expectOk(await c.get('/api/user/passkey'))).toEqual({ enabled: false });
    const { c: owner } = await registered('ct-pk-owner');
    const status = expectOk(await owner.get('/api/user/passkey'));
    expectShape(status, { enabled: 'boolean', last_used_at: ['string', 'null'] }, 'status');
    expect(status.enabled).toBe(true);
    const removed = await owner.delete('/api/user/passkey');
    expect(removed.body).toMatchObject({ success: true, message: expect.any(String) });
    expect(expectOk(await owner.get('/api/user/passkey')).enabled).toBe(false);
  });
});

describe('login page', () => {
  it('begin and finish sign in with the session user, as /api/user/login answers it', async () => {
    const { c: owner, authenticator } = await registered('ct-pk-login');
    const visitor = g.visitor();
    const begin = expectOk(await visitor.post('/api/user/passkey/login/begin'));
    expectShape(begin.options.publicKey, REQUEST, 'login/begin data.options.publicKey');
    const assertion = authenticator.get(begin.options.publicKey);
    // helpers/passkey.js sends userHandle null when the authenticator gives none.
    const finish = expectOk(
      await visitor.post('/api/user/passkey/login/finish', {
        ...assertion,
        response: { ...assertion.response, userHandle: null },
      }),
    );
    expectShape(finish, SESSION_USER, 'login/finish data');
    expect(finish.id).toBe(owner.userId);
    visitor.userId = finish.id;
    expectOk(await visitor.get('/api/user/self'));
    expectRefusal(await g.visitor().post('/api/user/passkey/login/finish', assertion), 'passkey_challenge_invalid');
  });

  it('answers the passkey flags in /api/status', async () => {
    const status = expectOk(await g.visitor().get('/api/status'));
    expectShape(
      status,
      {
        passkey_login: 'boolean',
        passkey_display_name: 'string',
        passkey_rp_id: 'string',
        passkey_origins: 'string',
        passkey_allow_insecure: 'boolean',
        passkey_user_verification: 'string',
        passkey_attachment: 'string',
      },
      'status',
    );
    expect(status.passkey_login).toBe(true);
  });
});

describe('secure verification', () => {
  it('verify/begin, verify/finish, then POST /api/verify {method: "passkey"} lets a sensitive call through', async () => {
    const { c, authenticator } = await registered('ct-pk-verify');
    const token = expectOk(await c.post('/api/token/', { name: 'k' }));
    expectRefusal(await c.post(`/api/token/${token.id}/key`), 'verification_required');
    const begin = expectOk(await c.post('/api/user/passkey/verify/begin'));
    expectShape(begin.options.publicKey, { ...REQUEST, allowCredentials: 'array' }, 'verify/begin');
    expectOk(await c.post('/api/user/passkey/verify/finish', authenticator.get(begin.options.publicKey)));
    const verified = expectOk(await c.post('/api/verify', { method: 'passkey' }));
    expectShape(verified, { verified: 'boolean', expires_at: 'integer' }, 'verify');
    expect(expectOk(await c.post(`/api/token/${token.id}/key`)).key).toBe(token.key);
  });
});

describe('administrators', () => {
  it("DELETE /api/user/:id/reset_passkey removes a user's passkey", async () => {
    const { c } = await registered('ct-pk-reset');
    const answer = await g.root.delete(`/api/user/${c.userId}/reset_passkey`);
    expect(answer.body).toMatchObject({ success: true, message: expect.any(String) });
    expectRefusal(await g.root.delete(`/api/user/${c.userId}/reset_passkey`), 'passkey_not_registered');
  });
});
