import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import {
  type ConsoleGateway,
  launchBrowser,
  openPage,
  screenshot,
  signInByApi,
  startConsoleGateway,
} from './support.ts';

// Periodic quotas in the console: a token's limits set in its form and its day's use in the token list, a
// user's limits set by an administrator in the user drawer and the week's use on the user's personal page.
const ROOT = { username: 'root', password: 'root-password-1' };
const DAVE = { username: 'dave', password: 'dave-password-1' };
const MODEL = 'gpt-4o-mini';

let server: ConsoleGateway;
let browser: Browser;
let upstream: MockOpenAI;
let root: DashboardClient;

beforeAll(async () => {
  const limits = { GLOBAL_API_RATE_LIMIT_ENABLE: 'false', CRITICAL_RATE_LIMIT_ENABLE: 'false' };
  [server, browser, upstream] = await Promise.all([startConsoleGateway(limits), launchBrowser(), startMockOpenAI()]);
  root = await setupRoot(server.url, ROOT.password);
  expect(
    (await root.post('/api/channel/', { name: 'mock', type: 1, key: 'sk-up', base_url: upstream.url, models: MODEL }))
      .body.success,
  ).toBe(true);
  // 0.002 USD a call: 1,000 quota units.
  await server.gateway.options.setMany({ ModelPrice: JSON.stringify({ [MODEL]: 0.002 }) });
  expect((await root.post('/api/user/', { username: DAVE.username, password: DAVE.password })).body.success).toBe(true);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await upstream?.close();
});

const chat = (key: string) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
  });

describe('period quotas in the console', { timeout: 90_000 }, () => {
  it('sets a token’s daily limits in its form and shows the day’s use in the token list', async () => {
    const { page, errors } = await openPage(browser, server.url);
    await signInByApi(page, server.url, ROOT);
    await page.goto('/token/create');
    const form = page.locator('[data-testid="token-form"]');
    await form.locator('input[name="name"]').fill('daily');
    await form.locator('input[name="daily_quota_limit"]').fill('-5');
    await page.locator('form button[type="submit"]').click();
    await page.getByText('周期上限必须是不小于 0 的整数').first().waitFor();
    await form.locator('input[name="daily_quota_limit"]').fill('2000');
    await form.locator('input[name="daily_request_limit"]').fill('3');
    await screenshot(page, 'periods-01-token-form');
    await page.locator('form button[type="submit"]').click();
    await page.waitForURL((url) => url.pathname === '/token');

    const token = (await root.get('/api/token/')).body.data.items.find((t: { name: string }) => t.name === 'daily');
    expect(token).toMatchObject({ daily_quota_limit: 2000, daily_request_limit: 3, weekly_quota_limit: 0 });
    const key = (await root.post(`/api/token/${token.id}/key`)).body.data.key as string;
    expect((await chat(key)).status).toBe(200);
    expect((await chat(key)).status).toBe(200);
    const refused = await chat(key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);

    await page.reload();
    const usage = page.locator('[data-testid="period-usage-daily"]');
    await usage.waitFor();
    expect(await usage.textContent()).toContain('今日');
    expect(await usage.textContent()).toContain('2 / 3 次请求');
    await screenshot(page, 'periods-02-token-list');
    expect(errors).toEqual([]);
  });

  it('lets an administrator set a user’s weekly limit, shown on that user’s personal page', async () => {
    const admin = await openPage(browser, server.url);
    await signInByApi(admin.page, server.url, ROOT);
    const dave = (await root.get('/api/user/search?keyword=dave')).body.data.items[0];
    await admin.page.goto(`/user/edit/${dave.id}`);
    const edit = admin.page.locator('[data-testid="user-edit-drawer"]');
    await edit.locator('[data-testid="user-weekly_request_limit"]').fill('50');
    await edit.locator('[data-testid="user-monthly_quota_limit"]').fill('1000000');
    await edit.locator('[data-testid="user-submit"]').click();
    await admin.page.waitForURL((url) => url.pathname === '/user');
    expect((await root.get(`/api/user/${dave.id}`)).body.data).toMatchObject({
      weekly_request_limit: 50,
      monthly_quota_limit: 1_000_000,
      daily_quota_limit: 0,
    });

    const own = await openPage(browser, server.url);
    await signInByApi(own.page, server.url, DAVE);
    await own.page.goto('/personal');
    const card = own.page.locator('[data-testid="personal-periods"]');
    await card.waitFor();
    expect(await card.locator('[data-testid="period-usage-weekly"]').textContent()).toContain('0 / 50 次请求');
    expect(await card.locator('[data-testid="period-usage-monthly"]').textContent()).toContain('本月');
    await screenshot(own.page, 'periods-03-personal');
    expect([...admin.errors, ...own.errors]).toEqual([]);
  });
});
