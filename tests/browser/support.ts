import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SCREENSHOTS = path.join(root, 'tests', '.artifacts', 'screenshots');

/** Debian's chromium (apt-get install chromium); playwright's own browser downloads do not work here. */
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

export interface ConsoleGateway {
  gateway: Gateway;
  url: string;
  stop(): Promise<void>;
}

/** A gateway in this process on a fresh, empty database, serving the built console (see build-console.ts). */
export async function startConsoleGateway(env: Record<string, string> = {}): Promise<ConsoleGateway> {
  const database = await createTestDatabase();
  const gateway = await startTestGateway(gatewayEnv(database.options, testNamespace(), env));
  return {
    gateway,
    url: gateway.url,
    async stop() {
      await gateway.stop();
      await database.drop();
    },
  };
}

export interface PageOptions {
  /** Desktop by default; pass a phone's width for the mobile layout. */
  viewport?: { width: number; height: number };
}

/**
 * A fresh browser context (its own cookies and local storage) and page on the gateway. Page errors fail
 * loudly: they are collected in `errors` for the test to assert on.
 */
export async function openPage(
  browser: Browser,
  baseURL: string,
  options: PageOptions = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ baseURL, viewport: options.viewport ?? { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  return { context, page, errors };
}

/** Saves a screenshot as tests/.artifacts/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** A local storage item of the page's origin. */
export function localItem(page: Page, key: string): Promise<string | null> {
  return page.evaluate(`localStorage.getItem(${JSON.stringify(key)})`) as Promise<string | null>;
}

export interface Credentials {
  username: string;
  password: string;
}

/** Signs in through the login page, which leads to /token. */
export async function signInThroughUi(page: Page, user: Credentials): Promise<void> {
  await page.goto('/login');
  await page.locator('input[name="username"]').fill(user.username);
  await page.locator('input[name="password"]').fill(user.password);
  await page.locator('[data-testid="login-page"] button[type="submit"]').click();
  await page.waitForURL('**/token');
}

/**
 * Signs in without the login page, for tests about other pages: the session cookie from POST /api/user/login
 * goes into the browser context and the user into local storage, as the login page would leave them.
 */
export async function signInByApi(page: Page, baseURL: string, user: Credentials): Promise<void> {
  const client = new DashboardClient(baseURL);
  const answer = await client.login(user.username, user.password);
  if (!answer.body?.success) throw new Error(`signing in ${user.username} failed: ${JSON.stringify(answer.body)}`);
  const [name, value] = client.cookie.split('=') as [string, string];
  await page.context().addCookies([{ name, value, url: baseURL }]);
  await page.goto('/login');
  await page.evaluate(`localStorage.setItem('user', ${JSON.stringify(JSON.stringify(answer.body.data))})`);
}
