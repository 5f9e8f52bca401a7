import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { eventually } from '../support/wait.ts';
import {
  type ConsoleGateway,
  launchBrowser,
  openPage,
  screenshot,
  signInByApi,
  startConsoleGateway,
} from './support.ts';

// Passive health in the console: the circuit settings on Settings → Monitoring save what is typed, and an
// administrator's log detail says why a request went to its channel (admin_info.route).

let server: ConsoleGateway;
let browser: Browser;
let upstream: MockOpenAI;
let root: DashboardClient;
let context: BrowserContext;
let page: Page;
let errors: string[];
let channelId: number;

beforeAll(async () => {
  [server, browser, upstream] = await Promise.all([
    startConsoleGateway({ GLOBAL_API_RATE_LIMIT_ENABLE: 'false', CRITICAL_RATE_LIMIT_ENABLE: 'false' }),
    launchBrowser(),
    startMockOpenAI(),
  ]);
  root = await setupRoot(server.url);
  const channel = await root.post('/api/channel/', {
    name: 'circuit-ui',
    type: 1,
    key: 'sk-good',
    base_url: upstream.url,
    models: 'gpt-4o-mini',
    group: 'default',
    priority: 5,
  });
  expect(channel.body).toMatchObject({ success: true });
  channelId = channel.body.data.id;
  const token = await root.post('/api/token/', { name: 'ui', unlimited_quota: true });
  const key = String(token.body.data.key);
  const status = await eventually(
    async () =>
      (
        await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
        })
      ).status,
    (answered) => answered === 200,
    10_000,
  );
  expect(status).toBe(200);
  ({ context, page, errors } = await openPage(browser, server.url));
  await signInByApi(page, server.url, { username: 'root', password: 'root-password' });
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await upstream?.close();
  await server?.stop();
});

describe('circuits in the console', () => {
  it('edits the circuit settings on the monitoring section', async () => {
    await page.goto('/setting');
    const section = page.locator('[data-section="monitoring"]');
    const threshold = section.locator('input[data-option="circuit_setting.failure_threshold"]');
    await threshold.waitFor();
    expect(await threshold.inputValue()).toBe('5');
    await section.getByText('根据上游失败自动熔断（被动健康检查）').waitFor();
    await threshold.fill('7');
    await section.locator('input[data-option="circuit_setting.cooldown_seconds"]').fill('45');
    await section.scrollIntoViewIfNeeded();
    await screenshot(page, 'admin-circuit-settings');
    await page.locator('[data-testid="save-monitoring"]').click();
    await expect
      .poll(async () => {
        const options = (await root.get('/api/option/')).body.data as Array<{ key: string; value: string }>;
        const read = (key: string) => options.find((o) => o.key === key)?.value;
        return [read('circuit_setting.failure_threshold'), read('circuit_setting.cooldown_seconds')];
      })
      .toEqual(['7', '45']);
    expect(errors).toEqual([]);
  });

  it("says in an administrator's log detail why the request went to its channel", async () => {
    await page.goto('/log');
    const quota = page.locator('[data-testid="log-quota"]');
    await quota.first().waitFor();
    await page.locator('tr', { hasText: 'gpt-4o-mini' }).first().click();
    const detail = page.locator('[data-testid="log-detail"]');
    await detail.getByText('选路原因').waitFor();
    await detail.getByText(`#${channelId}: 分组 default，优先级 5，该优先级唯一候选，第 1 次尝试`).waitFor();
    await screenshot(page, 'admin-log-route');
    expect(errors).toEqual([]);
  });
});
