import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpAt } from '../../gateway/src/domain/accounts/two-factor/totp.ts';
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
 * Two-factor sign-in as new-api's front end drives it (CATALOGUE.md "Two-factor sign-in"): the personal
 * settings card (status, setup, enable, disable, backup codes), the login form's second step (it posts
 * only `{code}`: the pending sign-in rides in its cookie), secure verification and the admin calls.
 */

let g: ContractGateway;

beforeAll(async () => {
  g = await startContractGateway('10.19.9');
});

afterAll(async () => {
  await g?.stop();
});

const codeOf = (secret: string, steps = 0) => totpAt(secret, Date.now() / 1000 + steps * 30);
/** A code used once is refused after: the calls below that need another code forget the step used. */
const forgetStep = (userId: number) =>
  g.gateway.store.db.updateTable('two_factor').set({ last_step: 0 }).where('user_id', '=', userId).execute();

const SESSION_USER: Shape = {
  id: 'integer',
  username: 'string',
  display_name: 'string',
  role: 'integer',
  status: 'integer',
  group: 'string',
};

async function enabled(name: string): Promise<{ c: FrontEnd; secret: string; codes: string[] }> {
  const c = await g.user(name);
  const setup = expectOk(await c.post('/api/user/2fa/setup'));
  expectOk(await c.post('/api/user/2fa/enable', { code: codeOf(setup.secret) }));
  return { c, secret: setup.secret, codes: setup.backup_codes };
}

describe('personal settings card', () => {
  it('status, setup, enable, backup codes and disable answer the shapes the card reads', async () => {
    const c = await g.user('ct-card');
    expectShape(expectOk(await c.get('/api/user/2fa/status')), { enabled: 'boolean', locked: 'boolean' }, 'status');
    const setup = expectOk(await c.post('/api/user/2fa/setup'));
    expectShape(setup, { secret: 'string', qr_code_data: 'string', backup_codes: 'array' }, 'setup');
    for (const code of setup.backup_codes) expect(code).toMatch(/^[A-Z0-9]{8}$/);
    expectRefusal(await c.post('/api/user/2fa/enable', { code: 'nope' }), 'two_factor_code_invalid');
    expectOk(await c.post('/api/user/2fa/enable', { code: codeOf(setup.secret) }));
    const status = expectOk(await c.get('/api/user/2fa/status'));
    expectShape(status, { enabled: 'boolean', locked: 'boolean', backup_codes_remaining: 'integer' }, 'status');
    expect(status.enabled).toBe(true);
    await forgetStep(c.userId!);
    const regenerated = expectOk(await c.post('/api/user/2fa/backup_codes', { code: codeOf(setup.secret) }));
    expectShape(regenerated, { backup_codes: 'array' }, 'backup_codes');
    expect(regenerated.backup_codes).toHaveLength(10);
    expectOk(await c.post('/api/user/2fa/disable', { code: regenerated.backup_codes[0] }));
    expect(expectOk(await c.get('/api/user/2fa/status')).enabled).toBe(false);
  });
});

describe('login form', () => {
  it('answers require_2fa, then the second step with only {code} answers the session user', async () => {
    const { secret } = await enabled('ct-login');
    const c = g.visitor();
    const first = expectOk(await c.login('ct-login', 'password-1'));
    expect(first.require_2fa).toBe(true);
    expect(c.userId).toBeUndefined();
    await forgetStep(
      (
        await g.gateway.store.db
          .selectFrom('users')
          .select('id')
          .where('username', '=', 'ct-login')
          .executeTakeFirstOrThrow()
      ).id,
    );
    const user = expectOk(await c.post('/api/user/login/2fa', { code: codeOf(secret) }));
    expectShape(user, SESSION_USER, 'data');
    c.userId = user.id;
    expect(expectOk(await c.get('/api/user/self')).username).toBe('ct-login');
  });

  it('refuses a second step without a pending sign-in in the envelope', async () => {
    expectRefusal(await g.visitor().post('/api/user/login/2fa', { code: '123456' }), 'two_factor_challenge_expired');
  });
});

describe('secure verification and administrators', () => {
  it('POST /api/verify answers {verified, expires_at}; GET /api/verify/status the same', async () => {
    const { c, secret } = await enabled('ct-verify');
    const token = expectOk(await c.post('/api/token/', { name: 'k' }));
    expectRefusal(await c.post(`/api/token/${token.id}/key`), 'verification_required');
    await forgetStep(c.userId!);
    const verified = expectOk(await c.post('/api/verify', { method: '2fa', code: codeOf(secret) }));
    expectShape(verified, { verified: 'boolean', expires_at: 'integer' }, 'verify');
    expectShape(expectOk(await c.get('/api/verify/status')), { verified: 'boolean', expires_at: 'integer' }, 'status');
    expect(expectOk(await c.post(`/api/token/${token.id}/key`)).key).toBe(token.key);
  });

  it('GET /api/user/2fa/stats and DELETE /api/user/:id/2fa', async () => {
    const { c } = await enabled('ct-reset');
    const stats = expectOk(await g.root.get('/api/user/2fa/stats'));
    expectShape(stats, { total_users: 'integer', enabled_users: 'integer', enabled_rate: 'string' }, 'stats');
    expect(stats.enabled_rate).toMatch(/^\d+\.\d%$/);
    expectOk(await g.root.delete(`/api/user/${c.userId}/2fa`));
    expect(expectOk(await c.get('/api/user/2fa/status')).enabled).toBe(false);
  });
});
