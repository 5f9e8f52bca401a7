import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpAt } from '../../gateway/src/domain/accounts/two-factor/totp.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { type ConsoleGateway, launchBrowser, openPage, screenshot, startConsoleGateway } from './support.ts';

// Two-factor sign-in in a real browser against a real gateway (issue 19): a user signs up, enables TOTP on
// the personal page (the code computed from the secret the page shows), signs out, signs in with password
// and code, then with a backup code, which then no longer works; an administrator, with the option that
// requires two-factor sign-in for administrators, reaches no admin page until enabling it.

const PASSWORD = 'carol-password-1';
let server: ConsoleGateway;
let browser: Browser;
let root: DashboardClient;

beforeAll(async () => {
  server = await startConsoleGateway();
  root = await setupRoot(server.url, 'root-password-1');
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const byTestId = (page: Page, id: string) => page.locator(`[data-testid="${id}"]`);
/** The authenticator's code `steps` steps from now: each use must be of a later step than the last. */
const codeOf = (secret: string, steps: number) => totpAt(secret, Date.now() / 1000 + steps * 30);

// jsqr is CommonJS with its function on `default`.
const jsQR = (createRequire(import.meta.url)('jsqr') as { default: typeof import('jsqr').default }).default;

/** Reads the setup QR code off its canvas, as a phone's camera would. */
async function scannedQrCode(page: Page): Promise<string | undefined> {
  await byTestId(page, 'two-factor-qr').waitFor();
  const image = (await page.evaluate(`(() => {
    const canvas = document.querySelector('[data-testid="two-factor-qr"]');
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    return { width: pixels.width, height: pixels.height, data: Array.from(pixels.data) };
  })()`)) as { width: number; height: number; data: number[] };
  return jsQR(Uint8ClampedArray.from(image.data), image.width, image.height)?.data;
}

async function passwordStep(page: Page, username: string, password: string) {
  await page.goto('/login');
  const form = byTestId(page, 'login-page');
  await form.locator('input[name="username"]').fill(username);
  await form.locator('input[name="password"]').fill(password);
  await form.locator('button[type="submit"]').click();
}

async function signOut(page: Page) {
  await byTestId(page, 'account-menu').click();
  await byTestId(page, 'logout').click();
  await page.waitForURL('**/login');
}

describe('two-factor sign-in in the console', () => {
  it('signs up, enables TOTP, signs in with a code, then with a backup code that then no longer works', async () => {
    const { page, errors } = await openPage(browser, server.url);
    await page.goto('/register');
    const register = byTestId(page, 'register-page');
    await register.locator('input[name="username"]').fill('carol');
    await register.locator('input[name="password"]').fill(PASSWORD);
    await register.locator('input[name="password2"]').fill(PASSWORD);
    await register.locator('button[type="submit"]').click();
    await page.waitForURL('**/login');
    await passwordStep(page, 'carol', PASSWORD);
    await page.waitForURL('**/token');

    await page.goto('/personal');
    const card = byTestId(page, 'personal-two-factor');
    await byTestId(page, 'two-factor-setup').click();
    const secret = await byTestId(page, 'two-factor-secret').inputValue();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const link = await byTestId(page, 'two-factor-link').getAttribute('href');
    expect(link).toContain(`secret=${secret}`);
    // The QR code an authenticator app scans holds that same link.
    expect(await scannedQrCode(page)).toBe(link);
    const backupCodes = ((await byTestId(page, 'two-factor-backup-codes').locator('pre').textContent()) ?? '')
      .split('\n')
      .filter(Boolean);
    expect(backupCodes).toHaveLength(10);
    await screenshot(page, 'two-factor-setup');
    await card.locator('input[name="two_factor_code"]').fill(codeOf(secret, 0));
    await byTestId(page, 'two-factor-enable').click();
    await byTestId(page, 'two-factor-disable').waitFor();
    await expect.poll(() => byTestId(page, 'two-factor-state').textContent()).toMatch(/10/);

    // Password, then the code of the next step (the one just used cannot be used again).
    await signOut(page);
    await passwordStep(page, 'carol', PASSWORD);
    const second = byTestId(page, 'login-two-factor');
    await second.waitFor();
    await screenshot(page, 'two-factor-login');
    await second.locator('input[name="two_factor_code"]').fill(codeOf(secret, 1));
    await second.locator('button[type="submit"]').click();
    await page.waitForURL('**/token');

    // A backup code signs in once.
    await signOut(page);
    await passwordStep(page, 'carol', PASSWORD);
    await second.locator('input[name="two_factor_code"]').fill(backupCodes[0]!);
    await second.locator('button[type="submit"]').click();
    await page.waitForURL('**/token');

    // Copying a key needs a fresh verification: the console asks for a code (here a backup code) first.
    const key = (await page.evaluate(`(async () => {
      const user = JSON.parse(localStorage.getItem('user'));
      const response = await fetch('/api/token/', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'new-api-user': String(user.id) },
        body: JSON.stringify({ name: 'two-factor-key' }),
      });
      return (await response.json()).data.key;
    })()`)) as string;
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await page.reload();
    await byTestId(page, 'token-copy-key').first().click();
    const prompt = byTestId(page, 'step-up-dialog');
    await prompt.locator('input[name="step_up_code"]').fill(backupCodes[1]!);
    await screenshot(page, 'two-factor-step-up');
    await prompt.getByRole('button', { name: '验证' }).click();
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(`sk-${key}`);

    await signOut(page);
    await passwordStep(page, 'carol', PASSWORD);
    await second.locator('input[name="two_factor_code"]').fill(backupCodes[0]!);
    await second.locator('button[type="submit"]').click();
    await page.getByText('验证码或备用码错误，请重试').first().waitFor();
    expect(new URL(page.url()).pathname).toBe('/login');
    await screenshot(page, 'two-factor-used-backup-code');
    expect(errors).toEqual([]);
  });

  it('an administrator without two-factor sign-in reaches no admin page while the option requires it', async () => {
    // Root enables its own second factor first (the rule applies to root too), then turns the rule on.
    const setup = await root.post('/api/user/2fa/setup');
    const rootSecret = setup.body.data.secret as string;
    expect((await root.post('/api/user/2fa/enable', { code: codeOf(rootSecret, 0) })).body.success).toBe(true);
    expect((await root.put('/api/option/', { key: 'TwoFactorRequiredForAdmins', value: 'true' })).body.success).toBe(
      true,
    );
    const created = await root.post('/api/user/', { username: 'dana', password: PASSWORD, role: 10 });
    expect(created.body.success).toBe(true);

    const { page } = await openPage(browser, server.url);
    await passwordStep(page, 'dana', PASSWORD);
    await page.waitForURL('**/token');
    await page.goto('/channel');
    await page.getByText('管理员必须先启用两步验证').first().waitFor();
    await screenshot(page, 'two-factor-admin-required');
    await page.goto('/user');
    await page.getByText('管理员必须先启用两步验证').first().waitFor();

    // Enabling it on the personal page opens the admin pages.
    await page.goto('/personal');
    await byTestId(page, 'two-factor-setup').click();
    const secret = await byTestId(page, 'two-factor-secret').inputValue();
    await byTestId(page, 'personal-two-factor').locator('input[name="two_factor_code"]').fill(codeOf(secret, 0));
    await byTestId(page, 'two-factor-enable').click();
    await byTestId(page, 'two-factor-disable').waitFor();
    await page.goto('/user');
    await page.getByText('dana').first().waitFor();
    expect(await page.getByText('管理员必须先启用两步验证').count()).toBe(0);

    // The user list resets carol's two-factor sign-in (a lost phone): she signs in with the password alone.
    await page.locator('[data-user="carol"] [data-testid="user-security-menu"]').click();
    await page.locator('[data-testid="user-reset-2fa"]').click();
    await byTestId(page, 'confirm-ok').click();
    await page.getByText('用户2FA已被强制禁用').first().waitFor();
    const carol = new DashboardClient(server.url);
    expect((await carol.login('carol', PASSWORD)).body).toMatchObject({ success: true, data: { username: 'carol' } });
  });
});
