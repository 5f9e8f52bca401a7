import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { type MockOidc, startMockOidc } from '../support/mock-oidc.ts';
import {
  type ConsoleGateway,
  launchBrowser,
  localItem,
  openPage,
  screenshot,
  signInByApi,
  signInThroughUi,
  startConsoleGateway,
} from './support.ts';

// Single sign-on with a provider the administrator configures (issue 19), in a real browser: root adds a
// provider on the settings page with discovery from oauth2-mock-server's issuer, a visitor signs in with it
// from the login page (the mock's authorize endpoint sends the browser back with a code), and an existing
// user binds it on the personal page.

const ROOT_PASSWORD = 'root-password-1';
const SECRET = 'SSO-SECRET-1f2e3d';
let server: ConsoleGateway;
let oidc: MockOidc;
let browser: Browser;
let root: DashboardClient;

beforeAll(async () => {
  server = await startConsoleGateway();
  root = await setupRoot(server.url, ROOT_PASSWORD);
  expect((await root.put('/api/option/', { key: 'ServerAddress', value: server.url })).body.success).toBe(true);
  // Discovery goes through the outbound guard, whose defaults refuse the mock's loopback address.
  await server.gateway.options.setMany({ 'fetch_setting.enable_ssrf_protection': 'false' });
  oidc = await startMockOidc({ id: 'sso-client', secret: SECRET, redirectUri: `${server.url}/oauth/sso` });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await oidc?.stop();
  await server?.stop();
});

const byTestId = (page: Page, id: string) => page.locator(`[data-testid="${id}"]`);

describe('custom OAuth providers in the console', () => {
  it('root configures a provider through discovery; a visitor signs in with it from the login page', async () => {
    const { page, errors } = await openPage(browser, server.url);
    await signInThroughUi(page, { username: 'root', password: ROOT_PASSWORD });
    await page.goto('/setting?tab=system');
    await byTestId(page, 'custom-oauth-add').click();
    const dialog = byTestId(page, 'custom-oauth-dialog');
    await byTestId(page, 'custom-oauth-issuer').fill(oidc.issuer);
    await byTestId(page, 'custom-oauth-discover').click();
    await expect
      .poll(() => byTestId(page, 'custom-oauth-field-authorization_endpoint').inputValue())
      .toBe(`${oidc.issuer}/authorize`);
    expect(await byTestId(page, 'custom-oauth-field-token_endpoint').inputValue()).toBe(`${oidc.issuer}/token`);
    expect(await byTestId(page, 'custom-oauth-field-user_info_endpoint').inputValue()).toBe(`${oidc.issuer}/userinfo`);
    await byTestId(page, 'custom-oauth-field-name').fill('Acme SSO');
    await byTestId(page, 'custom-oauth-field-slug').fill('sso');
    await byTestId(page, 'custom-oauth-field-client_id').fill('sso-client');
    await byTestId(page, 'custom-oauth-field-client_secret').fill(SECRET);
    await screenshot(page, 'custom-oauth-form');
    await byTestId(page, 'custom-oauth-save').click();
    await dialog.waitFor({ state: 'detached' });
    await byTestId(page, 'custom-oauth-row-sso').waitFor();
    await screenshot(page, 'custom-oauth-list');
    expect(await page.content()).not.toContain(SECRET);
    expect(errors).toEqual([]);

    const visitor = await openPage(browser, server.url);
    oidc.signIn({ sub: 'sso-user-1', preferred_username: 'ssoalice', name: 'Alice SSO', email: 'alice@sso.test' });
    await visitor.page.goto('/login');
    await screenshot(visitor.page, 'custom-oauth-login');
    await byTestId(visitor.page, 'login-custom-sso').click();
    await visitor.page.waitForURL('**/token');
    const user = JSON.parse((await localItem(visitor.page, 'user')) ?? '{}');
    expect(user).toMatchObject({ username: 'ssoalice', display_name: 'Alice SSO' });
    expect(visitor.errors).toEqual([]);
  });

  it('an existing user binds the provider on the personal page', async () => {
    const created = await root.post('/api/user/', { username: 'bob', password: 'bob-password-1' });
    expect(created.body.success).toBe(true);
    const listed = await root.get('/api/custom-oauth-provider/');
    const expectedProviderId = () => listed.body.data.find((p: { slug: string }) => p.slug === 'sso').id as number;
    const { page, errors } = await openPage(browser, server.url);
    await signInByApi(page, server.url, { username: 'bob', password: 'bob-password-1' });
    await page.goto('/personal');
    const row = byTestId(page, 'binding-custom-sso');
    await row.waitFor();
    oidc.signIn({ sub: 'sso-user-2', preferred_username: 'ssobob', name: 'Bob SSO' });
    await byTestId(page, 'bind-custom-sso').click();
    await page.waitForURL('**/personal');
    await expect.poll(() => row.textContent()).toContain('sso-user-2');
    await screenshot(page, 'custom-oauth-bound');
    expect(await byTestId(page, 'unbind-custom-sso').isVisible()).toBe(true);
    expect(await byTestId(page, 'bind-custom-sso').isDisabled()).toBe(true);

    const bound = await server.gateway.store.db
      .selectFrom('user_oauth_bindings')
      .innerJoin('users', 'users.id', 'user_oauth_bindings.user_id')
      .select(['users.username', 'user_oauth_bindings.provider_user_id'])
      .where('user_oauth_bindings.provider_user_id', '=', 'sso-user-2')
      .execute();
    expect(bound).toEqual([{ username: 'bob', provider_user_id: 'sso-user-2' }]);

    // The administrator sees the binding in the user editor, and removes it there (bob has a password).
    const admin = await openPage(browser, server.url);
    await signInByApi(admin.page, server.url, { username: 'root', password: ROOT_PASSWORD });
    await admin.page.goto(`/user/edit/${created.body.data.id}`);
    const providerId = expectedProviderId();
    const field = byTestId(admin.page, `user-binding-custom-${providerId}`);
    await expect.poll(() => field.inputValue().catch(() => '')).toBe('sso-user-2');
    await screenshot(admin.page, 'custom-oauth-user-editor');
    await byTestId(admin.page, `user-unbind-custom-${providerId}`).click();
    await field.waitFor({ state: 'detached' });
    expect(admin.errors).toEqual([]);

    await page.reload();
    await row.waitFor();
    await expect.poll(() => row.textContent()).not.toContain('sso-user-2');
    expect(await byTestId(page, 'bind-custom-sso').isDisabled()).toBe(false);
    expect(errors).toEqual([]);
  });
});
