import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, setupRoot } from '../support/client.ts';
import {
  type ConsoleGateway,
  type Credentials,
  launchBrowser,
  screenshot,
  signInByApi,
  signInThroughUi,
  startConsoleGateway,
} from './support.ts';

// Sign-in sessions and bindings in a real browser: one account signed in from two browsers, the first signs
// the second out from the personal page (which then lands on the expired sign-in page), "sign out all
// others", unbinding from the personal page, and an administrator unbinding in the user editor.

const ROOT: Credentials = { username: 'root', password: 'root-password-1' };
const CAROL: Credentials = { username: 'carol', password: 'carol-password' };

let server: ConsoleGateway;
let browser: Browser;
let carolId: number;
const contexts: BrowserContext[] = [];

const byTestId = (page: Page, id: string) => page.locator(`[data-testid="${id}"]`);

/** A browser of its own (cookies, storage, user agent), collecting page errors. */
async function browserAs(agent: string): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({
    baseURL: server.url,
    userAgent: agent,
    viewport: { width: 1280, height: 800 },
  });
  contexts.push(context);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, errors };
}

const userRow = () =>
  server.gateway.store.db.selectFrom('users').selectAll().where('id', '=', carolId).executeTakeFirstOrThrow();
const setCarol = (changes: Record<string, string>) =>
  server.gateway.store.db.updateTable('users').set(changes).where('id', '=', carolId).execute();

beforeAll(async () => {
  const limits = { GLOBAL_API_RATE_LIMIT_ENABLE: 'false', CRITICAL_RATE_LIMIT_ENABLE: 'false' };
  [server, browser] = await Promise.all([startConsoleGateway(limits), launchBrowser()]);
  await setupRoot(server.url, ROOT.password);
  const registered = await new DashboardClient(server.url).post('/api/user/register', {
    username: CAROL.username,
    password: CAROL.password,
    password2: CAROL.password,
  });
  expect(registered.body).toMatchObject({ success: true });
  const carol = new DashboardClient(server.url);
  expect((await carol.login(CAROL.username, CAROL.password)).body).toMatchObject({ success: true });
  carolId = carol.userId!;
  // That sign-in is not one of the browsers below.
  expect((await carol.get('/api/user/logout')).body).toMatchObject({ success: true });
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => {});
  await browser?.close();
  await server?.stop();
});

describe('sessions card', () => {
  it('signs the other browser out, which lands on the expired sign-in page', async () => {
    const laptop = await browserAs('Laptop Browser/1.0');
    const phone = await browserAs('Phone Browser/2.0');
    await signInThroughUi(laptop.page, CAROL);
    await signInThroughUi(phone.page, CAROL);

    await laptop.page.goto('/personal');
    const rows = byTestId(laptop.page, 'session-row');
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(2);
    const current = laptop.page.locator('[data-testid="session-row"][data-current="true"]');
    await expect(current.textContent()).resolves.toContain('Laptop Browser/1.0');
    const other = laptop.page.locator('[data-testid="session-row"][data-current="false"]');
    await expect(other.textContent()).resolves.toContain('Phone Browser/2.0');
    await screenshot(laptop.page, 'personal-sessions');

    await other.locator('[data-testid="session-revoke"]').click();
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(1);

    await phone.page.goto('/personal');
    await phone.page.waitForURL('**/login?expired=true', { timeout: 20_000 });
    await byTestId(phone.page, 'login-expired').waitFor();
    expect(laptop.errors).toEqual([]);
    expect(phone.errors).toEqual([]);
  });

  it('"sign out all others" keeps only this browser', async () => {
    const desk = await browserAs('Desk Browser/3.0');
    const tablet = await browserAs('Tablet Browser/4.0');
    await signInThroughUi(desk.page, CAROL);
    await signInThroughUi(tablet.page, CAROL);
    await desk.page.goto('/personal');
    const rows = byTestId(desk.page, 'session-row');
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
    await byTestId(desk.page, 'sessions-revoke-others').click();
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(1);
    await expect(byTestId(desk.page, 'sessions-revoke-others').isDisabled()).resolves.toBe(true);
    await tablet.page.goto('/personal');
    await tablet.page.waitForURL('**/login?expired=true', { timeout: 20_000 });
    expect(desk.errors).toEqual([]);
  });
});

describe("a user's sessions in the user editor", () => {
  it('the administrator signs one out, then the user out everywhere', async () => {
    const first = await browserAs('First Browser/5.0');
    const second = await browserAs('Second Browser/6.0');
    await signInThroughUi(first.page, CAROL);
    await signInThroughUi(second.page, CAROL);
    const admin = await browserAs('Admin Browser/2.0');
    await signInByApi(admin.page, server.url, ROOT);
    await admin.page.goto(`/user/edit/${carolId}`);
    const rows = byTestId(admin.page, 'user-session-row');
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
    const before = await rows.count();
    await rows.filter({ hasText: 'Second Browser/6.0' }).locator('[data-testid="user-session-revoke"]').click();
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(before - 1);
    await second.page.goto('/personal');
    await second.page.waitForURL('**/login?expired=true', { timeout: 20_000 });
    await first.page.goto('/personal');
    await byTestId(first.page, 'personal-sessions').waitFor();

    await byTestId(admin.page, 'user-sessions-revoke-all').click();
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(0);
    await first.page.goto('/token');
    await first.page.waitForURL('**/login?expired=true', { timeout: 20_000 });
    expect(admin.errors).toEqual([]);
    expect(first.errors).toEqual([]);
  });
});

describe('bindings', () => {
  it('the user unbinds GitHub on the personal page', async () => {
    await setCarol({ github_id: '424242' });
    const me = await browserAs('Binding Browser/1.0');
    await signInByApi(me.page, server.url, CAROL);
    await me.page.goto('/personal');
    await byTestId(me.page, 'binding-github').getByText('424242').waitFor();
    await byTestId(me.page, 'unbind-github').click();
    await expect.poll(() => byTestId(me.page, 'unbind-github').count(), { timeout: 20_000 }).toBe(0);
    expect((await userRow()).github_id).toBe('');
    expect(me.errors).toEqual([]);
  });

  it('the last way to sign in stays, with the server saying why', async () => {
    await setCarol({ telegram_id: '777', password: '' });
    const admin = await browserAs('Admin Browser/1.0');
    await signInByApi(admin.page, server.url, ROOT);
    await admin.page.goto(`/user/edit/${carolId}`);
    const field = byTestId(admin.page, 'user-binding-telegram_id');
    await expect.poll(() => field.inputValue(), { timeout: 20_000 }).toBe('777');
    await byTestId(admin.page, 'user-unbind-telegram').click();
    await admin.page.getByText(/唯一的登录方式|only way to sign in/).waitFor({ timeout: 20_000 });
    expect((await userRow()).telegram_id).toBe('777');

    // With a second binding, the administrator may remove the first.
    await setCarol({ oidc_id: 'sub-carol' });
    await admin.page.reload();
    await expect
      .poll(() => byTestId(admin.page, 'user-binding-oidc_id').inputValue(), { timeout: 20_000 })
      .toBe('sub-carol');
    await byTestId(admin.page, 'user-unbind-telegram').click();
    await expect.poll(() => field.inputValue(), { timeout: 20_000 }).toBe('');
    expect((await userRow()).telegram_id).toBe('');
    expect((await userRow()).oidc_id).toBe('sub-carol');
    await screenshot(admin.page, 'user-edit-bindings');
    expect(admin.errors).toEqual([]);
  });
});
