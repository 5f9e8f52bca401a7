import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import {
  type ConsoleGateway,
  type Credentials,
  launchBrowser,
  openPage,
  screenshot,
  signInThroughUi,
  startConsoleGateway,
} from './support.ts';

// The whole flow in one browser session, every step through the console: first-run setup,
// sign-in, a channel to a mock OpenAI upstream, a token, a playground answer streamed from the
// upstream, and the call in the usage log with the quota it cost (gpt-4o-mini at ModelRatio 0.075 and
// CompletionRatio 4: (40 prompt + 16 completion × 4) × 0.075 = 7.8 → 8 quota units).
const ROOT: Credentials = { username: 'root', password: 'root-password-1' };
const REPLY = 'Hello from the upstream, one piece at a time.';

let server: ConsoleGateway;
let browser: Browser;
let upstream: MockOpenAI;

beforeAll(async () => {
  const limits = { GLOBAL_API_RATE_LIMIT_ENABLE: 'false', CRITICAL_RATE_LIMIT_ENABLE: 'false' };
  [server, browser, upstream] = await Promise.all([startConsoleGateway(limits), launchBrowser(), startMockOpenAI()]);
  upstream.behaviour = { reply: REPLY, chunkDelayMs: 40, usage: { prompt_tokens: 40, completion_tokens: 16 } };
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await upstream?.close();
});

describe('the console from first run to a billed call', { timeout: 90_000 }, () => {
  it('sets up, signs in, adds a channel and a token, streams in the playground and finds the call in the log', async () => {
    const { page } = await openPage(browser, server.url);
    const errors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(error.message));

    // First run: / goes to the setup page.
    await page.goto('/');
    await page.waitForURL('**/setup');
    const setup = page.locator('[data-testid="setup-page"]');
    await setup.locator('input[name="username"]').fill(ROOT.username);
    await setup.locator('input[name="password"]').fill(ROOT.password);
    await setup.locator('input[name="confirmPassword"]').fill(ROOT.password);
    await setup.locator('button[type="submit"]').click();
    await page.waitForURL((url) => url.pathname === '/', { timeout: 10_000 });
    await signInThroughUi(page, ROOT);

    // A price for the model, as an administrator would set it (the settings page has its own tests).
    await server.gateway.options.setMany({
      ModelRatio: JSON.stringify({ 'gpt-4o-mini': 0.075 }),
      CompletionRatio: JSON.stringify({ 'gpt-4o-mini': 4 }),
    });

    // A channel to the mock upstream.
    await page.goto('/channel/add');
    const form = page.locator('[data-testid="channel-drawer"]');
    await form.locator('[data-testid="channel-name"]').fill('mock-openai');
    await form.locator('[data-testid="channel-key"]').fill('sk-upstream-key');
    await form.locator('[data-testid="channel-base_url"]').fill(upstream.url);
    await form.locator('[data-testid="channel-custom-models"]').fill('gpt-4o-mini');
    await form.locator('[data-testid="channel-add-custom"]').click();
    await form.locator('[data-testid="channel-submit"]').click();
    await page.getByText('渠道创建成功').first().waitFor();
    await page.waitForURL((url) => url.pathname === '/channel');

    // A token.
    await page.goto('/token/create');
    const tokenForm = page.locator('form');
    await tokenForm.locator('input[name="name"]').fill('flow-token');
    await tokenForm.locator('button[type="submit"]').click();
    await page.waitForURL((url) => url.pathname === '/token');
    await page.getByText('flow-token', { exact: true }).waitFor();

    // The playground streams the upstream's answer as it arrives.
    await page.goto('/playground');
    await page.locator('[data-testid="playground-panel"]').waitFor();
    await expect.poll(() => page.locator('[data-testid="playground-model"]').inputValue()).toBe('gpt-4o-mini');
    await page.locator('[data-testid="playground-input"]').fill('Say hello');
    await page.locator('[data-testid="playground-send"]').click();
    await page.waitForFunction(`(() => {
      const all = document.querySelectorAll('[data-testid="playground-message"][data-role="assistant"]');
      const last = all[all.length - 1];
      return last && last.dataset.status === 'incomplete' && last.textContent.length > 0;
    })()`);
    const answer = page.locator('[data-testid="playground-message"][data-role="assistant"]').last();
    await expect.poll(() => answer.getAttribute('data-status'), { timeout: 10_000 }).toBe('complete');
    expect(await answer.textContent()).toBe(REPLY);
    await screenshot(page, 'flow-01-playground');

    // The usage log shows the call with its quota, in dollars at 500,000 units a dollar.
    const quota = Math.round((40 + 16 * 4) * 0.075);
    await page.goto('/log');
    const quotaCell = page.locator('[data-testid="log-quota"]');
    await expect
      .poll(
        async () => {
          await page.reload();
          await quotaCell
            .first()
            .waitFor({ timeout: 5000 })
            .catch(() => {});
          return quotaCell.allTextContents();
        },
        { timeout: 15_000 },
      )
      .toContain(`$${(quota / 500_000).toFixed(6)}`);
    await screenshot(page, 'flow-02-usage-log');
    expect(errors).toEqual([]);
  });
});
