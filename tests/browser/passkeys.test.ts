import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, setupRoot } from '../support/client.ts';
import {
  type ConsoleGateway,
  launchBrowser,
  localItem,
  openPage,
  screenshot,
  signInThroughUi,
  startConsoleGateway,
} from './support.ts';

// Passkeys in a real browser against a real gateway (issue 19): Chromium's virtual authenticator (DevTools
// protocol) holds the passkey. A user registers it on the personal page, signs out, signs in with it (no
// password typed), verifies with it before copying a key; an administrator resets it in the user list, and it
// no longer signs in.

const PASSWORD = 'dora-password-1';
let server: ConsoleGateway;
let browser: Browser;
let root: DashboardClient;
/** localhost, not 127.0.0.1: an IP address cannot be a WebAuthn RP id; http://localhost is a secure context. */
let baseURL: string;

beforeAll(async () => {
  server = await startConsoleGateway();
  baseURL = server.url.replace('127.0.0.1', 'localhost');
  root = await setupRoot(baseURL, 'root-password-1');
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const byTestId = (page: Page, id: string) => page.locator(`[data-testid="${id}"]`);

async function signOut(page: Page) {
  await byTestId(page, 'account-menu').click();
  await byTestId(page, 'logout').click();
  await page.waitForURL('**/login');
}

describe('passkeys in the console', () => {
  it('an administrator switches passkey sign-in on in the system settings', async () => {
    const { page, errors } = await openPage(browser, baseURL);
    await page.goto('/login');
    expect(await byTestId(page, 'login-passkey').count()).toBe(0);
    await signInThroughUi(page, { username: 'root', password: 'root-password-1' });
    await page.goto('/setting?tab=system');
    const section = page.locator('[data-section="passkey"]');
    await section.locator('[data-option="passkey.enabled"]').check();
    await section.getByText('优先').first().waitFor();
    await screenshot(page, 'passkey-settings');
    await byTestId(page, 'save-passkey').click();
    await page.getByText('保存成功').first().waitFor();
    expect((await root.get('/api/status')).body.data.passkey_login).toBe(true);
    expect(errors).toEqual([]);
  });

  it('registers a passkey, signs in with it alone, and no longer after an administrator resets it', async () => {
    const signUp = await new DashboardClient(baseURL).post('/api/user/register', {
      username: 'dora',
      password: PASSWORD,
    });
    expect(signUp.body).toMatchObject({ success: true });
    const { page, errors } = await openPage(browser, baseURL);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
      },
    });

    await signInThroughUi(page, { username: 'dora', password: PASSWORD });
    await page.goto('/personal');
    await byTestId(page, 'passkey-register').click();
    await byTestId(page, 'passkey-remove').waitFor();
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]).toMatchObject({ isResidentCredential: true, rpId: 'localhost' });
    await screenshot(page, 'passkey-registered');

    // Sign in with the passkey alone: the login page asks the authenticator, no password is typed.
    await signOut(page);
    await byTestId(page, 'login-passkey').click();
    await page.waitForURL('**/token');
    expect(JSON.parse((await localItem(page, 'user')) ?? '{}')).toMatchObject({ username: 'dora' });
    await page.goto('/personal');
    await expect.poll(() => byTestId(page, 'passkey-state').textContent()).toMatch(/上次使用/);

    // Copying a key needs a fresh verification: the console offers the passkey (the user has no code).
    const key = (await page.evaluate(`(async () => {
      const user = JSON.parse(localStorage.getItem('user'));
      const response = await fetch('/api/token/', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'new-api-user': String(user.id) },
        body: JSON.stringify({ name: 'passkey-key' }),
      });
      return (await response.json()).data.key;
    })()`)) as string;
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
    await page.goto('/token');
    await byTestId(page, 'token-copy-key').first().click();
    const prompt = byTestId(page, 'step-up-dialog');
    await prompt.locator('[data-testid="step-up-passkey"]').waitFor();
    expect(await prompt.locator('input[name="step_up_code"]').count()).toBe(0);
    await screenshot(page, 'passkey-step-up');
    await prompt.locator('[data-testid="step-up-passkey"]').click();
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(`sk-${key}`);

    // The administrator resets it in the user list.
    await signOut(page);
    await signInThroughUi(page, { username: 'root', password: 'root-password-1' });
    await page.goto('/user');
    const row = page.locator('tr', { hasText: 'dora' });
    await row.locator('[data-testid="user-security-menu"]').click();
    await page.locator('[data-testid="user-reset-passkey"]').click();
    await page
      .getByRole('dialog')
      .getByRole('button', { name: /确认|确定|Confirm/ })
      .click();
    await page.getByText('Passkey 已重置').first().waitFor();
    await signOut(page);

    // The authenticator still holds it, but the gateway no longer knows it.
    await byTestId(page, 'login-passkey').click();
    await page.getByText('未找到 Passkey 凭证').first().waitFor();
    expect(new URL(page.url()).pathname).toBe('/login');
    await screenshot(page, 'passkey-after-reset');
    expect(errors).toEqual([]);
  });
});
