import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SmtpMailer } from '../../gateway/src/domain/accounts/mailer.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { closedPort } from '../support/secrets.ts';
import { type Received, type SmtpInbox, startSmtpInbox } from '../support/smtp.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let smtp: SmtpInbox;
let inbox: Received[] = [];

/** Response bodies are whatever the server sent; the assertions check their shape. */
const read = (response: Response): Promise<any> => response.json();

/** The site fields mails are written with. */
const SITE = { SystemName: 'Tollgate Test', ServerAddress: 'https://gate.example.com/' };

beforeAll(async () => {
  smtp = await startSmtpInbox();
  inbox = smtp.inbox;

  const database = await createTestDatabase();
  drop = database.drop;
  // The critical per-IP limit (20 per 20 minutes) would stop this file halfway; it has its own tests.
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace(), { CRITICAL_RATE_LIMIT: '100000' }));
  await gateway.options.setMany({ ...smtp.options, ...SITE });
  const setup = await api('/api/setup', {
    method: 'POST',
    body: { username: 'root', password: 'root-pass-1', confirmPassword: 'root-pass-1' },
  });
  expect(setup.status).toBe(200);
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await smtp?.close();
});

beforeEach(async () => {
  // Every test starts from working mail and no restrictions; a test that changes them changes them back here.
  await gateway.options.setMany({
    ...smtp.options,
    ...SITE,
    EmailVerificationEnabled: 'false',
    EmailDomainRestrictionEnabled: 'false',
    EmailAliasRestrictionEnabled: 'false',
    TurnstileCheckEnabled: 'false',
  });
});

// --- helpers ---

interface Session {
  cookie: string;
  id: number;
}

async function api(
  path: string,
  init: { method?: string; body?: unknown; session?: Session | undefined; language?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { 'accept-language': init.language ?? 'en' };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.session) {
    headers.cookie = init.session.cookie;
    headers['new-api-user'] = String(init.session.id);
  }
  return fetch(`${gateway.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

async function login(username: string, password: string): Promise<Session> {
  const response = await api('/api/user/login', { method: 'POST', body: { username, password } });
  const body = await read(response);
  expect(body.success, body.message).toBe(true);
  const cookie = response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0] ?? '')
    .find((c) => c.startsWith('session='));
  expect(cookie).toBeDefined();
  return { cookie: cookie!, id: body.data.id };
}

/** A user without email, registered while email verification is off. */
async function plainUser(username: string, password = 'user-pass-1'): Promise<Session> {
  const body = await read(await api('/api/user/register', { method: 'POST', body: { username, password } }));
  expect(body.success, body.message).toBe(true);
  return login(username, password);
}

const mailsTo = (address: string) => inbox.filter((m) => m.to.includes(address.toLowerCase()));

function codeIn(mail: Received | undefined): string {
  const code = mail?.body.match(/verification code is: (\d{6})/)?.[1];
  expect(code, 'a six-digit code in the mail').toBeDefined();
  return code!;
}

const storedCode = (purpose: string, email: string) =>
  gateway.cluster.kv.get(`verify:${purpose}:${email.trim().toLowerCase()}`);

// --- tests ---

describe('sign-up verification code (GET /api/verification)', () => {
  it('mails a code that registers once; wrong codes are refused and a used code cannot be reused', async () => {
    await gateway.options.setMany({ EmailVerificationEnabled: 'true' });
    const email = 'alice@example.com';
    const sent = await read(await api(`/api/verification?${q({ email })}`));
    expect(sent).toMatchObject({ success: true });
    expect(sent.message).toMatch(/sent/);

    const mails = mailsTo(email);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toContain('Tollgate Test');
    expect(mails[0]!.body).toContain('10 minutes');
    // Sent as the configured sender, after authenticating with the configured account.
    expect(mails[0]!.from).toBe('noreply@tollgate.test');
    expect(mails[0]!.auth).toEqual({ username: smtp.options.SMTPAccount, password: smtp.options.SMTPToken });
    const code = codeIn(mails[0]);

    const account = { username: 'alice', password: 'alice-pass-1', email };
    const noCode = await read(await api('/api/user/register', { method: 'POST', body: account }));
    expect(noCode.code).toBe('EMAIL_AND_CODE_REQUIRED');
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    const refused = await api('/api/user/register', {
      method: 'POST',
      body: { ...account, verification_code: wrong },
    });
    expect(refused.status).toBe(200);
    expect((await read(refused)).code).toBe('VERIFICATION_CODE_INVALID');

    const registered = await read(
      await api('/api/user/register', { method: 'POST', body: { ...account, verification_code: code } }),
    );
    expect(registered.success, registered.message).toBe(true);
    const alice = await gateway.store.db
      .selectFrom('users')
      .select(['id', 'email'])
      .where('username', '=', 'alice')
      .executeTakeFirstOrThrow();
    expect(alice.email).toBe(email);

    // Free the address again (deregister alice): the used code still does not register anyone.
    const root = await login('root', 'root-pass-1');
    expect((await read(await api(`/api/user/${alice.id}`, { method: 'DELETE', session: root }))).success).toBe(true);
    const reused = await read(
      await api('/api/user/register', {
        method: 'POST',
        body: { username: 'alice2', password: 'alice-pass-1', email, verification_code: code },
      }),
    );
    expect(reused.code).toBe('VERIFICATION_CODE_INVALID');
  });

  it('refuses a second code within 30 seconds with 429 and sends nothing more', async () => {
    const email = 'bob@example.com';
    expect((await api(`/api/verification?${q({ email })}`)).status).toBe(200);
    const again = await api(`/api/verification?${q({ email: 'BOB@example.com' })}`);
    expect(again.status).toBe(429);
    const body = await read(again);
    expect(body.code).toBe('VERIFICATION_RESEND_TOO_SOON');
    expect(body.message).toMatch(/retry in \d+ seconds/);
    expect(mailsTo(email)).toHaveLength(1);
  });

  it('refuses an address a live user already has', async () => {
    const user = await plainUser('taken1');
    await gateway.store.db.updateTable('users').set({ email: 'taken@example.com' }).where('id', '=', user.id).execute();
    const response = await api(`/api/verification?${q({ email: 'Taken@Example.com' })}`);
    expect(response.status).toBe(200);
    expect((await read(response)).code).toBe('EMAIL_TAKEN');
    expect(mailsTo('taken@example.com')).toHaveLength(0);
  });

  it('enforces the domain whitelist and the alias restriction with clear codes', async () => {
    await gateway.options.setMany({
      EmailDomainRestrictionEnabled: 'true',
      EmailDomainWhitelist: 'example.com, corp.test',
      EmailAliasRestrictionEnabled: 'true',
    });
    const outside = await api(`/api/verification?${q({ email: 'carol@elsewhere.org' })}`);
    expect(outside.status).toBe(200);
    const outsideBody = await read(outside);
    expect(outsideBody.code).toBe('EMAIL_DOMAIN_NOT_ALLOWED');
    expect(outsideBody.message).toContain('example.com, corp.test');

    const alias = await read(await api(`/api/verification?${q({ email: 'carol+news@example.com' })}`));
    expect(alias.code).toBe('EMAIL_ALIAS_NOT_ALLOWED');
    expect(inbox.filter((m) => m.to.some((to) => to.startsWith('carol')))).toHaveLength(0);

    // A whitelisted domain passes, whatever its case.
    expect((await read(await api(`/api/verification?${q({ email: 'carol@CORP.test' })}`))).success).toBe(true);
    expect(mailsTo('carol@corp.test')).toHaveLength(1);

    // With the restrictions off, the same addresses are fine.
    await gateway.options.setMany({ EmailDomainRestrictionEnabled: 'false', EmailAliasRestrictionEnabled: 'false' });
    expect((await read(await api(`/api/verification?${q({ email: 'carol+news@elsewhere.org' })}`))).success).toBe(true);
  });

  it.each([
    ['a missing email', '', 200, 'EMAIL_REQUIRED'],
    ['a blank email', `?${q({ email: '   ' })}`, 200, 'EMAIL_REQUIRED'],
    ['no @', `?${q({ email: 'not-an-email' })}`, 200, 'EMAIL_INVALID'],
    ['two addresses', `?${q({ email: 'a@example.com, b@example.com' })}`, 200, 'EMAIL_INVALID'],
    ['a display name', `?${q({ email: 'Eve <eve@example.com>' })}`, 200, 'EMAIL_INVALID'],
    ['an over-long email', `?${q({ email: `${'a'.repeat(250)}@example.com` })}`, 200, 'INVALID_REQUEST'],
  ])('answers %s with the refusal %s', async (_name, query, status, code) => {
    const before = inbox.length;
    const response = await api(`/api/verification${query}`);
    expect(response.status).toBe(status);
    const body = await read(response);
    expect(body).toMatchObject({ success: false, code });
    expect(body.message).not.toBe('');
    expect(inbox.length).toBe(before);
  });

  it('asks for the human check when it is on, before anything is sent', async () => {
    await gateway.options.setMany({ TurnstileCheckEnabled: 'true' });
    const response = await api(`/api/verification?${q({ email: 'dave@example.com' })}`);
    expect((await read(response)).code).toBe('TURNSTILE_REQUIRED');
    const reset = await api(`/api/reset_password?${q({ email: 'dave@example.com' })}`);
    expect((await read(reset)).code).toBe('TURNSTILE_REQUIRED');
    expect(mailsTo('dave@example.com')).toHaveLength(0);
  });

  it('mails in Chinese by default', async () => {
    const email = 'zh@example.com';
    const body = await read(await api(`/api/verification?${q({ email })}`, { language: 'zh-CN' }));
    expect(body.message).toContain('验证码');
    expect(mailsTo(email)[0]!.body).toMatch(/您的验证码为：\d{6}/);
  });
});

describe('mail delivery failures', () => {
  it('refuses with MAIL_NOT_CONFIGURED when no SMTP server is set, and stores nothing', async () => {
    await gateway.options.setMany({ SMTPServer: '' });
    const email = 'erin@example.com';
    const response = await api(`/api/verification?${q({ email })}`);
    expect(response.status).toBe(200);
    const body = await read(response);
    expect(body.code).toBe('MAIL_NOT_CONFIGURED');
    expect(body.message).toMatch(/not configured/);
    expect(await storedCode('register', email)).toBeUndefined();
    const reset = await api(`/api/reset_password?${q({ email })}`);
    expect((await read(reset)).code).toBe('MAIL_NOT_CONFIGURED');
    expect(await storedCode('reset', email)).toBeUndefined();

    // No resend lock was taken: once mail works, the visitor need not wait 30 seconds.
    await gateway.options.setMany({ SMTPServer: '127.0.0.1' });
    expect((await read(await api(`/api/verification?${q({ email })}`))).success).toBe(true);
    expect(mailsTo(email)).toHaveLength(1);
  });

  it('refuses with MAIL_SEND_FAILED quickly when the SMTP server is down, and withdraws the code', async () => {
    await gateway.options.setMany({ SMTPPort: String(await closedPort()) });
    const email = 'frank@example.com';
    const started = Date.now();
    const response = await api(`/api/verification?${q({ email })}`);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(response.status).toBe(200);
    expect((await read(response)).code).toBe('MAIL_SEND_FAILED');
    expect(await storedCode('register', email)).toBeUndefined();

    await gateway.options.setMany({ SMTPPort: smtp.options.SMTPPort });
    expect((await read(await api(`/api/verification?${q({ email })}`))).success).toBe(true);
  });

  it('speaks TLS from the first byte when SMTPSSLEnabled is on, so a plain server fails the handshake', async () => {
    await gateway.options.setMany({ SMTPSSLEnabled: 'true' });
    const email = 'tls@example.com';
    const response = await api(`/api/verification?${q({ email })}`);
    expect(response.status).toBe(200);
    expect((await read(response)).code).toBe('MAIL_SEND_FAILED');
    expect(mailsTo(email)).toHaveLength(0);
  });

  it('gives up on a server that accepts the connection but never greets, instead of hanging', async () => {
    const silent = net.createServer(() => {}); // accepts, says nothing
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      await gateway.options.setMany({ SMTPPort: String((silent.address() as AddressInfo).port) });
      const mailer = new SmtpMailer(gateway.options, { connectMs: 500, greetingMs: 500, socketMs: 500 });
      const started = Date.now();
      const failure = await mailer
        .send({ to: 'grace@example.com', subject: 's', text: 't', html: '<p>t</p>' })
        .catch((e: unknown) => e);
      expect(failure).toMatchObject({ code: 'MAIL_SEND_FAILED', status: 503 });
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      silent.close();
    }
  });
});

describe('password reset', () => {
  it('mails a link whose token resets the password once, ends sessions, and the new password works', async () => {
    const email = 'henry@example.com';
    const henry = await plainUser('henry', 'henry-pass-1');
    await gateway.store.db.updateTable('users').set({ email }).where('id', '=', henry.id).execute();
    expect((await read(await api('/api/user/self', { session: henry }))).success).toBe(true);

    const sent = await read(await api(`/api/reset_password?${q({ email })}`));
    expect(sent.success).toBe(true);
    const mails = mailsTo(email);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toContain('Tollgate Test');
    const link = mails[0]!.body.match(/https:\/\/gate\.example\.com\/user\/reset\?email=([^&\s"<]+)&token=([\w-]+)/);
    expect(link, 'a reset link on the server address').not.toBeNull();
    expect(decodeURIComponent(link![1]!)).toBe(email);
    const token = link![2]!;

    const wrong = await api('/api/user/reset', { method: 'POST', body: { email, token: `${token}x` } });
    expect(wrong.status).toBe(200);
    expect((await read(wrong)).code).toBe('RESET_LINK_INVALID');

    const reset = await read(await api('/api/user/reset', { method: 'POST', body: { email, token } }));
    expect(reset.success, reset.message).toBe(true);
    const password: string = reset.data;
    expect(password).toMatch(/^[A-Za-z0-9]{12}$/);

    const stale = await api('/api/user/self', { session: henry });
    expect(stale.status).toBe(401);
    expect((await read(stale)).code).toBe('NOT_LOGGED_IN');
    await login('henry', password);
    const old = await read(
      await api('/api/user/login', { method: 'POST', body: { username: 'henry', password: 'henry-pass-1' } }),
    );
    expect(old.code).toBe('LOGIN_FAILED');

    const reused = await read(await api('/api/user/reset', { method: 'POST', body: { email, token } }));
    expect(reused.code).toBe('RESET_LINK_INVALID');
  });

  it('answers an unknown address with the same success and sends nothing', async () => {
    const email = 'nobody@example.com';
    const kate = await plainUser('kate');
    await gateway.store.db.updateTable('users').set({ email: 'kate@example.com' }).where('id', '=', kate.id).execute();
    const known = await read(await api(`/api/reset_password?${q({ email: 'kate@example.com' })}`));
    expect(mailsTo('kate@example.com')).toHaveLength(1);
    const unknown = await read(await api(`/api/reset_password?${q({ email })}`));
    expect(unknown).toEqual({ success: true, message: known.message });
    expect(mailsTo(email)).toHaveLength(0);
  });

  it('validates the reset request', async () => {
    expect((await read(await api('/api/reset_password'))).code).toBe('EMAIL_REQUIRED');
    const noToken = await api('/api/user/reset', { method: 'POST', body: { email: 'henry@example.com' } });
    expect(noToken.status).toBe(200);
    expect((await read(noToken)).code).toBe('RESET_LINK_INVALID');
    const badEmail = await read(await api('/api/user/reset', { method: 'POST', body: { email: 'x', token: 'abc' } }));
    expect(badEmail.code).toBe('EMAIL_INVALID');
    const typed = await read(await api('/api/user/reset', { method: 'POST', body: { email: 42, token: 'abc' } }));
    expect(typed.code).toBe('INVALID_REQUEST');
  });
});

describe('email bind', () => {
  it('mails a bind code and binds the address to the signed-in user (GET)', async () => {
    const ivan = await plainUser('ivan');
    const email = 'ivan@example.com';
    const sent = await read(await api(`/api/oauth/email/bind/code?${q({ email })}`, { session: ivan }));
    expect(sent.success, sent.message).toBe(true);
    const code = codeIn(mailsTo(email)[0]);

    const wrong = await read(
      await api(`/api/oauth/email/bind?${q({ email, code: code === '000000' ? '111111' : '000000' })}`, {
        session: ivan,
      }),
    );
    expect(wrong.code).toBe('VERIFICATION_CODE_INVALID');
    const missing = await read(await api(`/api/oauth/email/bind?${q({ email })}`, { session: ivan }));
    expect(missing.code).toBe('EMAIL_AND_CODE_REQUIRED');

    const bound = await read(await api(`/api/oauth/email/bind?${q({ email, code })}`, { session: ivan }));
    expect(bound).toMatchObject({ success: true });
    expect(bound.message).toMatch(/bound/i);
    expect((await read(await api('/api/user/self', { session: ivan }))).data.email).toBe(email);
  });

  it('binds with POST and a JSON body, using a code from GET /api/verification as new-api consoles do', async () => {
    const judy = await plainUser('judy');
    const email = 'judy@example.com';
    expect((await read(await api(`/api/verification?${q({ email })}`, { session: judy }))).success).toBe(true);
    const code = codeIn(mailsTo(email)[0]);
    const bound = await read(
      await api('/api/oauth/email/bind', { method: 'POST', body: { email, code }, session: judy }),
    );
    expect(bound.success, bound.message).toBe(true);
    expect((await read(await api('/api/user/self', { session: judy }))).data.email).toBe(email);

    // new-api's console posts the fields in the query, with no body.
    const kim = await plainUser('kim');
    const kimEmail = 'kim@example.com';
    await read(await api(`/api/oauth/email/bind/code?${q({ email: kimEmail })}`, { session: kim }));
    const kimCode = codeIn(mailsTo(kimEmail)[0]);
    const byQuery = await read(
      await api(`/api/oauth/email/bind?${q({ email: kimEmail, code: kimCode })}`, { method: 'POST', session: kim }),
    );
    expect(byQuery.success, byQuery.message).toBe(true);
    expect((await read(await api('/api/user/self', { session: kim }))).data.email).toBe(kimEmail);
  });

  it("refuses another user's address, both for the code and for the bind", async () => {
    const owner = await plainUser('owner1');
    await gateway.store.db
      .updateTable('users')
      .set({ email: 'owned@example.com' })
      .where('id', '=', owner.id)
      .execute();
    const other = await plainUser('other1');

    const codeAnswer = await api(`/api/oauth/email/bind/code?${q({ email: 'OWNED@example.com' })}`, { session: other });
    expect(codeAnswer.status).toBe(200);
    expect((await read(codeAnswer)).code).toBe('EMAIL_TAKEN');
    expect(mailsTo('owned@example.com')).toHaveLength(0);

    // Even with a valid code (mailed before the owner took the address), the bind is refused.
    const email = 'contested@example.com';
    await read(await api(`/api/oauth/email/bind/code?${q({ email })}`, { session: other }));
    const code = codeIn(mailsTo(email)[0]);
    await gateway.store.db.updateTable('users').set({ email }).where('id', '=', owner.id).execute();
    const bind = await read(await api(`/api/oauth/email/bind?${q({ email, code })}`, { session: other }));
    expect(bind.code).toBe('EMAIL_TAKEN');
    const row = await gateway.store.db
      .selectFrom('users')
      .select('email')
      .where('id', '=', other.id)
      .executeTakeFirstOrThrow();
    expect(row.email).toBe('');
  });

  it('answers 401 when not signed in, and mails nothing', async () => {
    const email = 'anon@example.com';
    for (const response of [
      await api(`/api/oauth/email/bind/code?${q({ email })}`),
      await api(`/api/oauth/email/bind?${q({ email, code: '123456' })}`),
      await api('/api/oauth/email/bind', { method: 'POST', body: { email, code: '123456' } }),
    ]) {
      expect(response.status).toBe(401);
      expect((await read(response)).code).toBe('NOT_LOGGED_IN');
    }
    expect(mailsTo(email)).toHaveLength(0);
  });
});
