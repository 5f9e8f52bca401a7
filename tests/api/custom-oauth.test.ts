import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpAt } from '../../gateway/src/domain/accounts/two-factor/totp.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type Answer, clientsFrom, type DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockOidc, type OidcPerson, startMockOidc } from '../support/mock-oidc.ts';

const SERVER_ADDRESS = 'http://tollgate.test';
const CLIENT = { id: 'acme-client', secret: 'ACME-SECRET-93be1d', redirectUri: `${SERVER_ADDRESS}/oauth/acme` };
const DISCORD = { id: '1122334455', secret: 'DISCORD-SECRET-5d77aa' };

let gateway: Gateway;
let drop: () => Promise<void>;
let oidc: MockOidc;
let discord: { url: string; close(): Promise<void>; people: Map<string, Record<string, unknown>> };
let notJson: { url: string; close(): Promise<void> };
let root: DashboardClient;
let providerId: number;
const clients = clientsFrom(() => gateway.url, '10.91.0');
/** Every answer body, for the check that the client secrets never leave the gateway. */
const answers: string[] = [];

/**
 * A local server speaking Discord's protocol: POST /oauth2/token with a form body (client credentials,
 * code, redirect_uri), GET /users/@me with the Bearer token.
 */
async function startDiscord() {
  const codes = new Map<string, Record<string, unknown>>();
  const tokens = new Map<string, Record<string, unknown>>();
  const people = new Map<string, Record<string, unknown>>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      const send = (status: number, json: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      const url = new URL(req.url ?? '/', 'http://discord');
      if (req.method === 'POST' && url.pathname === '/api/v10/oauth2/token') {
        const form = new URLSearchParams(body);
        if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') return send(400, { error: 'form' });
        if (form.get('client_id') !== DISCORD.id || form.get('client_secret') !== DISCORD.secret) {
          return send(401, { error: 'invalid_client' });
        }
        const person = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (!person || form.get('redirect_uri') !== `${SERVER_ADDRESS}/oauth/discord`) {
          return send(400, { error: 'invalid_grant' });
        }
        const token = `dt_${Math.random().toString(36).slice(2)}`;
        tokens.set(token, person);
        return send(200, { access_token: token, token_type: 'Bearer', expires_in: 604800, scope: 'identify' });
      }
      if (req.method === 'GET' && url.pathname === '/api/v10/users/@me') {
        const person = tokens.get(req.headers.authorization?.replace(/^Bearer /, '') ?? '');
        return person ? send(200, person) : send(401, { message: '401: Unauthorized', code: 0 });
      }
      // Lets the test hand out codes the way Discord's authorize page would.
      if (url.pathname === '/test/code') {
        const code = `dc_${Math.random().toString(36).slice(2)}`;
        codes.set(code, people.get(url.searchParams.get('id') ?? '') ?? {});
        return send(200, { code });
      }
      send(404, { message: '404: Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    people,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

beforeAll(async () => {
  oidc = await startMockOidc(CLIENT);
  discord = await startDiscord();
  const html = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html/>'));
  await new Promise<void>((resolve) => html.listen(0, '127.0.0.1', resolve));
  notJson = {
    url: `http://127.0.0.1:${(html.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => html.close(() => resolve())),
  };
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), {
      TRUST_PROXY: 'true',
      OAUTH_TIMEOUT_MS: '2000',
      DISCORD_API_URL: `${discord.url}/api/v10`,
    }),
  );
  // The mocks listen on loopback ports: the outbound guard's defaults would refuse them (tested below).
  await gateway.options.setMany({ ServerAddress: SERVER_ADDRESS, 'fetch_setting.enable_ssrf_protection': 'false' });
  root = await setupRoot(gateway.url);
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await oidc?.stop();
  await discord?.close();
  await notJson?.close();
  expect(answers.join('\n')).not.toContain(CLIENT.secret);
  expect(answers.join('\n')).not.toContain(DISCORD.secret);
});

const record = (answer: Answer) => {
  answers.push(JSON.stringify(answer.body));
  return answer;
};
const admin = {
  get: async (path: string) => record(await root.get(path)),
  post: async (path: string, body: unknown) => record(await root.post(path, body)),
  put: async (path: string, body: unknown) => record(await root.put(path, body)),
  delete: async (path: string) => record(await root.delete(path)),
};

let counter = 0;
function person(extra: Partial<OidcPerson> = {}): OidcPerson {
  counter++;
  return {
    sub: `acme-${counter}-${Date.now()}`,
    preferred_username: `acme${counter}`,
    name: `Acme ${counter}`,
    ...extra,
  };
}

/**
 * The browser's round trip: a state from the gateway (and its cookie), the provider's authorize page
 * (oauth2-mock-server's real endpoint) redirecting back with a code, then the callback.
 */
async function signInWith(client: DashboardClient, who: OidcPerson, slug = 'acme'): Promise<Answer> {
  const stateAnswer = await client.get('/api/oauth/state');
  const state = stateAnswer.body.data as string;
  oidc.signIn(who);
  const authorize = new URL(`${oidc.issuer}/authorize`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT.id,
    redirect_uri: `${SERVER_ADDRESS}/oauth/${slug}`,
    scope: 'openid profile email',
    state,
  }).toString();
  const redirect = await fetch(authorize, { redirect: 'manual' });
  const back = new URL(redirect.headers.get('location') ?? '');
  expect(back.searchParams.get('state')).toBe(state);
  return callback(client, slug, back.searchParams.get('code') ?? '', state, state);
}

async function callback(client: DashboardClient, slug: string, code: string, state: string, cookieState: string) {
  const session = client.cookie;
  client.cookie = [session, `oauth_state=${cookieState}`].filter(Boolean).join('; ');
  try {
    return record(await client.get(`/api/oauth/${slug}?code=${encodeURIComponent(code)}&state=${state}`));
  } finally {
    if (client.cookie.includes('oauth_state=')) client.cookie = session;
  }
}

const acme = (overrides: Record<string, unknown> = {}) => ({
  name: 'Acme SSO',
  slug: 'acme',
  icon: 'acme',
  enabled: true,
  client_id: CLIENT.id,
  client_secret: CLIENT.secret,
  authorization_endpoint: `${oidc.issuer}/authorize`,
  token_endpoint: `${oidc.issuer}/token`,
  user_info_endpoint: `${oidc.issuer}/userinfo`,
  scopes: 'openid profile email',
  ...overrides,
});

const bindingCount = async (userId: number) =>
  (await gateway.store.db.selectFrom('user_oauth_bindings').select('id').where('user_id', '=', userId).execute())
    .length;

describe('/api/custom-oauth-provider (root only)', () => {
  it('fills the form from an issuer through discovery, and refuses bad or unusable URLs with stable codes', async () => {
    const found = await admin.post('/api/custom-oauth-provider/discovery', { issuer_url: `${oidc.issuer}/` });
    expect(found.body).toMatchObject({
      success: true,
      data: {
        well_known_url: `${oidc.issuer}/.well-known/openid-configuration`,
        discovery: {
          issuer: oidc.issuer,
          authorization_endpoint: `${oidc.issuer}/authorize`,
          token_endpoint: `${oidc.issuer}/token`,
          userinfo_endpoint: `${oidc.issuer}/userinfo`,
        },
      },
    });
    const direct = await admin.post('/api/custom-oauth-provider/discovery', {
      well_known_url: `${oidc.issuer}/.well-known/openid-configuration`,
    });
    expect(direct.body.data.discovery.token_endpoint).toBe(`${oidc.issuer}/token`);

    for (const body of [{}, { issuer_url: 'ftp://example.com' }, { issuer_url: 'not a url' }]) {
      expect(refusalOf(await admin.post('/api/custom-oauth-provider/discovery', body))).toEqual({
        status: 200,
        success: false,
        code: 'CUSTOM_OAUTH_DISCOVERY_URL_INVALID',
      });
    }
    // With the outbound guard's defaults, a private address is refused before any request.
    await gateway.options.setMany({ 'fetch_setting.enable_ssrf_protection': 'true' });
    try {
      const refused = await admin.post('/api/custom-oauth-provider/discovery', { issuer_url: oidc.issuer });
      expect(refusalOf(refused)).toEqual({ status: 200, success: false, code: 'OUTBOUND_URL_REFUSED' });
    } finally {
      await gateway.options.setMany({ 'fetch_setting.enable_ssrf_protection': 'false' });
    }
    const dead = `http://127.0.0.1:1`;
    for (const body of [{ issuer_url: dead }, { issuer_url: notJson.url }, { issuer_url: `${oidc.issuer}/nowhere` }]) {
      const answer = await admin.post('/api/custom-oauth-provider/discovery', body);
      expect(refusalOf(answer)).toEqual({ status: 200, success: false, code: 'CUSTOM_OAUTH_DISCOVERY_FAILED' });
    }
  });

  it('refuses everyone but root', async () => {
    const user = await clients.user('notroot1');
    for (const [method, path] of [
      ['GET', '/api/custom-oauth-provider/'],
      ['POST', '/api/custom-oauth-provider/'],
      ['POST', '/api/custom-oauth-provider/discovery'],
      ['GET', '/api/custom-oauth-provider/1'],
      ['PUT', '/api/custom-oauth-provider/1'],
      ['DELETE', '/api/custom-oauth-provider/1'],
    ] as const) {
      const answer = await user.call(method, path, method === 'GET' || method === 'DELETE' ? undefined : acme());
      expect([path, answer.body.success]).toEqual([path, false]);
    }
    expect((await clients.client().get('/api/custom-oauth-provider/')).status).toBe(401);
    expect(await gateway.store.db.selectFrom('custom_oauth_providers').select('id').execute()).toEqual([]);
  });

  it('validates what it stores: slug, URLs, lengths, auth style', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ slug: 'github' }, 'CUSTOM_OAUTH_SLUG_RESERVED'],
      [{ slug: 'state' }, 'CUSTOM_OAUTH_SLUG_RESERVED'],
      [{ slug: 'discord' }, 'CUSTOM_OAUTH_SLUG_RESERVED'],
      [{ slug: 'Bad Slug' }, 'CUSTOM_OAUTH_FIELD_INVALID'],
      [{ slug: '-acme' }, 'CUSTOM_OAUTH_FIELD_INVALID'],
      [{ name: '  ' }, 'CUSTOM_OAUTH_FIELD_INVALID'],
      [{ name: 'x'.repeat(65) }, 'CUSTOM_OAUTH_FIELD_INVALID'],
      [{ client_id: '' }, 'CUSTOM_OAUTH_FIELD_INVALID'],
      [{ token_endpoint: 'javascript:alert(1)' }, 'CUSTOM_OAUTH_FIELD_INVALID'],
      [{ user_info_endpoint: '' }, 'CUSTOM_OAUTH_FIELD_INVALID'],
      [{ authorization_endpoint: 'ftp://x.test/a' }, 'CUSTOM_OAUTH_FIELD_INVALID'],
      [{ user_id_field: 'a..b' }, 'CUSTOM_OAUTH_FIELD_INVALID'],
      [{ auth_style: 7 }, 'CUSTOM_OAUTH_FIELD_INVALID'],
    ];
    for (const [overrides, code] of cases) {
      const answer = await admin.post('/api/custom-oauth-provider/', acme(overrides));
      expect([overrides, refusalOf(answer)]).toEqual([overrides, { status: 200, success: false, code }]);
    }
    expect(refusalOf(await admin.post('/api/custom-oauth-provider/', { slug: 'x' })).success).toBe(false);
    expect(await gateway.store.db.selectFrom('custom_oauth_providers').select('id').execute()).toEqual([]);
  });

  it('creates, reads, lists and updates a provider without ever answering its secret', async () => {
    const created = await admin.post('/api/custom-oauth-provider/', acme({ enabled: false }));
    expect(created.body).toMatchObject({
      success: true,
      data: {
        name: 'Acme SSO',
        slug: 'acme',
        enabled: false,
        client_id: CLIENT.id,
        user_id_field: 'sub',
        username_field: 'preferred_username',
        display_name_field: 'name',
        email_field: 'email',
        auth_style: 0,
      },
    });
    expect(created.body.data).not.toHaveProperty('client_secret');
    providerId = created.body.data.id;
    const stored = await gateway.store.db
      .selectFrom('custom_oauth_providers')
      .select('client_secret')
      .where('id', '=', providerId)
      .executeTakeFirstOrThrow();
    expect(stored.client_secret).not.toContain(CLIENT.secret);
    expect(stored.client_secret).not.toBe('');

    expect(refusalOf(await admin.post('/api/custom-oauth-provider/', acme()))).toEqual({
      status: 200,
      success: false,
      code: 'CUSTOM_OAUTH_SLUG_TAKEN',
    });
    const list = await admin.get('/api/custom-oauth-provider/');
    expect(list.body.data.map((p: { slug: string }) => p.slug)).toEqual(['acme']);
    expect(list.body.data[0]).not.toHaveProperty('client_secret');

    // An update without a secret keeps the stored one; the provider still works afterwards (see below).
    const updated = await admin.put(`/api/custom-oauth-provider/${providerId}`, { enabled: true, client_secret: '' });
    expect(updated.body).toMatchObject({ success: true, data: { enabled: true, name: 'Acme SSO' } });
    const one = await admin.get(`/api/custom-oauth-provider/${providerId}`);
    expect(one.body.data).toMatchObject({ id: providerId, enabled: true });
    expect(refusalOf(await admin.get('/api/custom-oauth-provider/999999'))).toEqual({
      status: 200,
      success: false,
      code: 'CUSTOM_OAUTH_NOT_FOUND',
    });
    expect(refusalOf(await admin.put('/api/custom-oauth-provider/999999', { name: 'x' })).code).toBe(
      'CUSTOM_OAUTH_NOT_FOUND',
    );
    expect(refusalOf(await admin.put(`/api/custom-oauth-provider/${providerId}`, { slug: 'oidc' })).code).toBe(
      'CUSTOM_OAUTH_SLUG_RESERVED',
    );
  });

  it('lists enabled providers in /api/status with what the login page needs', async () => {
    const disabled = await admin.post(
      '/api/custom-oauth-provider/',
      acme({ slug: 'dormant', name: 'Dormant', enabled: false }),
    );
    const status = record(await clients.client().get('/api/status'));
    expect(status.body.data.custom_oauth_providers).toEqual([
      {
        id: providerId,
        name: 'Acme SSO',
        slug: 'acme',
        icon: 'acme',
        client_id: CLIENT.id,
        authorization_endpoint: `${oidc.issuer}/authorize`,
        scopes: 'openid profile email',
      },
    ]);
    await admin.delete(`/api/custom-oauth-provider/${disabled.body.data.id}`);
  });

  it('reads the enabled providers for /api/status once a while, and at once after a change through the API', async () => {
    const names = async () =>
      record(await clients.client().get('/api/status')).body.data.custom_oauth_providers.map(
        (provider: { name: string }) => provider.name,
      );
    expect(await names()).toEqual(['Acme SSO']);
    // Another pod's change (made behind this gateway's back) is not re-read on every status call…
    await gateway.store.db
      .updateTable('custom_oauth_providers')
      .set({ name: 'Renamed elsewhere' })
      .where('id', '=', providerId)
      .execute();
    expect(await names()).toEqual(['Acme SSO']);
    // …while a change through this gateway shows at once (and the row as it is now with it).
    expect((await admin.put(`/api/custom-oauth-provider/${providerId}`, { icon: 'acme' })).body.success).toBe(true);
    expect(await names()).toEqual(['Renamed elsewhere']);
    expect((await admin.put(`/api/custom-oauth-provider/${providerId}`, { name: 'Acme SSO' })).body.success).toBe(true);
    expect(await names()).toEqual(['Acme SSO']);
  });
});

describe('signing in and binding with a custom provider (oauth2-mock-server)', () => {
  it('signs a new user up, then signs the same user in', async () => {
    const who = person({ email: 'acme-new@example.com' });
    const visitor = clients.client();
    const first = await signInWith(visitor, who);
    expect(first.body).toMatchObject({
      success: true,
      data: { username: who.preferred_username, display_name: who.name },
    });
    const userId = first.body.data.id as number;
    expect(
      (await gateway.store.db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirstOrThrow())
        .email,
    ).toBe('acme-new@example.com');
    const binding = await gateway.store.db
      .selectFrom('user_oauth_bindings')
      .selectAll()
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    expect(binding).toMatchObject({ provider_id: providerId, provider_user_id: who.sub });
    // The session works.
    visitor.userId = userId;
    expect((await visitor.get('/api/user/self')).body.data.id).toBe(userId);

    const again = clients.client();
    const second = await signInWith(again, who);
    expect(second.body).toMatchObject({ success: true, data: { id: userId } });
    // The token call sent the credentials in the form (auth_style 0) and the callback address.
    const last = oidc.tokenRequests.at(-1);
    expect(last).toMatchObject({ basic: false, body: { client_id: CLIENT.id, redirect_uri: CLIENT.redirectUri } });
  });

  it('binds to the signed-in user, lists the binding in new-api shape, and refuses an account bound elsewhere', async () => {
    const user = await clients.user('binder1');
    const who = person();
    const bound = await signInWith(user, who);
    expect(bound.body).toMatchObject({ success: true, message: 'bind' });
    const list = record(await user.get('/api/user/oauth/bindings'));
    expect(list.body.data).toEqual([
      {
        provider_id: providerId,
        provider_name: 'Acme SSO',
        provider_slug: 'acme',
        provider_icon: 'acme',
        provider_user_id: who.sub,
      },
    ]);
    // The administrator sees it too.
    const listed = await admin.get(`/api/user/${user.userId}/oauth/bindings`);
    expect(listed.body.data).toEqual(list.body.data);

    const other = await clients.user('binder2');
    expect(refusalOf(await signInWith(other, who))).toEqual({
      status: 200,
      success: false,
      code: 'OAUTH_ALREADY_BOUND',
    });
    expect(await bindingCount(other.userId!)).toBe(0);

    // Signing in with the bound account reaches the binder.
    const signedIn = await signInWith(clients.client(), who);
    expect(signedIn.body.data.id).toBe(user.userId);

    // With a password, unbinding is allowed (by provider id, as new-api's console sends it).
    const unbound = record(await user.delete(`/api/user/oauth/bindings/${providerId}`));
    expect(unbound.body.success).toBe(true);
    expect(await bindingCount(user.userId!)).toBe(0);
    expect(refusalOf(await user.delete(`/api/user/oauth/bindings/${providerId}`)).code).toBe('BINDING_NOT_FOUND');
  });

  it('refuses a wrong, reused or missing state, a disabled provider, and an unknown slug', async () => {
    const visitor = clients.client();
    const state = (await visitor.get('/api/oauth/state')).body.data as string;
    const other = (await clients.client().get('/api/oauth/state')).body.data as string;
    expect(refusalOf(await callback(visitor, 'acme', 'code-x', other, state)).code).toBe('OAUTH_STATE_INVALID');
    expect(refusalOf(await callback(visitor, 'acme', 'code-x', '', state)).code).toBe('OAUTH_STATE_INVALID');

    await admin.put(`/api/custom-oauth-provider/${providerId}`, { enabled: false });
    try {
      expect(refusalOf(await signInWith(clients.client(), person()))).toEqual({
        status: 200,
        success: false,
        code: 'OAUTH_PROVIDER_DISABLED',
      });
    } finally {
      await admin.put(`/api/custom-oauth-provider/${providerId}`, { enabled: true });
    }
    expect(refusalOf(await signInWith(clients.client(), person(), 'nosuch'))).toEqual({
      status: 200,
      success: false,
      code: 'OAUTH_PROVIDER_UNKNOWN',
    });
  });

  it('sends the client credentials in HTTP Basic when auth_style is 2, and reads dotted paths', async () => {
    await admin.put(`/api/custom-oauth-provider/${providerId}`, { auth_style: 2, username_field: 'name' });
    try {
      const who = person({ name: 'basicuser' });
      const answer = await signInWith(clients.client(), who);
      expect(answer.body).toMatchObject({ success: true, data: { username: 'basicuser' } });
      const last = oidc.tokenRequests.at(-1);
      expect(last?.basic).toBe(true);
      expect(last?.body).not.toHaveProperty('client_secret');
    } finally {
      await admin.put(`/api/custom-oauth-provider/${providerId}`, {
        auth_style: 0,
        username_field: 'preferred_username',
      });
    }
  });

  it('reads the account id at a dotted path, numbers included', async () => {
    await admin.put(`/api/custom-oauth-provider/${providerId}`, { user_id_field: 'account.uid' });
    try {
      const answer = await signInWith(clients.client(), person({ account: { uid: 4242 } }));
      expect(answer.body.success).toBe(true);
      const binding = await gateway.store.db
        .selectFrom('user_oauth_bindings')
        .select('provider_user_id')
        .where('user_id', '=', answer.body.data.id)
        .executeTakeFirstOrThrow();
      expect(binding.provider_user_id).toBe('4242');
      // An answer without the field is the provider's fault, said as such.
      expect(refusalOf(await signInWith(clients.client(), person())).code).toBe('OAUTH_PROVIDER_BAD_RESPONSE');
    } finally {
      await admin.put(`/api/custom-oauth-provider/${providerId}`, { user_id_field: 'sub' });
    }
  });

  it('applies the invitation code, honours RegisterEnabled and still asks for the second factor', async () => {
    const inviter = await clients.user('inviter1');
    const aff = (await inviter.get('/api/user/aff')).body.data as string;
    const visitor = clients.client();
    const state = (await visitor.get(`/api/oauth/state?aff=${aff}`)).body.data as string;
    const who = person();
    oidc.signIn(who);
    const authorize = new URL(`${oidc.issuer}/authorize`);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      redirect_uri: CLIENT.redirectUri,
      state,
    }).toString();
    const back = new URL((await fetch(authorize, { redirect: 'manual' })).headers.get('location') ?? '');
    const invited = await callback(visitor, 'acme', back.searchParams.get('code') ?? '', state, state);
    expect(invited.body.success).toBe(true);
    const row = await gateway.store.db
      .selectFrom('users')
      .select('inviter_id')
      .where('id', '=', invited.body.data.id)
      .executeTakeFirstOrThrow();
    expect(row.inviter_id).toBe(inviter.userId);

    await gateway.options.setMany({ RegisterEnabled: 'false' });
    try {
      expect(refusalOf(await signInWith(clients.client(), person())).code).toBe('REGISTER_DISABLED');
      // An existing account still signs in.
      expect((await signInWith(clients.client(), who)).body.data.id).toBe(invited.body.data.id);
    } finally {
      await gateway.options.setMany({ RegisterEnabled: 'true' });
    }

    // With two-factor sign-in on, the provider does not skip the code.
    const twoFactor = await clients.user('twofactor1');
    const bound = await signInWith(twoFactor, person({ sub: 'acme-2fa' }));
    expect(bound.body.message).toBe('bind');
    const setup = (await twoFactor.post('/api/user/2fa/setup')).body.data;
    expect(
      (await twoFactor.post('/api/user/2fa/enable', { code: totpAt(setup.secret, Date.now() / 1000) })).body.success,
    ).toBe(true);
    const pending = await signInWith(clients.client(), person({ sub: 'acme-2fa' }));
    expect(pending.body).toMatchObject({ success: true, data: { require_2fa: true } });
  });

  it('refuses to unbind the last way to sign in, counting built-in and custom bindings', async () => {
    const visitor = clients.client();
    const who = person();
    const created = await signInWith(visitor, who);
    visitor.userId = created.body.data.id;
    expect(refusalOf(await visitor.delete(`/api/user/oauth/bindings/${providerId}`))).toEqual({
      status: 200,
      success: false,
      code: 'BINDING_LAST_SIGN_IN',
    });
    expect(await bindingCount(visitor.userId!)).toBe(1);
    // A second way (a GitHub id on the row) makes the custom binding removable, and then GitHub is the last.
    await gateway.store.db
      .updateTable('users')
      .set({ github_id: `gh-${who.sub}` })
      .where('id', '=', visitor.userId!)
      .execute();
    expect((await visitor.delete(`/api/user/oauth/bindings/${providerId}`)).body.success).toBe(true);
    expect(refusalOf(await visitor.delete('/api/user/oauth/bindings/github')).code).toBe('BINDING_LAST_SIGN_IN');
  });

  it('refuses a deregistered user’s account and keeps the provider while live users are bound to it', async () => {
    const visitor = clients.client();
    const who = person();
    const created = await signInWith(visitor, who);
    const userId = created.body.data.id as number;
    await gateway.store.db
      .updateTable('users')
      .set({ deleted_at: Math.floor(Date.now() / 1000) })
      .where('id', '=', userId)
      .execute();
    expect(refusalOf(await signInWith(clients.client(), who)).code).toBe('OAUTH_ACCOUNT_DEREGISTERED');

    const refused = await admin.delete(`/api/custom-oauth-provider/${providerId}`);
    expect(refusalOf(refused)).toEqual({ status: 200, success: false, code: 'CUSTOM_OAUTH_IN_USE' });
    expect((await admin.get(`/api/custom-oauth-provider/${providerId}`)).body.success).toBe(true);
  });

  it('deletes a provider nobody live is bound to', async () => {
    const spare = await admin.post('/api/custom-oauth-provider/', acme({ slug: 'spare', name: 'Spare' }));
    const id = spare.body.data.id as number;
    const deleted = await admin.delete(`/api/custom-oauth-provider/${id}`);
    expect(deleted.body).toMatchObject({ success: true });
    expect(refusalOf(await admin.get(`/api/custom-oauth-provider/${id}`)).code).toBe('CUSTOM_OAUTH_NOT_FOUND');
    expect(refusalOf(await admin.delete(`/api/custom-oauth-provider/${id}`)).code).toBe('CUSTOM_OAUTH_NOT_FOUND');
  });
});

describe('Discord (a local server speaking its protocol)', () => {
  const discordCode = async (id: string) =>
    ((await (await fetch(`${discord.url}/test/code?id=${id}`)).json()) as { code: string }).code;
  async function discordSignIn(client: DashboardClient, id: string): Promise<Answer> {
    const state = (await client.get('/api/oauth/state')).body.data as string;
    return callback(client, 'discord', await discordCode(id), state, state);
  }

  it('is off, and says so in /api/status, until the administrator switches it on', async () => {
    const status = await clients.client().get('/api/status');
    expect(status.body.data).toMatchObject({ discord_oauth: false, discord_client_id: '' });
    discord.people.set('801', { id: '801', username: 'dora', global_name: 'Dora' });
    expect(refusalOf(await discordSignIn(clients.client(), '801')).code).toBe('OAUTH_PROVIDER_DISABLED');
  });

  it('signs up, signs in and binds with Discord accounts', async () => {
    const saved = await admin.put('/api/option/', { key: 'discord.client_id', value: DISCORD.id });
    expect(saved.body.success).toBe(true);
    await admin.put('/api/option/', { key: 'discord.client_secret', value: DISCORD.secret });
    await admin.put('/api/option/', { key: 'discord.enabled', value: 'true' });
    const status = record(await clients.client().get('/api/status'));
    expect(status.body.data).toMatchObject({ discord_oauth: true, discord_client_id: DISCORD.id });

    discord.people.set('802', { id: '802', username: 'dylan', global_name: 'Dylan D' });
    const first = await discordSignIn(clients.client(), '802');
    expect(first.body).toMatchObject({ success: true, data: { username: 'dylan', display_name: 'Dylan D' } });
    const row = await gateway.store.db
      .selectFrom('users')
      .select('discord_id')
      .where('id', '=', first.body.data.id)
      .executeTakeFirstOrThrow();
    expect(row.discord_id).toBe('802');
    expect((await discordSignIn(clients.client(), '802')).body.data.id).toBe(first.body.data.id);

    const user = await clients.user('discorder');
    discord.people.set('803', { id: '803', username: 'dee' });
    expect((await discordSignIn(user, '803')).body).toMatchObject({ success: true, message: 'bind' });
    expect((await user.get('/api/user/oauth/bindings')).body.data).toEqual([
      {
        provider_id: 'discord',
        provider_name: 'Discord',
        provider_slug: 'discord',
        provider_icon: '',
        provider_user_id: '803',
      },
    ]);
    expect((await user.get('/api/user/self')).body.data.discord_id).toBe('803');
    expect(refusalOf(await discordSignIn(await clients.user('discorder2'), '803')).code).toBe('OAUTH_ALREADY_BOUND');
    expect((await user.delete('/api/user/oauth/bindings/discord')).body.success).toBe(true);
  });
});
