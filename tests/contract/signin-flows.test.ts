import { createHash, createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockServer, serveMock } from '../support/mock-server.ts';
import { type SmtpInbox, startSmtpInbox } from '../support/smtp.ts';
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
 * The successful side of the sign-in flows the front end drives: e-mail codes (register, bind, password
 * reset), the OAuth callback page (login and bind) and the Telegram widget. A local SMTP server and a fake
 * GitHub stand in for the outside world (CATALOGUE.md "Accounts and sign-in").
 */

let g: ContractGateway;
let smtp: SmtpInbox;
let github: MockServer;
/** The WeChat account server: verification codes the official account handed out, each an openid. */
let wechat: MockServer;
const wechatCodes = new Map<string, string>();
const WECHAT_TOKEN = 'wx-contract-token';
const wechatCode = (openid: string) => {
  const code = String(100000 + wechatCodes.size);
  wechatCodes.set(code, openid);
  return code;
};
const TELEGRAM_TOKEN = '424242:TG-CONTRACT-SECRET';

/** Codes the fake GitHub handed out, and the account each one signs in. */
const codes = new Map<string, { id: number; login: string }>();
const tokens = new Map<string, { id: number; login: string }>();
const githubCode = (id: number, login: string) => {
  const code = randomBytes(8).toString('hex');
  codes.set(code, { id, login });
  return code;
};

const SESSION_USER: Shape = {
  id: 'integer',
  username: 'string',
  display_name: 'string',
  role: 'integer',
  status: 'integer',
  group: 'string',
};

beforeAll(async () => {
  smtp = await startSmtpInbox();
  github = await serveMock(async (req, res, raw) => {
    const path = new URL(req.url ?? '/', 'http://github').pathname;
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'POST' && path === '/login/oauth/access_token') {
      const account = codes.get(JSON.parse(raw.toString()).code);
      if (!account) return send(200, { error: 'bad_verification_code' });
      const token = `tok_${randomBytes(8).toString('hex')}`;
      tokens.set(token, account);
      return send(200, { access_token: token, token_type: 'bearer', scope: '' });
    }
    if (req.method === 'GET' && path === '/api/user') {
      const account = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      return account
        ? send(200, { ...account, name: account.login, email: null })
        : send(401, { message: 'Bad credentials' });
    }
    return send(404, { message: 'Not Found' });
  });
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
  g = await startContractGateway('10.47.0', { GITHUB_OAUTH_URL: github.url, GITHUB_API_URL: `${github.url}/api` });
  for (const [key, value] of Object.entries({
    ...smtp.options,
    ServerAddress: 'https://gate.example.com',
    GitHubOAuthEnabled: 'true',
    GitHubClientId: 'gh-client',
    GitHubClientSecret: 'gh-secret',
    TelegramOAuthEnabled: 'true',
    TelegramBotToken: TELEGRAM_TOKEN,
    TelegramBotName: 'contract_bot',
    WeChatAuthEnabled: 'true',
    WeChatServerAddress: wechat.url,
    WeChatServerToken: WECHAT_TOKEN,
  })) {
    expectOk(await g.root.put('/api/option/', { key, value }));
  }
});

afterAll(async () => {
  await g?.stop();
  await smtp?.close();
  await github?.close();
  await wechat?.close();
});

const mailsTo = (email: string) => smtp.inbox.filter((m) => m.to.includes(email));
const codeIn = (email: string) => {
  const code = mailsTo(email)
    .at(-1)
    ?.body.match(/verification code is: (\d{6})/)?.[1];
  expect(code, `a code mailed to ${email}`).toBeDefined();
  return code!;
};

describe('e-mail codes (RegisterForm.jsx, PersonalSetting.jsx)', () => {
  it('sends a code and registers with it while e-mail verification is on', async () => {
    expectOk(await g.root.put('/api/option/', { key: 'EmailVerificationEnabled', value: 'true' }));
    try {
      const email = 'newcomer@example.com';
      expectOk(await g.visitor().get(`/api/verification?email=${email}&turnstile=`));
      const form = { username: 'newcomer', password: 'password-1', password2: 'password-1', email, aff_code: '' };
      expectRefusal(await g.visitor().post('/api/user/register?turnstile=', { ...form, verification_code: '000000' }));
      expectOk(await g.visitor().post('/api/user/register?turnstile=', { ...form, verification_code: codeIn(email) }));
    } finally {
      expectOk(await g.root.put('/api/option/', { key: 'EmailVerificationEnabled', value: 'false' }));
    }
  });

  it('binds an e-mail with the mailed code (GET /api/oauth/email/bind)', async () => {
    const c = await g.user('binder');
    const email = 'binder@example.com';
    expectOk(await c.get(`/api/verification?email=${email}&turnstile=`));
    expectOk(await c.get(`/api/oauth/email/bind?email=${email}&code=${codeIn(email)}`));
    expect(expectOk(await c.get('/api/user/self')).email).toBe(email);
  });
});

describe('password reset (PasswordResetForm.jsx, PasswordResetConfirm.jsx)', () => {
  it('mails a link, and POST /api/user/reset answers the new password as a string that signs in', async () => {
    const c = await g.user('forgetful');
    const email = 'forgetful@example.com';
    expectOk(await c.get(`/api/verification?email=${email}&turnstile=`));
    expectOk(await c.get(`/api/oauth/email/bind?email=${email}&code=${codeIn(email)}`));
    expectOk(await g.visitor().get(`/api/reset_password?email=${email}&turnstile=`));
    const link = mailsTo(email)
      .at(-1)
      ?.body.match(/\/user\/reset\?email=([^&\s"<]+)&token=([\w-]+)/);
    expect(link, 'a reset link').toBeTruthy();
    const password = expectOk(await g.visitor().post('/api/user/reset', { email, token: link![2] }));
    expect(typeof password).toBe('string');
    expect(password.length).toBeGreaterThanOrEqual(8);
    expectOk(await g.visitor().post('/api/user/login', { username: 'forgetful', password }));
  });
});

describe('OAuth callback page (OAuth2Callback.jsx)', () => {
  it('signs a new GitHub account in: data is the session user', async () => {
    const browser = g.visitor();
    const state = expectOk(await browser.get('/api/oauth/state'));
    const answer = await browser.get(`/api/oauth/github?code=${githubCode(9001, 'octo-new')}&state=${state}`);
    const user = expectOk(answer);
    expect(answer.body.message).not.toBe('bind');
    expectShape(user, SESSION_USER, 'data');
    browser.userId = user.id;
    expect(expectOk(await browser.get('/api/user/self')).github_id).toBe('9001');
  });

  it("binds GitHub to the signed-in user: message is 'bind'", async () => {
    const c: FrontEnd = await g.user('octo-binder');
    const state = expectOk(await c.get('/api/oauth/state'));
    const answer = await c.get(`/api/oauth/github?code=${githubCode(9002, 'octo-bound')}&state=${state}`);
    expectOk(answer);
    expect(answer.body.message).toBe('bind');
    expect(expectOk(await c.get('/api/user/self')).github_id).toBe('9002');
  });

  it('refuses a code GitHub does not know, and a state it did not issue, as business refusals', async () => {
    const browser = g.visitor();
    const state = expectOk(await browser.get('/api/oauth/state'));
    expectRefusal(await browser.get(`/api/oauth/github?code=unknown&state=${state}`));
    expectRefusal(await browser.get(`/api/oauth/github?code=${githubCode(9003, 'octo-x')}&state=forged`));
  });
});

describe('Telegram widget (LoginForm.jsx onTelegramLoginClicked)', () => {
  const signed = (fields: Record<string, string>) => {
    const check = Object.keys(fields)
      .sort()
      .map((k) => `${k}=${fields[k]}`)
      .join('\n');
    const key = createHash('sha256').update(TELEGRAM_TOKEN).digest();
    return { ...fields, hash: createHmac('sha256', key).update(check).digest('hex') };
  };

  it('signs in with the widget fields as query parameters: data is the session user', async () => {
    const fields = signed({
      id: '7000001',
      first_name: 'Tele',
      username: 'tele_user',
      auth_date: String(Math.floor(Date.now() / 1000)),
    });
    const user = expectOk(await g.visitor().get(`/api/oauth/telegram/login?${new URLSearchParams(fields)}`));
    expectShape(user, SESSION_USER, 'data');
  });

  it('refuses a forged hash as a business refusal', async () => {
    const fields = {
      ...signed({ id: '7000002', first_name: 'X', auth_date: String(Math.floor(Date.now() / 1000)) }),
      hash: '0'.repeat(64),
    };
    expectRefusal(await g.visitor().get(`/api/oauth/telegram/login?${new URLSearchParams(fields)}`));
  });
});

describe('WeChat (LoginForm.jsx onSubmitWeChatVerificationCode, PersonalSetting.jsx bindWeChat)', () => {
  it('signs in with a verification code: data is the session user', async () => {
    const user = expectOk(await g.visitor().get(`/api/oauth/wechat?code=${wechatCode('openid-login')}`));
    expectShape(user, SESSION_USER, 'data');
  });

  it('binds WeChat to the signed-in user with GET /api/oauth/wechat/bind?code=', async () => {
    const c = await g.user('wx-binder');
    expectOk(await c.get(`/api/oauth/wechat/bind?code=${wechatCode('openid-bind')}`));
    expect(expectOk(await c.get('/api/user/self')).wechat_id).toBe('openid-bind');
  });

  it('refuses a wrong code as a business refusal', async () => {
    expectRefusal(await g.visitor().get('/api/oauth/wechat?code=999999'));
  });
});
