import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient } from '../support/client.ts';
import {
  type ConsoleGateway,
  type Credentials,
  launchBrowser,
  localItem,
  openPage,
  screenshot,
  signInByApi,
  signInThroughUi,
  startConsoleGateway,
} from './support.ts';

// The console's shell in a real browser (spec doc 1 §2): setup redirect, setup and sign-in through the UI,
// the side menu per role and status flags, language and theme remembered, logout, not-found, expiry.

const ROOT = { username: 'root', password: 'root-password-1' };
const ALICE = { username: 'alice', password: 'alice-password' };

let server: ConsoleGateway;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([startConsoleGateway(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function newPage(options?: Parameters<typeof openPage>[2]) {
  const opened = await openPage(browser, server.url, options);
  contexts.push(opened.context);
  return opened;
}

const sideMenu = (page: Page) => page.locator('[data-testid="side-menu"]');

/** Signs in through the login page, which leads to /token (with the side menu, except on a phone). */
async function signIn(page: Page, user: Credentials, withMenu = true) {
  await signInThroughUi(page, user);
  if (withMenu) await sideMenu(page).waitFor();
}

async function rootClient(): Promise<DashboardClient> {
  const client = new DashboardClient(server.url);
  const answer = await client.login(ROOT.username, ROOT.password);
  if (!answer.body?.success) throw new Error(`root login failed: ${JSON.stringify(answer.body)}`);
  return client;
}

describe('console shell', { timeout: 60_000 }, () => {
  let rootPage: Page;

  it('sends every path of a fresh gateway to /setup', async () => {
    const { page, errors } = await newPage();
    await page.goto('/');
    await page.waitForURL('**/setup');
    await page.goto('/token');
    await page.waitForURL('**/setup');
    await page.locator('[data-testid="setup-page"]').waitFor();
    // The embedded database (or Postgres) is reported; the title is in Chinese, the default language.
    await page.getByText('系统初始化', { exact: true }).first().waitFor();
    await screenshot(page, 'shell-01-setup');
    expect(errors).toEqual([]);
  });

  it('completes setup through the UI, with the setup validation messages', async () => {
    const { page, errors } = await newPage();
    await page.goto('/setup');
    const form = page.locator('[data-testid="setup-page"]');
    await form.locator('input[name="password"]').fill('short');
    await form.locator('input[name="confirmPassword"]').fill('other');
    await form.locator('button[type="submit"]').click();
    await page.getByText('请输入管理员用户名').waitFor();
    await page.getByText('密码长度至少为 8 个字符').waitFor();
    await page.getByText('两次输入的密码不一致').waitFor();
    await screenshot(page, 'shell-02-setup-validation');

    await form.locator('input[name="username"]').fill(ROOT.username);
    await form.locator('input[name="password"]').fill(ROOT.password);
    await form.locator('input[name="confirmPassword"]').fill(ROOT.password);
    await form.locator('button[type="submit"]').click();
    await page.getByText('系统初始化成功，正在跳转…').waitFor();
    // The page reloads after 1.5 s; setup done, /setup goes to /.
    await page.waitForURL((url) => url.pathname === '/', { timeout: 10_000 });
    await page.locator('[data-testid="top-bar"]').waitFor();
    expect(await page.locator('[data-testid="side-menu"]').count()).toBe(0);
    await page.goto('/setup');
    await page.waitForURL((url) => url.pathname === '/');
    await screenshot(page, 'shell-03-home-after-setup');
    expect(errors).toEqual([]);
  });

  it('sends a visitor from a protected page to /login', async () => {
    const { page } = await newPage();
    await page.goto('/channel');
    await page.waitForURL('**/login');
    await page.locator('[data-testid="login-page"]').waitFor();
    await page.locator('[data-testid="register-link"]').waitFor();
  });

  it('signs root in and shows the administrators section', async () => {
    const { page, errors } = await newPage();
    rootPage = page;
    await signIn(page, ROOT);
    await page.getByText('登录成功').waitFor();
    const admin = sideMenu(page).locator('[data-section="admin"]');
    await admin.waitFor();
    for (const label of ['渠道', '兑换码', '用户管理', '系统设置']) {
      await admin.getByText(label, { exact: true }).waitFor();
    }
    for (const label of ['操练场', 'API 令牌', '使用日志', '数据看板', '绘图日志', '任务日志', '钱包', '个人设置']) {
      await sideMenu(page).getByText(label, { exact: true }).waitFor();
    }
    expect(JSON.parse((await localItem(page, 'user')) ?? '{}')).toMatchObject({ username: 'root', role: 100 });
    await page.locator('[data-testid="account-menu"]').getByText('root').waitFor();
    await page
      .locator('[data-testid="footer"]')
      .getByText(/Tollgate/)
      .waitFor();
    await screenshot(page, 'shell-04-root-menu');
    expect(errors).toEqual([]);
  });

  it('shows a normal user no administrators section', async () => {
    const registered = await new DashboardClient(server.url).post('/api/user/register', {
      username: ALICE.username,
      password: ALICE.password,
      password2: ALICE.password,
    });
    expect(registered.body).toMatchObject({ success: true });
    const { page, errors } = await newPage();
    await signIn(page, ALICE);
    await sideMenu(page).getByText('API 令牌', { exact: true }).waitFor();
    expect(await sideMenu(page).locator('[data-section="admin"]').count()).toBe(0);
    expect(await sideMenu(page).getByText('渠道', { exact: true }).count()).toBe(0);
    // An administrators' page by its address: access denied, not the page.
    await page.goto('/setting');
    await page.getByText('拒绝访问').first().waitFor();
    await screenshot(page, 'shell-05-user-menu');
    expect(errors).toEqual([]);
  });

  it('hides side menu entries by the status flags and shows the custom footer', async () => {
    const root = await rootClient();
    for (const [key, value] of [
      ['DrawingEnabled', 'false'],
      ['TaskEnabled', 'false'],
      ['DataExportEnabled', 'false'],
      ['Footer', '<b data-testid="custom-footer">Custom footer</b>'],
      ['Chats', JSON.stringify([{ 'Next Chat': 'https://chat.example/#/?key={key}' }])],
    ]) {
      expect((await root.put('/api/option/', { key, value })).body, key!).toMatchObject({ success: true });
    }
    const page = rootPage;
    await page.reload();
    await sideMenu(page).getByText('API 令牌', { exact: true }).waitFor();
    for (const hidden of ['数据看板', '绘图日志', '任务日志']) {
      expect(await sideMenu(page).getByText(hidden, { exact: true }).count(), hidden).toBe(0);
    }
    await sideMenu(page).locator('[data-section="chat"]').getByText('Next Chat').waitFor();
    expect(await sideMenu(page).locator('a[href="/chat/0"]').count()).toBe(1);
    await page.locator('[data-testid="custom-footer"]').waitFor();
    await screenshot(page, 'shell-06-flags-and-footer');

    for (const [key, value] of [
      ['DrawingEnabled', 'true'],
      ['TaskEnabled', 'true'],
      ['DataExportEnabled', 'true'],
      ['Footer', ''],
      ['Chats', '[]'],
      ['DefaultCollapseSidebar', 'true'],
      ['SelfUseModeEnabled', 'true'],
    ]) {
      expect((await root.put('/api/option/', { key, value })).body, key!).toMatchObject({ success: true });
    }
    await page.reload();
    await page.locator('[data-testid="mode-badge"]').getByText('自用模式').waitFor();
    // Collapsed by default: the menu shows icons without the section titles.
    await sideMenu(page).waitFor();
    expect(await sideMenu(page).getByText('管理员', { exact: true }).count()).toBe(0);
    await screenshot(page, 'shell-07-collapsed-self-use');
    for (const [key, value] of [
      ['DefaultCollapseSidebar', 'false'],
      ['SelfUseModeEnabled', 'false'],
    ]) {
      expect((await root.put('/api/option/', { key, value })).body, key!).toMatchObject({ success: true });
    }
    await page.reload();
    await sideMenu(page).getByText('管理员', { exact: true }).waitFor();
  });

  it('switches the language from zh to en and remembers it after a reload', async () => {
    const page = rootPage;
    await page.goto('/token');
    await sideMenu(page).getByText('API 令牌', { exact: true }).waitFor();
    await page.locator('[data-testid="language-menu"]').click();
    await page.locator('[data-locale="en"]').click();
    await sideMenu(page).getByText('API tokens', { exact: true }).waitFor();
    await page.locator('[data-testid="top-bar"]').getByText('Home', { exact: true }).waitFor();
    expect(await localItem(page, 'i18nextLng')).toBe('en');
    expect(await page.evaluate('document.documentElement.lang')).toBe('en');
    await page.reload();
    await sideMenu(page).getByText('Channels', { exact: true }).waitFor();
    await page.locator('[data-testid="top-bar"]').getByText('Pricing', { exact: true }).waitFor();
    await screenshot(page, 'shell-08-english');
  });

  it('switches to dark mode and remembers it after a reload', async () => {
    const page = rootPage;
    const background = () =>
      page.evaluate('getComputedStyle(document.querySelector(".RaLayout-content")).backgroundColor');
    const light = await background();
    await page.locator('[data-testid="theme-switch"]').click();
    await page.waitForFunction(`localStorage.getItem('theme-mode') === 'dark'`);
    const dark = await background();
    expect(dark).not.toBe(light);
    await page.reload();
    await sideMenu(page).waitFor();
    expect(await background()).toBe(dark);
    await screenshot(page, 'shell-09-dark');
  });

  it('logs out from the avatar menu, keeping language and theme', async () => {
    const page = rootPage;
    await page.locator('[data-testid="account-menu"]').click();
    await page.locator('[data-testid="logout"]').click();
    await page.waitForURL('**/login');
    await page.getByText('Logout successful').waitFor();
    expect(await localItem(page, 'user')).toBeNull();
    expect(await localItem(page, 'theme-mode')).toBe('dark');
    expect(await localItem(page, 'i18nextLng')).toBe('en');
    await page.locator('[data-testid="login-link"]').waitFor();
    await screenshot(page, 'shell-10-logged-out');
    await page.goto('/token');
    await page.waitForURL('**/login');
  });

  it('shows the not-found page for an unknown route', async () => {
    const { page, errors } = await newPage();
    await page.goto('/no/such/page');
    await page.locator('[data-testid="not-found"]').getByText('页面不存在，请检查你的浏览器地址是否正确').waitFor();
    await screenshot(page, 'shell-11-not-found');
    expect(errors).toEqual([]);
  });

  it('sends the browser to /login?expired=true when the session is gone', async () => {
    const { page, context } = await newPage();
    await signInByApi(page, server.url, ALICE);
    await page.goto('/token');
    await sideMenu(page).waitFor();
    await context.clearCookies();
    await page.reload();
    await page.waitForURL('**/login?expired=true');
    await page.locator('[data-testid="login-expired"]').getByText('未登录或登录已过期，请重新登录').waitFor();
    expect(await localItem(page, 'user')).toBeNull();
    await screenshot(page, 'shell-12-expired');
  });

  it('says so when the status cannot be loaded, and still shows the shell', async () => {
    const { page, errors } = await newPage();
    await page.route('**/api/status', (route) => route.abort());
    await page.goto('/login');
    await page.getByText('加载状态失败').waitFor();
    await page.locator('[data-testid="login-page"]').waitFor();
    await screenshot(page, 'shell-14-status-failed');
    expect(errors).toEqual([]);
  });

  it('hides the side menu on the home page and on a phone', async () => {
    const { page } = await newPage({ viewport: { width: 390, height: 844 } });
    await signIn(page, ALICE, false);
    await page.waitForURL('**/token');
    await page.locator('[data-testid="top-bar"]').waitFor();
    expect(await sideMenu(page).count()).toBe(0);
    await screenshot(page, 'shell-13-mobile');
    const desktop = await newPage();
    await signIn(desktop.page, ALICE);
    await desktop.page.goto('/');
    await desktop.page.locator('[data-testid="top-bar"]').waitFor();
    expect(await sideMenu(desktop.page).count()).toBe(0);
  });
});
