import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { Gateway } from '../../gateway/src/gateway.ts';
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

/** Calls the gateway's /api as a plain client (no session): for set-up steps a test does not click through. */
export async function callApi(
  baseURL: string,
  method: string,
  apiPath: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; cookie: string }> {
  const response = await fetch(`${baseURL}${apiPath}`, {
    method,
    headers: { 'content-type': 'application/json', 'accept-language': 'en', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const cookie =
    response.headers
      .getSetCookie()
      .find((c) => c.startsWith('session='))
      ?.split(';')[0] ?? '';
  return { status: response.status, body: await response.json(), cookie };
}
