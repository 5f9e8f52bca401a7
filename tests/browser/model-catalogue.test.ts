import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, setupRoot } from '../support/client.ts';
import {
  type ConsoleGateway,
  launchBrowser,
  openPage,
  screenshot,
  signInByApi,
  startConsoleGateway,
} from './support.ts';

// The administrators' Models page (issue 19): a vendor and a model entry created through the UI, a served
// model without metadata created from the missing-models dialog, and an entry created by an upstream sync
// (a local catalogue server), then one deleted after a confirmation.

let server: ConsoleGateway;
let browser: Browser;
let catalogue: Server;
let context: BrowserContext;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  catalogue = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        vendors: [{ name: 'Upstream Labs', description: 'synced vendor' }],
        models: [{ model_name: 'browser-synced', description: 'described upstream', vendor_name: 'Upstream Labs' }],
      }),
    );
  });
  await new Promise<void>((resolve) => catalogue.listen(0, '127.0.0.1', resolve));
  [server, browser] = await Promise.all([startConsoleGateway(), launchBrowser()]);
  const root = await setupRoot(server.url, 'root-password-1');
  const created = await root.post('/api/channel/', {
    name: 'catalogue-channel',
    type: 1,
    key: 'sk-browser',
    base_url: 'http://127.0.0.1:9',
    models: 'browser-served,browser-synced',
    group: 'default',
  });
  expect(created.body.success).toBe(true);
  await server.gateway.options.setMany({
    ModelCatalogueUpstreamURL: `http://127.0.0.1:${(catalogue.address() as AddressInfo).port}/catalogue.json`,
    'fetch_setting.enable_ssrf_protection': 'false',
  });
  ({ context, page } = await openPage(browser, server.url));
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      errors.push(message.text());
  });
  await signInByApi(page, server.url, { username: 'root', password: 'root-password-1' });
});
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  await new Promise((resolve) => catalogue?.close(resolve));
});

const modelRow = (name: string) => page.locator(`[data-testid="model-row-${name}"]`);

describe('Models page', { timeout: 90_000 }, () => {
  it('creates a vendor and a model entry, fills a missing model, syncs from upstream and deletes', async () => {
    await page.goto('/models');
    await page.locator('[data-testid="models-page"]').waitFor();

    await page.locator('[data-testid="tab-vendors"]').click();
    await page.locator('[data-testid="add-vendor"]').click();
    await page.locator('[data-testid="vendor-name"]').fill('Browser Vendor');
    await page.locator('[data-testid="vendor-save"]').click();
    await page.locator('[data-testid="vendor-row-Browser Vendor"]').waitFor();

    await page.locator('[data-testid="tab-models"]').click();
    await page.locator('[data-testid="add-model"]').click();
    await page.locator('[data-testid="model-name"]').fill('manual-model');
    await page.locator('[data-testid="model-description"]').fill('typed in the browser');
    await page.locator('[data-testid="model-tags"]').fill('chat,fast');
    await page.locator('[data-testid="model-vendor"]').click();
    await page.getByRole('option', { name: 'Browser Vendor' }).click();
    await page.locator('[data-testid="model-save"]').click();
    await modelRow('manual-model').getByText('Browser Vendor').waitFor();
    await modelRow('manual-model').getByText('typed in the browser').waitFor();

    await page.locator('[data-testid="open-missing"]').click();
    const missing = page.locator('[data-testid="missing-dialog"]');
    await missing.locator('[data-testid="missing-browser-served"]').waitFor();
    await missing.locator('[data-testid="missing-create-browser-served"]').click();
    await expect.poll(() => page.locator('[data-testid="model-name"]').inputValue()).toBe('browser-served');
    await page.locator('[data-testid="model-save"]').click();
    await modelRow('browser-served').waitFor();

    await page.locator('[data-testid="open-sync"]').click();
    const sync = page.locator('[data-testid="sync-dialog"]');
    await sync.locator('[data-testid="sync-create-browser-synced"]').check();
    await sync.locator('[data-testid="sync-apply"]').click();
    await modelRow('browser-synced').getByText('described upstream').waitFor();
    await modelRow('browser-synced').getByText('Upstream Labs').waitFor();
    await screenshot(page, 'model-catalogue');

    await page.locator('[data-testid="delete-model-manual-model"]').click();
    await page.locator('[data-testid="confirm-ok"]').click();
    await expect.poll(() => modelRow('manual-model').count()).toBe(0);

    const stored = await server.gateway.store.db
      .selectFrom('models')
      .select('model_name')
      .orderBy('model_name')
      .execute();
    expect(stored.map((m) => m.model_name)).toEqual(['browser-served', 'browser-synced']);

    // The pricing page shows the entry's vendor and description under the model's chip.
    await page.goto('/pricing');
    const priced = page.locator('[data-testid="pricing-row"][data-model="browser-synced"]');
    await priced.locator('[data-testid="pricing-model-metadata"]').getByText('Upstream Labs').waitFor();
    await priced.getByText('described upstream').waitFor();
    expect(
      await page
        .locator('[data-testid="pricing-row"][data-model="browser-served"] [data-testid="pricing-model-metadata"]')
        .count(),
    ).toBe(0);
    expect(errors).toEqual([]);
  });

  it('denies the page to a normal user, who calls none of its routes', async () => {
    const registered = await new DashboardClient(server.url).post('/api/user/register', {
      username: 'modeluser',
      password: 'model-password',
      password2: 'model-password',
    });
    expect(registered.body).toMatchObject({ success: true });
    const user = await openPage(browser, server.url);
    const calls: string[] = [];
    user.page.on('request', (request) => {
      if (/\/api\/(models|vendors)\//.test(request.url())) calls.push(request.url());
    });
    await signInByApi(user.page, server.url, { username: 'modeluser', password: 'model-password' });
    await user.page.goto('/models');
    await user.page
      .getByText(/拒绝访问|Access denied/)
      .first()
      .waitFor();
    expect(await user.page.locator('[data-testid="models-page"]').count()).toBe(0);
    expect(calls).toEqual([]);
    expect(user.errors).toEqual([]);
    await user.context.close();
  });

  it('shows a catalogue fetch failure in the sync dialog', async () => {
    await server.gateway.options.set('ModelCatalogueUpstreamURL', 'http://127.0.0.1:9/nothing.json');
    await page.goto('/models');
    await page.locator('[data-testid="open-sync"]').click();
    const failure = page.locator('[data-testid="sync-error"]');
    await failure.waitFor();
    // In the console's language: the code's message, with the reason.
    expect(await failure.textContent()).toMatch(/upstream catalogue failed|获取上游模型目录失败/);
    expect(await page.locator('[data-testid="sync-apply"]').isDisabled()).toBe(true);
  });
});
