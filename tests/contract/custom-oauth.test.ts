import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockOidc, startMockOidc } from '../support/mock-oidc.ts';
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
 * Custom OAuth providers and Discord as new-api's front end calls them (CATALOGUE.md "Custom OAuth
 * providers"): the root settings page (list, discovery, create with every field its form sends, edit,
 * delete), the status the login page builds buttons from, the callback and the bindings list.
 * oauth2-mock-server is the provider.
 */

const SERVER = 'http://contract.test';
let g: ContractGateway;
let oidc: MockOidc;

beforeAll(async () => {
  g = await startContractGateway('10.19.11');
  oidc = await startMockOidc({ id: 'ct-client', secret: 'ct-secret', redirectUri: `${SERVER}/oauth/ct-sso` });
  // The provider listens on loopback: let the outbound guard reach it.
  await g.gateway.options.setMany({ ServerAddress: SERVER, 'fetch_setting.enable_ssrf_protection': 'false' });
});

afterAll(async () => {
  await oidc?.stop();
  await g?.stop();
});

/** new-api's CustomOAuthProviderResponse, the fields our gateway serves (no client_secret). */
const PROVIDER: Shape = {
  id: 'integer',
  name: 'string',
  slug: 'string',
  icon: 'string',
  enabled: 'boolean',
  client_id: 'string',
  authorization_endpoint: 'string',
  token_endpoint: 'string',
  user_info_endpoint: 'string',
  scopes: 'string',
  user_id_field: 'string',
  username_field: 'string',
  display_name_field: 'string',
  email_field: 'string',
  well_known: 'string',
  auth_style: 'integer',
};

/** What /api/status lists for the login page's buttons. */
const STATUS_PROVIDER: Shape = {
  id: 'integer',
  name: 'string',
  slug: 'string',
  icon: 'string',
  client_id: 'string',
  authorization_endpoint: 'string',
  scopes: 'string',
};

const SESSION_USER: Shape = { id: 'integer', username: 'string', display_name: 'string', role: 'integer' };

let providerId: number;

/** The front end's round trip: POST /api/oauth/state, the provider's page, GET /api/oauth/{slug}. */
async function viaProvider(c: FrontEnd, sub: string, intent: 'login' | 'bind') {
  const state = expectOk(await c.post('/api/oauth/state', { provider: 'ct-sso', intent, aff: '' })) as string;
  oidc.signIn({ sub, preferred_username: sub.replace(/\W/g, ''), name: `Contract ${sub}` });
  const authorize = new URL(`${oidc.issuer}/authorize`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: 'ct-client',
    redirect_uri: `${SERVER}/oauth/ct-sso`,
    scope: 'openid profile email',
    state,
  }).toString();
  const back = new URL((await fetch(authorize, { redirect: 'manual' })).headers.get('location') ?? '');
  return c.get(`/api/oauth/ct-sso?code=${back.searchParams.get('code')}&state=${back.searchParams.get('state')}`);
}

describe('root settings page', () => {
  it('discovery answers {well_known_url, discovery} for the form', async () => {
    const data = expectOk(
      await g.root.post('/api/custom-oauth-provider/discovery', { well_known_url: '', issuer_url: oidc.issuer }),
    );
    expectShape(data, { well_known_url: 'string', discovery: 'object' }, 'discovery');
    expectShape(
      data.discovery,
      { authorization_endpoint: 'string', token_endpoint: 'string', userinfo_endpoint: 'string' },
      'discovery.discovery',
    );
    expectRefusal(await g.root.post('/api/custom-oauth-provider/discovery', {}), 'CUSTOM_OAUTH_DISCOVERY_URL_INVALID');
  });

  it('creates with every field the form sends (unknown ones ignored), lists, reads, edits', async () => {
    const created = expectOk(
      await g.root.post('/api/custom-oauth-provider/', {
        name: 'Contract SSO',
        slug: 'ct-sso',
        icon: '',
        kind: 'oauth_code',
        enabled: true,
        client_id: 'ct-client',
        client_secret: 'ct-secret',
        authorization_endpoint: `${oidc.issuer}/authorize`,
        token_endpoint: `${oidc.issuer}/token`,
        user_info_endpoint: `${oidc.issuer}/userinfo`,
        scopes: 'openid profile email',
        user_id_field: 'sub',
        username_field: 'preferred_username',
        display_name_field: 'name',
        email_field: 'email',
        well_known: `${oidc.issuer}/.well-known/openid-configuration`,
        auth_style: 0,
        access_policy: '',
        access_denied_message: '',
        auto_register: false,
      }),
    );
    expectShape(created, PROVIDER, 'created');
    expect(created).not.toHaveProperty('client_secret');
    providerId = created.id;
    const list = expectOk(await g.root.get('/api/custom-oauth-provider/'));
    expect(Array.isArray(list)).toBe(true);
    for (const item of list) expectShape(item, PROVIDER, 'list item');
    expectShape(expectOk(await g.root.get(`/api/custom-oauth-provider/${providerId}`)), PROVIDER, 'one');
    // handleSubmit sends the whole provider as listed (id included, no secret), edited.
    const edited = expectOk(
      await g.root.put(`/api/custom-oauth-provider/${providerId}`, { ...created, icon: 'key', kind: 'oauth_code' }),
    );
    expect(edited.icon).toBe('key');
    expectRefusal(await g.root.post('/api/custom-oauth-provider/', { name: 'x', slug: 'ct-sso' }));
  });
});

describe('login page, callback and bindings', () => {
  it('/api/status lists the enabled providers and the Discord flags', async () => {
    const status = expectOk(await g.visitor().get('/api/status'));
    expectShape(status, { discord_oauth: 'boolean', discord_client_id: 'string', custom_oauth_providers: 'array' });
    expect(status.custom_oauth_providers).toHaveLength(1);
    expectShape(status.custom_oauth_providers[0], STATUS_PROVIDER, 'status provider');
  });

  it('signs in through the callback, binds for a signed-in user, lists and removes the binding', async () => {
    const visitor = g.visitor();
    expectShape(expectOk(await viaProvider(visitor, 'ct-person-1', 'login')), SESSION_USER, 'session user');

    const user = await g.user('ct-binder');
    const bound = await viaProvider(user, 'ct-person-2', 'bind');
    expectOk(bound);
    expect(bound.body.message).toBe('bind');
    const bindings = expectOk(await user.get('/api/user/oauth/bindings'));
    expect(bindings).toHaveLength(1);
    expectShape(
      bindings[0],
      {
        provider_id: 'integer',
        provider_name: 'string',
        provider_slug: 'string',
        provider_icon: 'string',
        provider_user_id: 'string',
      },
      'binding',
    );
    expectOk(await user.delete(`/api/user/oauth/bindings/${bindings[0].provider_id}`));
    expect(expectOk(await user.get('/api/user/oauth/bindings'))).toEqual([]);
  });

  it('refuses deleting a provider users are bound to, then deletes it once they are gone', async () => {
    expectRefusal(await g.root.delete(`/api/custom-oauth-provider/${providerId}`), 'CUSTOM_OAUTH_IN_USE');
    await g.gateway.store.db.deleteFrom('user_oauth_bindings').where('provider_id', '=', providerId).execute();
    expectOk(await g.root.delete(`/api/custom-oauth-provider/${providerId}`));
  });
});
