import type { Browser, Page, Request, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, setupRoot } from '../support/client.ts';
import {
  type ConsoleGateway,
  type Credentials,
  launchBrowser,
  openPage,
  screenshot,
  signInByApi,
  startConsoleGateway,
} from './support.ts';

// Every page of the console, reached as a user reaches it (the links of the side menu and the top bar,
// whatever they are today), for a user and for an administrator (issue 19: "our console shows no error
// toast on any page"): no error notification shows, no /api call the page makes is refused (HTTP ≥ 400
// or success:false, which is what an error toast would say), and no script error.

const ROOT: Credentials = { username: 'root', password: 'root-password-1' };
const ALICE: Credentials = { username: 'alice', password: 'alice-password' };
/** How long the page must make no /api call before it counts as loaded. */
const QUIET_MS = 400;

let server: ConsoleGateway;
let browser: Browser;

beforeAll(async () => {
  const limits = { GLOBAL_API_RATE_LIMIT_ENABLE: 'false', CRITICAL_RATE_LIMIT_ENABLE: 'false' };
  [server, browser] = await Promise.all([startConsoleGateway(limits), launchBrowser()]);
  const root = await setupRoot(server.url, ROOT.password);
  const channel = await root.post('/api/channel/', {
    name: 'openai',
    type: 1,
    key: 'sk-upstream',
    base_url: 'http://127.0.0.1:9',
    models: 'gpt-4o-mini',
    group: 'default',
  });
  expect(channel.body).toMatchObject({ success: true });
  // Pages behind switches show too: the dashboard, drawing and task logs, a chat client.
  for (const [key, value] of [
    ['DataExportEnabled', 'true'],
    ['DrawingEnabled', 'true'],
    ['TaskEnabled', 'true'],
    ['Chats', JSON.stringify([{ Chat: `${server.url}/logo.svg?key={key}` }])],
  ]) {
    expect((await root.put('/api/option/', { key, value })).body, key).toMatchObject({ success: true });
  }
  // The chat page needs an enabled token (without one it says so, as it should, with an error toast).
  expect((await root.post('/api/token/', { name: 'chat', unlimited_quota: true })).body).toMatchObject({
    success: true,
  });
  const registered = await new DashboardClient(server.url).post('/api/user/register', {
    ...ALICE,
    password2: ALICE.password,
  });
  expect(registered.body).toMatchObject({ success: true });
  const alice = new DashboardClient(server.url);
  expect((await alice.login(ALICE.username, ALICE.password)).body).toMatchObject({ success: true });
  expect((await alice.post('/api/token/', { name: 'chat', unlimited_quota: true })).body).toMatchObject({
    success: true,
  });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Records every refused /api call and script error of the page from now on, and the calls in flight. */
function watch(page: Page) {
  const refused: string[] = [];
  const errors: string[] = [];
  const inFlight = new Set<Request>();
  let lastActivity = Date.now();
  const isApi = (url: string) => new URL(url).pathname.startsWith('/api/');
  page.on('request', (request) => {
    if (!isApi(request.url())) return;
    inFlight.add(request);
    lastActivity = Date.now();
  });
  // Every request ends in exactly one of these two.
  const ended = (request: Request) => {
    inFlight.delete(request);
    lastActivity = Date.now();
  };
  page.on('requestfinished', ended);
  page.on('requestfailed', ended);
  page.on('response', async (response: Response) => {
    if (!isApi(response.url())) return;
    const where = `${page.url()} → ${response.request().method()} ${new URL(response.url()).pathname}`;
    if (response.status() >= 400) refused.push(`${where}: HTTP ${response.status()}`);
    if (!(response.headers()['content-type'] ?? '').includes('application/json')) return;
    const body = (await response.json().catch(() => undefined)) as { success?: boolean; message?: string } | undefined;
    if (body?.success === false) refused.push(`${where}: ${body.message}`);
  });
  page.on('pageerror', (error) => errors.push(`${page.url()}: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${page.url()}: ${message.text()}`);
  });
  /** Resolves once the page has made no /api call for a while (counted from now at the earliest). */
  const quiet = async () => {
    lastActivity = Math.max(lastActivity, Date.now());
    await expect
      .poll(() => (inFlight.size === 0 && Date.now() - lastActivity >= QUIET_MS) || [...inFlight].map((r) => r.url()), {
        timeout: 15_000,
        interval: 100,
      })
      .toBe(true);
  };
  return { refused, errors, quiet };
}

/** The in-console links a user can click: the side menu's entries and the top bar's. */
async function consoleLinks(page: Page): Promise<string[]> {
  await page.locator('[data-testid="side-menu"] a[href]').first().waitFor();
  const links = await page.locator('[data-testid="side-menu"] a[href], [data-testid="top-bar"] a[href]').all();
  const hrefs = await Promise.all(links.map((link) => link.getAttribute('href')));
  return [...new Set(hrefs.filter((href): href is string => href?.startsWith('/') ?? false))];
}

async function visitEveryPage(user: Credentials, name: string): Promise<string[]> {
  const { page } = await openPage(browser, server.url);
  await signInByApi(page, server.url, user);
  const { refused, errors, quiet } = watch(page);
  await page.goto('/token');
  const links = await consoleLinks(page);
  const toasts: string[] = [];
  const wide: string[] = [];
  for (const href of links) {
    // As a click on the link does it: the router's navigation, no reload. A page without the menus (the chat
    // frame) is left the way a user leaves it, with the browser's back button.
    const link = page.locator(`[data-testid="side-menu"] a[href="${href}"], [data-testid="top-bar"] a[href="${href}"]`);
    if ((await link.count()) === 0) await page.goBack();
    await link.first().click({ timeout: 5_000 });
    await page.waitForURL((url) => url.pathname + url.search === href || url.pathname === href);
    await quiet();
    // Nothing pushes the page wider than the window (a long unbroken text in a card would).
    const overflow = (await page.evaluate(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    )) as number;
    if (overflow > 0) {
      wide.push(`${href}: ${overflow} px wider than the window`);
      await screenshot(page, `no-error-toast-${name}-WIDE-${href.replaceAll('/', '_')}`);
    }
    const toast = page.locator('.RaNotification-error');
    if ((await toast.count()) > 0) {
      toasts.push(`${href}: ${await toast.first().textContent()}`);
      await screenshot(page, `no-error-toast-${name}-FAILED-${href.replaceAll('/', '_')}`);
    }
  }
  expect({ toasts, refused, errors, wide }).toEqual({ toasts: [], refused: [], errors: [], wide: [] });
  await page.context().close();
  return links;
}

describe('no error toast on any page of the console', () => {
  it('for a user, on every page the menus lead to', { timeout: 120_000 }, async () => {
    const links = await visitEveryPage(ALICE, 'user');
    // The user's own pages are among them, the administrators' are not.
    expect(links).toEqual(expect.arrayContaining(['/token', '/log', '/topup', '/personal', '/detail']));
    expect(links).not.toContain('/channel');
  });

  it('for an administrator, on every page the menus lead to', { timeout: 120_000 }, async () => {
    const links = await visitEveryPage(ROOT, 'admin');
    expect(links).toEqual(expect.arrayContaining(['/channel', '/user', '/setting', '/models', '/personal']));
  });
});
