import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { type MockUptimeKuma, startMockUptimeKuma } from '../support/mock-uptime-kuma.ts';
import {
  type ConsoleGateway,
  type Credentials,
  launchBrowser,
  openPage,
  screenshot,
  signInByApi,
  startConsoleGateway,
} from './support.ts';

// Issue 19 in a real browser: the administrator switches on the daily check-in and the Uptime Kuma panel in
// the settings, a user checks in on the dashboard and sees the service status, then picks Gotify for notices.

const ROOT: Credentials = { username: 'root', password: 'root-password-1' };
const BOB: Credentials = { username: 'bob', password: 'bob-password-1' };

let server: ConsoleGateway;
let browser: Browser;
let root: DashboardClient;
let bob: DashboardClient;
let kuma: MockUptimeKuma;
const contexts: BrowserContext[] = [];

async function newPage(user: Credentials): Promise<{ page: Page; errors: string[] }> {
  const opened = await openPage(browser, server.url);
  contexts.push(opened.context);
  await signInByApi(opened.page, server.url, user);
  return opened;
}

const option = async (key: string) =>
  ((await root.get('/api/option/')).body.data as Array<{ key: string; value: string }>).find((o) => o.key === key)
    ?.value;

beforeAll(async () => {
  const limits = { GLOBAL_API_RATE_LIMIT_ENABLE: 'false', CRITICAL_RATE_LIMIT_ENABLE: 'false' };
  [server, browser, kuma] = await Promise.all([startConsoleGateway(limits), launchBrowser(), startMockUptimeKuma()]);
  root = await setupRoot(server.url, ROOT.password);
  const registered = await new DashboardClient(server.url).post('/api/user/register', {
    username: BOB.username,
    password: BOB.password,
    password2: BOB.password,
  });
  expect(registered.body).toMatchObject({ success: true });
  bob = new DashboardClient(server.url);
  await bob.login(BOB.username, BOB.password);
  kuma.pages.set('core', {
    groups: [
      {
        name: 'Public',
        monitors: [
          { id: 1, name: 'Relay API', beats: [0, 1], uptime: 0.9987 },
          { id: 2, name: 'Console', beats: [1, 0], uptime: 0.75 },
        ],
      },
    ],
  });
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => {});
  await browser?.close();
  await server?.stop();
  await kuma?.close();
});

describe('check-in, service status and push notices in the console', () => {
  it('the administrator switches on check-in (quota section) and the Uptime Kuma panel (console tab)', async () => {
    const { page, errors } = await newPage(ROOT);
    await page.goto('/setting');
    const quota = page.locator('[data-section="quota"]');
    await quota.locator('[data-option="checkin_setting.enabled"]').check();
    await quota.locator('[data-option="checkin_setting.min_quota"]').fill('1234');
    await quota.locator('[data-option="checkin_setting.max_quota"]').fill('1234');
    await page.locator('[data-testid="save-quota"]').click();
    // The section saves its changed keys in parallel: wait for each.
    for (const [key, value] of [
      ['checkin_setting.enabled', 'true'],
      ['checkin_setting.min_quota', '1234'],
      ['checkin_setting.max_quota', '1234'],
    ]) {
      await expect.poll(() => option(key!), { timeout: 10_000 }).toBe(value);
    }

    await page.goto('/setting?tab=console');
    const uptime = page.locator('[data-section="uptime"]');
    await uptime.locator('[data-option="console_setting.uptime_kuma_enabled"]').check();
    await uptime
      .locator('[data-option="console_setting.uptime_kuma_groups"]')
      .fill(JSON.stringify([{ url: kuma.url, slug: 'core', categoryName: 'Core services' }]));
    await screenshot(page, 'settings-uptime');
    await page.locator('[data-testid="save-uptime"]').click();
    await expect.poll(() => option('console_setting.uptime_kuma_enabled'), { timeout: 10_000 }).toBe('true');
    await expect.poll(() => option('console_setting.uptime_kuma_groups'), { timeout: 10_000 }).not.toBe('[]');
    expect(JSON.parse((await option('console_setting.uptime_kuma_groups')) ?? '[]')).toEqual([
      { url: kuma.url, slug: 'core', categoryName: 'Core services' },
    ]);
    expect(errors).toEqual([]);
  });

  it('a user checks in once on the dashboard and sees the service status', async () => {
    const before = (await bob.get('/api/user/self')).body.data.quota;
    const { page, errors } = await newPage(BOB);
    await page.goto('/detail');
    const card = page.locator('[data-testid="checkin-card"]');
    const button = card.locator('[data-testid="checkin-button"]');
    await expect.poll(() => button.isEnabled(), { timeout: 10_000 }).toBe(true);
    await button.click();
    await card.locator('[data-testid="checkin-record"]').waitFor({ timeout: 10_000 });
    expect(await button.isDisabled()).toBe(true);
    expect((await bob.get('/api/user/self')).body.data.quota).toBe(before + 1234);

    const panel = page.locator('[data-testid="uptime-panel"]');
    await panel.locator('[data-testid="uptime-monitor"]').first().waitFor({ timeout: 10_000 });
    expect(await panel.locator('[data-testid="uptime-group"]').innerText()).toContain('Core services');
    const monitors = panel.locator('[data-testid="uptime-monitor"]');
    expect(await monitors.count()).toBe(2);
    expect(await monitors.nth(0).innerText()).toContain('Relay API');
    expect(await monitors.nth(0).innerText()).toContain('99.87%');
    expect(await monitors.nth(1).innerText()).toContain('75.00%');
    await screenshot(page, 'dashboard-checkin-uptime');

    // A reload shows today as done: the button stays off.
    await page.reload();
    await card.locator('[data-testid="checkin-record"]').waitFor({ timeout: 10_000 });
    expect(await button.isDisabled()).toBe(true);
    expect(errors).toEqual([]);
  });

  it('a user picks Gotify for notices; the token is kept and never shown', async () => {
    const { page, errors } = await newPage(BOB);
    await page.goto('/personal');
    await page.locator('[data-testid="notify-type-gotify"]').click();
    await page.locator('[data-testid="notify-save"]').click();
    // The missing server is caught before anything is sent.
    await page.locator('[data-testid="notify-gotify-url"][aria-invalid="true"]').waitFor();
    await page.locator('[data-testid="notify-gotify-url"]').fill('https://gotify.example.test');
    await page.locator('[data-testid="notify-gotify-token"]').fill('AppToken.123');
    await page.locator('[data-testid="notify-gotify-priority"]').fill('8');
    await page.locator('[data-testid="notify-save"]').click();
    await expect
      .poll(async () => JSON.parse((await bob.get('/api/user/self')).body.data.setting).notify_type, {
        timeout: 10_000,
      })
      .toBe('gotify');
    const setting = JSON.parse((await bob.get('/api/user/self')).body.data.setting);
    expect(setting).toMatchObject({
      gotify_url: 'https://gotify.example.test',
      gotify_priority: 8,
      gotify_token_set: true,
    });
    await page.reload();
    await expect(page.locator('[data-testid="notify-gotify-url"]').inputValue()).resolves.toBe(
      'https://gotify.example.test',
    );
    expect(await page.locator('[data-testid="notify-gotify-token"]').inputValue()).toBe('');
    await screenshot(page, 'personal-gotify');
    expect(errors).toEqual([]);
  });
});
