import { createHash, createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Events, OAuth2Server } from 'oauth2-mock-server';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../gateway/src/config.ts';
import { type Gateway, startGateway } from '../../gateway/src/gateway.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

// Credentials with a recognisable shape, so the last test can prove none of them ever leaves the gateway.
const SECRETS = {
  github: 'GH-SECRET-5e1f0c',
  linuxdo: 'LDO-SECRET-a93d2b',
  oidc: 'OIDC-SECRET-77c0e4',
  wechat: 'WX-TOKEN-c2b81f',
  telegram: '424242:TG-SECRET-0b9e55',
};
const SERVER_ADDRESS = 'http://tollgate.test';
const QUOTA = { forNewUser: 1000, forInvitee: 200, forInviter: 300 };

// ---------------------------------------------------------------------------------------------
// Fake providers
// ---------------------------------------------------------------------------------------------

/** How a fake misbehaves: drop the connection, answer HTML, fail with 503, or never answer. */
type Breakage = 'down' | 'garbage' | 'error' | 'hang';

interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Fake {
  url: string;
  /** Breakage for every path ('*') or for one path. */
  breaks: Map<string, Breakage>;
  close(): Promise<void>;
}

async function fakeServer(route: (request: FakeRequest) => { status: number; json: unknown }): Promise<Fake> {
  const breaks = new Map<string, Breakage>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const breakage = breaks.get(url.pathname) ?? breaks.get('*');
      if (breakage === 'down') return req.socket.destroy();
      if (breakage === 'hang') return;
      if (breakage === 'garbage') {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>upstream proxy says hello</html>');
        return;
      }
      if (breakage === 'error') {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"maintenance"}');
        return;
      }
      const answer = route({
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
      });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    breaks,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A provider account as the tests describe it; each fake renders it in its own format. */
interface Account {
  id: string;
  login: string;
  name: string;
  email?: string;
  trustLevel?: number;
}

const bearer = (headers: http.IncomingHttpHeaders) => headers.authorization?.replace(/^Bearer /, '') ?? '';
const randomCode = () => randomBytes(12).toString('hex');

/** Authorization codes and access tokens a fake has handed out; each code works once. */
function grants() {
  const codes = new Map<string, Account>();
  const tokens = new Map<string, Account>();
  return {
    code(account: Account) {
      const code = randomCode();
      codes.set(code, account);
      return code;
    },
    redeem(code: string | null | undefined): string | undefined {
      const account = code ? codes.get(code) : undefined;
      if (!code || !account) return undefined;
      codes.delete(code);
      const token = `tok_${randomCode()}`;
      tokens.set(token, account);
      return token;
    },
    holder: (token: string) => tokens.get(token),
  };
}

// GitHub: JSON body with client id and secret; errors are 200s with an `error` field, as GitHub does.
const github = grants();
const githubRoute = ({ method, path, headers, body }: FakeRequest) => {
  if (method === 'POST' && path === '/login/oauth/access_token') {
    const input = JSON.parse(body) as Record<string, string>;
    if (input.client_id !== 'gh-client' || input.client_secret !== SECRETS.github) {
      return { status: 200, json: { error: 'incorrect_client_credentials' } };
    }
    const token = github.redeem(input.code);
    return token
      ? { status: 200, json: { access_token: token, token_type: 'bearer', scope: '' } }
      : { status: 200, json: { error: 'bad_verification_code' } };
  }
  if (method === 'GET' && path === '/api/user') {
    const account = github.holder(bearer(headers));
    if (!account) return { status: 401, json: { message: 'Bad credentials' } };
    return {
      status: 200,
      json: { id: Number(account.id), login: account.login, name: account.name, email: account.email ?? null },
    };
  }
  return { status: 404, json: { message: 'Not Found' } };
};

// LinuxDO: Basic client authentication and a form body, RFC 6749 errors.
const linuxdo = grants();
const linuxdoRoute = ({ method, path, headers, body }: FakeRequest) => {
  if (method === 'POST' && path === '/oauth2/token') {
    const basic = Buffer.from((headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
    if (basic !== `ldo-client:${SECRETS.linuxdo}`) return { status: 401, json: { error: 'invalid_client' } };
    const form = new URLSearchParams(body);
    const token = form.get('grant_type') === 'authorization_code' ? linuxdo.redeem(form.get('code')) : undefined;
    return token
      ? { status: 200, json: { access_token: token, token_type: 'Bearer' } }
      : { status: 400, json: { error: 'invalid_grant' } };
  }
  if (method === 'GET' && path === '/api/user') {
    const account = linuxdo.holder(bearer(headers));
    if (!account) return { status: 401, json: { error: 'invalid_token' } };
    return {
      status: 200,
      json: {
        id: Number(account.id),
        username: account.login,
        name: account.name,
        active: true,
        trust_level: account.trustLevel ?? 2,
        silenced: false,
      },
    };
  }
  return { status: 404, json: {} };
};

// WeChat login server: the code in the query, the server token in Authorization.
const wechatCodes = new Map<string, string>();
const wechatRoute = ({ path, query, headers }: FakeRequest) => {
  if (path !== '/api/wechat/user') return { status: 404, json: {} };
  if (headers.authorization !== SECRETS.wechat) return { status: 401, json: { success: false, message: 'no' } };
  const code = query.get('code') ?? '';
  const openid = wechatCodes.get(code);
  wechatCodes.delete(code);
  return openid
    ? { status: 200, json: { success: true, message: '', data: openid } }
    : { status: 200, json: { success: false, message: '验证码错误或已过期' } };
};
const wechatCode = (openid: string) => {
  const code = randomCode().slice(0, 6);
  wechatCodes.set(code, openid);
  return code;
};

// OIDC: a real OpenID provider (discovery, token, userinfo); the hooks check our client and choose the claims.
const oidcServer = new OAuth2Server();
const oidc = grants();
const oidcCode = (account: Account) => oidc.code(account);

function installOidcHooks() {
  oidcServer.service.on(Events.BeforeResponse, (response, req) => {
    const body = req.body as unknown as Record<string, string>;
    if (body.client_id !== 'oidc-client' || body.client_secret !== SECRETS.oidc) {
      response.statusCode = 401;
      response.body = { error: 'invalid_client' };
      return;
    }
    const token = body.redirect_uri === `${SERVER_ADDRESS}/oauth/oidc` ? oidc.redeem(body.code) : undefined;
    if (!token) {
      response.statusCode = 400;
      response.body = { error: 'invalid_grant' };
      return;
    }
    // Tie the signed JWT the server built to the account the code was for.
    const issued = (response.body as Record<string, unknown>).access_token as string;
    const account = oidc.holder(token);
    if (account) oidcTokens.set(issued, account);
  });
  oidcServer.service.on(Events.BeforeUserinfo, (response, req) => {
    const account = oidcTokens.get(bearer(req.headers));
    if (!account) {
      response.statusCode = 401;
      response.body = { error: 'invalid_token' };
      return;
    }
    response.body = {
      sub: account.id,
      preferred_username: account.login,
      name: account.name,
      ...(account.email ? { email: account.email } : {}),
    };
  });
}
const oidcTokens = new Map<string, Account>();

// ---------------------------------------------------------------------------------------------
// A browser: its own IP (so the per-IP critical limit is per test), cookie jar and user header
// ---------------------------------------------------------------------------------------------

/** Every response body, for the final no-secret-leaks check. */
const seen: string[] = [];
let nextIp = 1;

interface Answer {
  status: number;
  body: any;
  text: string;
}

class Browser {
  readonly ip = `10.77.${Math.floor(nextIp / 250)}.${nextIp++ % 250}`;
  readonly cookies = new Map<string, string>();
  userId: number | undefined;
  base: string;

  constructor(base: string) {
    this.base = base;
  }

  async call(path: string, init: { method?: string; body?: unknown; base?: string } = {}): Promise<Answer> {
    const headers: Record<string, string> = { 'x-forwarded-for': this.ip, 'accept-language': 'en' };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (this.userId !== undefined) headers['new-api-user'] = String(this.userId);
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${init.base ?? this.base}${path}`, {
      method: init.method ?? 'GET',
      headers,
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const name = pair.slice(0, pair.indexOf('=')).trim();
      const value = pair.slice(pair.indexOf('=') + 1).trim();
      const expired = attributes.some((a) => {
        const [k = '', v = ''] = a.trim().split('=');
        return (
          (k.toLowerCase() === 'max-age' && Number(v) <= 0) ||
          (k.toLowerCase() === 'expires' && Date.parse(v) < Date.now())
        );
      });
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    seen.push(text);
    return { status: response.status, body: text ? JSON.parse(text) : undefined, text };
  }

  async signIn(username: string, password: string): Promise<void> {
    const answer = await this.call('/api/user/login', { method: 'POST', body: { username, password } });
    expect(answer.body.success).toBe(true);
    this.userId = answer.body.data.id;
  }
}

// ---------------------------------------------------------------------------------------------
// Gateway
// ---------------------------------------------------------------------------------------------

let gateway: Gateway;
let podB: Gateway;
let drop: () => Promise<void>;
let githubFake: Fake;
let linuxdoFake: Fake;
let wechatFake: Fake;
/** Never answers: for timeouts. */
let blackhole: Fake;
/** A port nobody listens on. */
let deadUrl: string;
const logs: string[] = [];
let root: Browser;
let rootId: number;
let rootAff: string;

const ROOT_PASSWORD = 'root-pass-123';
const USER_PASSWORD = 'user-pass-123';

beforeAll(async () => {
  [githubFake, linuxdoFake, wechatFake, blackhole] = await Promise.all([
    fakeServer(githubRoute),
    fakeServer(linuxdoRoute),
    fakeServer(wechatRoute),
    fakeServer(() => ({ status: 200, json: {} })),
  ]);
  blackhole.breaks.set('*', 'hang');
  const dead = await fakeServer(() => ({ status: 200, json: {} }));
  deadUrl = dead.url;
  await dead.close();

  await oidcServer.issuer.keys.generate('RS256');
  await oidcServer.start(0, '127.0.0.1');
  oidcServer.issuer.url = `http://127.0.0.1:${oidcServer.address().port}`;
  installOidcHooks();

  const database = await createTestDatabase();
  drop = database.drop;
  const env = gatewayEnv(database.options, testNamespace(), {
    TRUST_PROXY: 'true',
    GITHUB_OAUTH_URL: githubFake.url,
    // A path prefix, as GitHub Enterprise has (https://ghe.example.com/api/v3).
    GITHUB_API_URL: `${githubFake.url}/api`,
    LINUXDO_OAUTH_URL: linuxdoFake.url,
    OAUTH_TIMEOUT_MS: '1000',
  });
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  gateway = await startGateway(loadConfig(env, 'test'), pino({ level: 'debug' }, logStream));
  await gateway.options.setMany({
    ServerAddress: SERVER_ADDRESS,
    GitHubOAuthEnabled: 'true',
    GitHubClientId: 'gh-client',
    GitHubClientSecret: SECRETS.github,
    LinuxDOOAuthEnabled: 'true',
    LinuxDOClientId: 'ldo-client',
    LinuxDOClientSecret: SECRETS.linuxdo,
    'oidc.enabled': 'true',
    'oidc.client_id': 'oidc-client',
    'oidc.client_secret': SECRETS.oidc,
    'oidc.well_known': `${oidcServer.issuer.url}/.well-known/openid-configuration`,
    WeChatAuthEnabled: 'true',
    WeChatServerAddress: wechatFake.url,
    WeChatServerToken: SECRETS.wechat,
    TelegramOAuthEnabled: 'true',
    TelegramBotToken: SECRETS.telegram,
    TelegramBotName: 'tollgate_bot',
    QuotaForNewUser: String(QUOTA.forNewUser),
    QuotaForInvitee: String(QUOTA.forInvitee),
    QuotaForInviter: String(QUOTA.forInviter),
  });
  podB = await startTestGateway(env);

  root = new Browser(gateway.url);
  const setup = await root.call('/api/setup', {
    method: 'POST',
    body: { username: 'root', password: ROOT_PASSWORD, confirmPassword: ROOT_PASSWORD },
  });
  expect(setup.body.success).toBe(true);
  await root.signIn('root', ROOT_PASSWORD);
  rootId = root.userId!;
  rootAff = (await root.call('/api/user/aff')).body.data;
});

afterAll(async () => {
  await podB?.stop();
  await gateway?.stop();
  await drop?.();
  await Promise.all([githubFake, linuxdoFake, wechatFake, blackhole].map((fake) => fake?.close()));
  await oidcServer.stop().catch(() => {});
});

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

let counter = 0;
/** A fresh provider account with a unique id and a login that fits a username. */
function account(extra: Partial<Account> = {}): Account {
  counter++;
  return { id: String(900_000 + counter), login: `pa${counter}x`, name: `Person ${counter}`, ...extra };
}

const userRow = (id: number) =>
  gateway.store.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const userCount = async () => (await gateway.store.db.selectFrom('users').select('id').execute()).length;

/** A password user signed in in a browser of their own. */
async function passwordUser(): Promise<Browser> {
  const username = `u${++counter}`;
  const created = await root.call('/api/user/', { method: 'POST', body: { username, password: USER_PASSWORD } });
  expect(created.body.success).toBe(true);
  const browser = new Browser(gateway.url);
  await browser.signIn(username, USER_PASSWORD);
  return browser;
}

function expectFailure(answer: Answer, status: number, code: string) {
  expect({ status: answer.status, success: answer.body?.success, code: answer.body?.code }).toEqual({
    status,
    success: false,
    code,
  });
  expect(typeof answer.body.message).toBe('string');
}

async function setOptions(values: Record<string, string>, run: () => Promise<void>) {
  const before = Object.fromEntries(Object.keys(values).map((key) => [key, gateway.options.get(key)]));
  await gateway.options.setMany(values);
  try {
    await run();
  } finally {
    await gateway.options.setMany(before);
  }
}

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

describe('GET /api/oauth/state', () => {
  it('issues a fresh random state that lives ten minutes', async () => {
    const browser = new Browser(gateway.url);
    const first = await browser.call('/api/oauth/state');
    const second = await browser.call('/api/oauth/state');
    expect(first.body).toMatchObject({ success: true, data: expect.stringMatching(/^[\w-]{32}$/) });
    expect(second.body.data).not.toBe(first.body.data);
    const ttl = await gateway.cluster.kv.ttl(`oauth:state:${first.body.data}`);
    expect(ttl).toBeGreaterThan(9 * 60_000);
    expect(ttl).toBeLessThanOrEqual(10 * 60_000);
    // The browser keeps the state it was issued last.
    expect(browser.cookies.get('oauth_state')).toBe(second.body.data);
  });

  it('is accepted on another pod, once', async () => {
    const browser = new Browser(gateway.url);
    const state = (await browser.call('/api/oauth/state')).body.data;
    const who = account();
    const onB = await browser.call(`/api/oauth/github?code=${github.code(who)}&state=${state}`, { base: podB.url });
    expect(onB.body).toMatchObject({ success: true, data: { username: who.login } });
    browser.cookies.set('oauth_state', state);
    const again = await browser.call(`/api/oauth/github?code=${github.code(who)}&state=${state}`);
    expectFailure(again, 200, 'OAUTH_STATE_INVALID');
  });

  it('counts every OAuth route against the per-IP critical limit', async () => {
    const browser = new Browser(gateway.url);
    for (let i = 0; i < 20; i++) expect((await browser.call('/api/oauth/state')).status).toBe(200);
    for (const path of [
      '/api/oauth/state',
      '/api/oauth/github?code=x&state=y',
      '/api/oauth/oidc?code=x&state=y',
      '/api/oauth/linuxdo?code=x&state=y',
      '/api/oauth/wechat?code=x',
      '/api/oauth/wechat/bind?code=x',
      '/api/oauth/telegram/login?id=1',
      '/api/oauth/telegram/bind?id=1',
    ]) {
      expect([path, (await browser.call(path)).status]).toEqual([path, 429]);
    }
    // Another client is not affected.
    expect((await new Browser(gateway.url).call('/api/oauth/state')).status).toBe(200);
  });

  it('refuses an unknown provider', async () => {
    expectFailure(
      await new Browser(gateway.url).call('/api/oauth/nosuch?code=x&state=y'),
      200,
      'OAUTH_PROVIDER_UNKNOWN',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// GitHub, LinuxDO, OIDC: code + state callbacks
// ---------------------------------------------------------------------------------------------

interface CodeProviderCase {
  name: 'github' | 'linuxdo' | 'oidc';
  column: 'github_id' | 'linux_do_id' | 'oidc_id';
  enabledKey: string;
  secretKey: string;
  prefix: string;
  code(account: Account): string;
  /** Makes the provider misbehave until the returned function is called. */
  breakProvider(breakage: Breakage): Promise<() => Promise<void>>;
}

const fakeBreak = (fake: () => Fake) => async (breakage: Breakage) => {
  fake().breaks.set('*', breakage);
  return async () => {
    fake().breaks.clear();
  };
};

const codeProviders: CodeProviderCase[] = [
  {
    name: 'github',
    column: 'github_id',
    enabledKey: 'GitHubOAuthEnabled',
    secretKey: 'GitHubClientSecret',
    prefix: 'github_',
    code: (a) => github.code(a),
    breakProvider: fakeBreak(() => githubFake),
  },
  {
    name: 'linuxdo',
    column: 'linux_do_id',
    enabledKey: 'LinuxDOOAuthEnabled',
    secretKey: 'LinuxDOClientSecret',
    prefix: 'linuxdo_',
    code: (a) => linuxdo.code(a),
    breakProvider: fakeBreak(() => linuxdoFake),
  },
  {
    name: 'oidc',
    column: 'oidc_id',
    enabledKey: 'oidc.enabled',
    secretKey: 'oidc.client_secret',
    prefix: 'oidc_',
    code: (a) => oidcCode(a),
    async breakProvider(breakage) {
      const wellKnown = gateway.options.get('oidc.well_known');
      const restore = async () => {
        oidcServer.service.removeAllListeners(Events.BeforeUserinfo);
        oidcServer.service.removeAllListeners(Events.BeforeResponse);
        installOidcHooks();
        await gateway.options.setMany({ 'oidc.well_known': wellKnown });
      };
      if (breakage === 'down')
        await gateway.options.setMany({ 'oidc.well_known': `${deadUrl}/.well-known/openid-configuration` });
      if (breakage === 'hang')
        await gateway.options.setMany({ 'oidc.well_known': `${blackhole.url}/.well-known/openid-configuration` });
      if (breakage === 'garbage') {
        oidcServer.service.on(Events.BeforeUserinfo, (response) => {
          response.statusCode = 200;
          response.body = '';
        });
      }
      if (breakage === 'error') {
        oidcServer.service.on(Events.BeforeResponse, (response) => {
          response.statusCode = 503;
          response.body = { error: 'temporarily_unavailable' };
        });
      }
      return restore;
    },
  },
];

describe.each(codeProviders)('GET /api/oauth/$name', (provider) => {
  const callback = (browser: Browser, code: string, state: string | undefined) =>
    browser.call(`/api/oauth/${provider.name}?code=${encodeURIComponent(code)}${state ? `&state=${state}` : ''}`);

  /** A whole sign-in (or binding) in `browser`: state, provider, callback. */
  async function oauth(browser: Browser, who: Account, aff?: string): Promise<Answer> {
    const state = (await browser.call(`/api/oauth/state${aff ? `?aff=${aff}` : ''}`)).body.data as string;
    return callback(browser, provider.code(who), state);
  }

  it('refuses while the provider is switched off', async () => {
    await setOptions({ [provider.enabledKey]: 'false' }, async () => {
      expectFailure(await oauth(new Browser(gateway.url), account()), 200, 'OAUTH_PROVIDER_DISABLED');
    });
  });

  it('refuses a missing, unknown, reused or foreign state', async () => {
    const who = account();
    const browser = new Browser(gateway.url);
    expectFailure(await callback(browser, provider.code(who), undefined), 200, 'OAUTH_STATE_INVALID');

    const unknown = randomBytes(24).toString('base64url');
    browser.cookies.set('oauth_state', unknown);
    expectFailure(await callback(browser, provider.code(who), unknown), 200, 'OAUTH_STATE_INVALID');

    // A state started in the attacker's browser cannot be finished in the victim's.
    const attacker = new Browser(gateway.url);
    const attackerState = (await attacker.call('/api/oauth/state')).body.data;
    expectFailure(await callback(browser, provider.code(who), attackerState), 200, 'OAUTH_STATE_INVALID');
    // ...and it was not used up by the attempt.
    expect((await callback(attacker, provider.code(who), attackerState)).body.success).toBe(true);

    // Used once, gone: even with the cookie put back.
    attacker.cookies.set('oauth_state', attackerState);
    expectFailure(await callback(attacker, provider.code(who), attackerState), 200, 'OAUTH_STATE_INVALID');
  });

  it('signs up a new user with the sign-up grants and the invitation, then signs the same user in', async () => {
    const inviterBefore = await userRow(rootId);
    const who = account({ email: `p${counter}@example.com` });
    const browser = new Browser(gateway.url);
    const first = await oauth(browser, who, rootAff);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      success: true,
      message: 'Login successful',
      data: { username: who.login, display_name: who.name, role: 1, status: 1, group: 'default' },
    });
    expect(first.body.data).not.toHaveProperty('password');
    const id = first.body.data.id as number;
    const row = await userRow(id);
    expect(row[provider.column]).toBe(who.id);
    expect(row.quota).toBe(QUOTA.forNewUser + QUOTA.forInvitee);
    expect(row.inviter_id).toBe(rootId);
    expect(row.email).toBe(provider.name === 'linuxdo' ? '' : who.email);
    const inviter = await userRow(rootId);
    expect(inviter.aff_count).toBe(inviterBefore.aff_count + 1);
    expect(inviter.aff_quota).toBe(inviterBefore.aff_quota + QUOTA.forInviter);

    // The session works on the dashboard.
    browser.userId = id;
    const self = await browser.call('/api/user/self');
    expect(self.body).toMatchObject({ success: true, data: { id, username: who.login, [provider.column]: who.id } });

    // Signing in again, from another browser, reaches the same account and creates nothing.
    const users = await userCount();
    const second = await oauth(new Browser(gateway.url), who);
    expect(second.body).toMatchObject({ success: true, data: { id, username: who.login } });
    expect(await userCount()).toBe(users);
    expect((await userRow(id)).quota).toBe(QUOTA.forNewUser + QUOTA.forInvitee);
  });

  it('names the new user {prefix}{n} when the provider login is taken or does not fit', async () => {
    const taken = await oauth(new Browser(gateway.url), account({ login: 'root' }));
    expect(taken.body.data.username).toMatch(new RegExp(`^${provider.prefix}\\d+$`));
    const long = await oauth(new Browser(gateway.url), account({ login: 'a-very-long-login-name' }));
    expect(long.body.data.username).toMatch(new RegExp(`^${provider.prefix}\\d+$`));
    expect(long.body.data.username.length).toBeLessThanOrEqual(12);
    expect(long.body.data.username).not.toBe(taken.body.data.username);
  });

  it('binds the account to the signed-in user and answers message bind', async () => {
    const browser = await passwordUser();
    const users = await userCount();
    const who = account();
    const answer = await oauth(browser, who);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ success: true, message: 'bind' });
    expect((await userRow(browser.userId!))[provider.column]).toBe(who.id);
    expect(await userCount()).toBe(users);
    // From now on the provider account signs this user in.
    const login = await oauth(new Browser(gateway.url), who);
    expect(login.body.data.id).toBe(browser.userId);
  });

  it('refuses to bind an account that belongs to someone else', async () => {
    const who = account();
    const owner = await oauth(new Browser(gateway.url), who);
    expect(owner.body.success).toBe(true);
    const other = await passwordUser();
    expectFailure(await oauth(other, who), 200, 'OAUTH_ALREADY_BOUND');
    expect((await userRow(other.userId!))[provider.column]).toBe('');
    expect((await userRow(owner.body.data.id))[provider.column]).toBe(who.id);
  });

  it('refuses a banned user and opens no session', async () => {
    const who = account();
    const id = (await oauth(new Browser(gateway.url), who)).body.data.id as number;
    await gateway.store.db.updateTable('users').set({ status: 2 }).where('id', '=', id).execute();
    const browser = new Browser(gateway.url);
    expectFailure(await oauth(browser, who), 200, 'USER_BANNED');
    expect(browser.cookies.has('session')).toBe(false);
  });

  it('refuses the account of a deregistered user instead of signing up again', async () => {
    const who = account();
    const id = (await oauth(new Browser(gateway.url), who)).body.data.id as number;
    await gateway.store.db.updateTable('users').set({ deleted_at: 1 }).where('id', '=', id).execute();
    const users = await userCount();
    expectFailure(await oauth(new Browser(gateway.url), who), 200, 'OAUTH_ACCOUNT_DEREGISTERED');
    expect(await userCount()).toBe(users);
  });

  it('creates no account while registration is closed, but still signs existing users in', async () => {
    const known = account();
    expect((await oauth(new Browser(gateway.url), known)).body.success).toBe(true);
    await setOptions({ RegisterEnabled: 'false' }, async () => {
      expectFailure(await oauth(new Browser(gateway.url), account()), 200, 'REGISTER_DISABLED');
      expect((await oauth(new Browser(gateway.url), known)).body.success).toBe(true);
    });
  });

  it('ignores a stale invitation code rather than refusing the sign-up', async () => {
    const answer = await oauth(new Browser(gateway.url), account(), 'nope42');
    expect(answer.body.success).toBe(true);
    expect((await userRow(answer.body.data.id)).quota).toBe(QUOTA.forNewUser);
  });

  it('refuses a code the provider does not know', async () => {
    const browser = new Browser(gateway.url);
    const state = (await browser.call('/api/oauth/state')).body.data;
    expectFailure(await callback(browser, 'not-a-code', state), 200, 'OAUTH_CODE_REJECTED');
  });

  it('refuses a callback without a code', async () => {
    const browser = new Browser(gateway.url);
    const state = (await browser.call('/api/oauth/state')).body.data;
    expectFailure(await browser.call(`/api/oauth/${provider.name}?state=${state}`), 200, 'OAUTH_CODE_MISSING');
  });

  it('reports wrong client credentials as a configuration problem', async () => {
    await setOptions({ [provider.secretKey]: 'wrong-secret' }, async () => {
      expectFailure(await oauth(new Browser(gateway.url), account()), 200, 'OAUTH_CLIENT_REJECTED');
    });
  });

  it.each([
    ['down', 'OAUTH_PROVIDER_UNAVAILABLE'],
    ['answering 503', 'OAUTH_PROVIDER_UNAVAILABLE'],
    ['answering garbage', 'OAUTH_PROVIDER_BAD_RESPONSE'],
    ['not answering', 'OAUTH_PROVIDER_UNAVAILABLE'],
  ] as const)('turns a provider %s into %s, not a 500 or a hang', async (what, code) => {
    const breakage: Breakage = (
      { down: 'down', 'answering 503': 'error', 'answering garbage': 'garbage', 'not answering': 'hang' } as const
    )[what];
    const repair = await provider.breakProvider(breakage);
    try {
      const started = Date.now();
      expectFailure(await oauth(new Browser(gateway.url), account()), 200, code);
      // OAUTH_TIMEOUT_MS is 1000 in these tests.
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await repair();
    }
  });
});

describe('provider specifics', () => {
  it('LinuxDO: refuses users below LinuxDOMinimumTrustLevel', async () => {
    await setOptions({ LinuxDOMinimumTrustLevel: '3' }, async () => {
      const browser = new Browser(gateway.url);
      const state = (await browser.call('/api/oauth/state')).body.data;
      const low = await browser.call(
        `/api/oauth/linuxdo?code=${linuxdo.code(account({ trustLevel: 2 }))}&state=${state}`,
      );
      expectFailure(low, 200, 'OAUTH_TRUST_LEVEL_TOO_LOW');
      const state2 = (await browser.call('/api/oauth/state')).body.data;
      const high = await browser.call(
        `/api/oauth/linuxdo?code=${linuxdo.code(account({ trustLevel: 3 }))}&state=${state2}`,
      );
      expect(high.body.success).toBe(true);
    });
  });

  it('OIDC: uses explicit endpoints without a discovery document', async () => {
    const issuer = oidcServer.issuer.url!;
    await setOptions(
      {
        'oidc.well_known': '',
        'oidc.token_endpoint': `${issuer}/token`,
        'oidc.user_info_endpoint': `${issuer}/userinfo`,
      },
      async () => {
        const browser = new Browser(gateway.url);
        const state = (await browser.call('/api/oauth/state')).body.data;
        const who = account();
        const answer = await browser.call(`/api/oauth/oidc?code=${oidcCode(who)}&state=${state}`);
        expect(answer.body).toMatchObject({ success: true, data: { username: who.login } });
      },
    );
  });

  it('OIDC: reports a configuration without endpoints', async () => {
    await setOptions({ 'oidc.well_known': '', 'oidc.token_endpoint': '' }, async () => {
      const browser = new Browser(gateway.url);
      const state = (await browser.call('/api/oauth/state')).body.data;
      expectFailure(await browser.call(`/api/oauth/oidc?code=x&state=${state}`), 200, 'OAUTH_NOT_CONFIGURED');
    });
  });
});

// ---------------------------------------------------------------------------------------------
// WeChat
// ---------------------------------------------------------------------------------------------

describe('WeChat', () => {
  let nextOpenid = 0;
  const openid = () => `wx-openid-${++nextOpenid}`;
  const login = (browser: Browser, id: string) => browser.call(`/api/oauth/wechat?code=${wechatCode(id)}`);

  it('refuses while switched off', async () => {
    await setOptions({ WeChatAuthEnabled: 'false' }, async () => {
      expectFailure(await login(new Browser(gateway.url), openid()), 200, 'OAUTH_PROVIDER_DISABLED');
    });
  });

  it('signs up by openid with the sign-up quota, then signs the same user in', async () => {
    const id = openid();
    const browser = new Browser(gateway.url);
    const first = await login(browser, id);
    expect(first.body).toMatchObject({ success: true, data: { username: expect.stringMatching(/^wechat_\d+$/) } });
    const userId = first.body.data.id as number;
    const row = await userRow(userId);
    expect(row.wechat_id).toBe(id);
    expect(row.quota).toBe(QUOTA.forNewUser);
    browser.userId = userId;
    expect((await browser.call('/api/user/self')).body.data).toMatchObject({ id: userId, wechat_id: id });
    const users = await userCount();
    expect((await login(new Browser(gateway.url), id)).body.data.id).toBe(userId);
    expect(await userCount()).toBe(users);
  });

  it('refuses a missing or wrong code', async () => {
    const browser = new Browser(gateway.url);
    expectFailure(await browser.call('/api/oauth/wechat'), 200, 'OAUTH_CODE_MISSING');
    expectFailure(await browser.call('/api/oauth/wechat?code=000000'), 200, 'WECHAT_CODE_INVALID');
  });

  it.each(['GET', 'POST'])('binds with %s and answers message bind', async (method) => {
    const browser = await passwordUser();
    const id = openid();
    const answer = await browser.call(`/api/oauth/wechat/bind?code=${wechatCode(id)}`, { method });
    expect(answer.body).toEqual({ success: true, message: 'bind' });
    expect((await userRow(browser.userId!)).wechat_id).toBe(id);
  });

  it('binds only for a signed-in user', async () => {
    const answer = await new Browser(gateway.url).call(`/api/oauth/wechat/bind?code=${wechatCode(openid())}`);
    expectFailure(answer, 401, 'NOT_LOGGED_IN');
  });

  it("refuses to bind someone else's WeChat account", async () => {
    const id = openid();
    expect((await login(new Browser(gateway.url), id)).body.success).toBe(true);
    const other = await passwordUser();
    expectFailure(await other.call(`/api/oauth/wechat/bind?code=${wechatCode(id)}`), 200, 'OAUTH_ALREADY_BOUND');
    expect((await userRow(other.userId!)).wechat_id).toBe('');
  });

  it('refuses a banned user', async () => {
    const id = openid();
    const userId = (await login(new Browser(gateway.url), id)).body.data.id as number;
    await gateway.store.db.updateTable('users').set({ status: 2 }).where('id', '=', userId).execute();
    expectFailure(await login(new Browser(gateway.url), id), 200, 'USER_BANNED');
  });

  it('turns a WeChat server that is down, failing or babbling into clear errors', async () => {
    await setOptions({ WeChatServerAddress: deadUrl }, async () => {
      expectFailure(await login(new Browser(gateway.url), openid()), 200, 'OAUTH_PROVIDER_UNAVAILABLE');
    });
    for (const [breakage, code] of [
      ['error', 'OAUTH_PROVIDER_UNAVAILABLE'],
      ['garbage', 'OAUTH_PROVIDER_BAD_RESPONSE'],
      ['hang', 'OAUTH_PROVIDER_UNAVAILABLE'],
    ] as const) {
      wechatFake.breaks.set('*', breakage);
      try {
        expectFailure(await login(new Browser(gateway.url), openid()), 200, code);
      } finally {
        wechatFake.breaks.clear();
      }
    }
    await setOptions({ WeChatServerToken: 'wrong-token' }, async () => {
      expectFailure(await login(new Browser(gateway.url), openid()), 200, 'OAUTH_CLIENT_REJECTED');
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Telegram
// ---------------------------------------------------------------------------------------------

describe('Telegram', () => {
  let nextId = 0;
  const now = () => Math.floor(Date.now() / 1000);

  /** What the Login Widget hands the browser: the fields and their hash, per Telegram's rules. */
  function widget(fields: Record<string, string>, botToken = SECRETS.telegram): Record<string, string> {
    const checkString = Object.keys(fields)
      .sort()
      .map((key) => `${key}=${fields[key]}`)
      .join('\n');
    const key = createHash('sha256').update(botToken).digest();
    return { ...fields, hash: createHmac('sha256', key).update(checkString).digest('hex') };
  }
  const person = (extra: Record<string, string> = {}) => {
    nextId++;
    return {
      id: String(7_000_000 + nextId),
      first_name: 'Alice',
      last_name: `Liddell${nextId}`,
      username: `alice${nextId}`,
      photo_url: 'https://t.me/i/userpic/320/alice.jpg',
      auth_date: String(now()),
      ...extra,
    };
  };
  const query = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const login = (browser: Browser, fields: Record<string, string>) =>
    browser.call(`/api/oauth/telegram/login?${query(fields)}`);

  it('refuses while switched off', async () => {
    await setOptions({ TelegramOAuthEnabled: 'false' }, async () => {
      expectFailure(await login(new Browser(gateway.url), widget(person())), 200, 'OAUTH_PROVIDER_DISABLED');
    });
  });

  it('signs up by Telegram id, then signs the same user in', async () => {
    const fields = person();
    const browser = new Browser(gateway.url);
    const first = await login(browser, widget(fields));
    expect(first.body).toMatchObject({
      success: true,
      data: { username: fields.username, display_name: `Alice ${fields.last_name}` },
    });
    const userId = first.body.data.id as number;
    expect((await userRow(userId)).telegram_id).toBe(fields.id);
    expect((await userRow(userId)).quota).toBe(QUOTA.forNewUser);
    browser.userId = userId;
    expect((await browser.call('/api/user/self')).body.data).toMatchObject({ id: userId, telegram_id: fields.id });
    const users = await userCount();
    expect((await login(new Browser(gateway.url), widget({ ...fields, auth_date: String(now()) }))).body.data.id).toBe(
      userId,
    );
    expect(await userCount()).toBe(users);
  });

  it('accepts the language the console appends to the signed fields', async () => {
    const answer = await login(new Browser(gateway.url), { ...widget(person()), lang: 'en' });
    expect(answer.body.success).toBe(true);
  });

  it('refuses data that Telegram did not sign', async () => {
    const browser = new Browser(gateway.url);
    const fields = person();
    const signed = widget(fields);
    expectFailure(await login(browser, { ...signed, hash: 'ab'.repeat(32) }), 200, 'TELEGRAM_SIGNATURE_INVALID');
    expectFailure(await login(browser, { ...signed, id: '1' }), 200, 'TELEGRAM_SIGNATURE_INVALID');
    expectFailure(await login(browser, widget(fields, '999:another-bot')), 200, 'TELEGRAM_SIGNATURE_INVALID');
    const { hash: _dropped, ...unsigned } = signed;
    expectFailure(await login(browser, unsigned), 200, 'TELEGRAM_SIGNATURE_INVALID');
  });

  it('refuses sign-in data older than a day', async () => {
    const browser = new Browser(gateway.url);
    const stale = widget(person({ auth_date: String(now() - 86_400 - 60) }));
    expectFailure(await login(browser, stale), 200, 'TELEGRAM_AUTH_EXPIRED');
    const recent = widget(person({ auth_date: String(now() - 86_400 + 60) }));
    expect((await login(browser, recent)).body.success).toBe(true);
  });

  it('binds to the signed-in user and answers message bind', async () => {
    const browser = await passwordUser();
    const fields = person();
    const answer = await browser.call(`/api/oauth/telegram/bind?${query(widget(fields))}`);
    expect(answer.body).toEqual({ success: true, message: 'bind' });
    expect((await userRow(browser.userId!)).telegram_id).toBe(fields.id);
    expectFailure(
      await new Browser(gateway.url).call(`/api/oauth/telegram/bind?${query(widget(person()))}`),
      401,
      'NOT_LOGGED_IN',
    );
  });

  it("refuses to bind someone else's Telegram account", async () => {
    const fields = person();
    expect((await login(new Browser(gateway.url), widget(fields))).body.success).toBe(true);
    const other = await passwordUser();
    expectFailure(await other.call(`/api/oauth/telegram/bind?${query(widget(fields))}`), 200, 'OAUTH_ALREADY_BOUND');
    expect((await userRow(other.userId!)).telegram_id).toBe('');
  });

  it('refuses a banned user', async () => {
    const fields = person();
    const userId = (await login(new Browser(gateway.url), widget(fields))).body.data.id as number;
    await gateway.store.db.updateTable('users').set({ status: 2 }).where('id', '=', userId).execute();
    expectFailure(await login(new Browser(gateway.url), widget(fields)), 200, 'USER_BANNED');
  });
});

// ---------------------------------------------------------------------------------------------

describe('credentials', () => {
  it('never appear in an answer or a log line', () => {
    expect(seen.length).toBeGreaterThan(100);
    expect(logs.length).toBeGreaterThan(100);
    for (const secret of Object.values(SECRETS)) {
      expect(seen.filter((text) => text.includes(secret))).toEqual([]);
      expect(logs.filter((line) => line.includes(secret))).toEqual([]);
    }
    // Provider failures were logged with a reason an operator can act on.
    expect(logs.some((line) => line.includes('OAUTH_PROVIDER_UNAVAILABLE') && line.includes('timed out'))).toBe(true);
  });
});
