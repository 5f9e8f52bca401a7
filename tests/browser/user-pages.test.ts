import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import {
  type ConsoleGateway,
  type Credentials,
  launchBrowser,
  localItem,
  openPage,
  screenshot,
  signInByApi,
  startConsoleGateway,
} from './support.ts';

// The user's pages in a real browser (spec doc 2 §2 Tokens page, doc 3 §2): tokens created in the UI with
// their validation messages, the playground streaming from a mock OpenAI upstream, the usage log with
// filters, columns and details, the drawing and task logs, pricing search, chat frame and dashboard;
// every page without console errors for a user and an administrator, screenshots in zh/en, light/dark.

const ROOT: Credentials = { username: 'root', password: 'root-password-1' };
const ALICE: Credentials = { username: 'alice', password: 'alice-password' };
/** A user without any token. */
const BOB: Credentials = { username: 'bob', password: 'bob-password' };
const REPLY = 'Streaming answer from the mock upstream, arriving piece by piece.';
const MODELS = ['gpt-4o-mini', 'gpt-4o'];

let server: ConsoleGateway;
let browser: Browser;
let upstream: MockOpenAI;
let root: DashboardClient;
let alice: DashboardClient;
const contexts: BrowserContext[] = [];

/** A signed-in page that records console errors and page errors. */
async function signedInPage(user: Credentials, viewport?: { width: number; height: number }) {
  const opened = await openPage(browser, server.url, viewport ? { viewport } : {});
  contexts.push(opened.context);
  await opened.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  const consoleErrors: string[] = [];
  opened.page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`${opened.page.url()}: ${message.text()}`);
  });
  await signInByApi(opened.page, server.url, user);
  return { ...opened, consoleErrors };
}

beforeAll(async () => {
  // Every page load makes several /api calls from one address: the per-IP limit would stop a test this long.
  const limits = { GLOBAL_API_RATE_LIMIT_ENABLE: 'false', CRITICAL_RATE_LIMIT_ENABLE: 'false' };
  [server, browser, upstream] = await Promise.all([startConsoleGateway(limits), launchBrowser(), startMockOpenAI()]);
  upstream.behaviour = { reply: REPLY, chunkDelayMs: 60, usage: { prompt_tokens: 40, completion_tokens: 16 } };
  root = await setupRoot(server.url, ROOT.password);
  const channel = await root.post('/api/channel/', {
    name: 'mock',
    type: 1,
    key: 'sk-upstream',
    base_url: upstream.url,
    models: MODELS.join(','),
    group: 'default',
  });
  expect(channel.body).toMatchObject({ success: true });
  for (const [key, value] of [
    ['ModelRatio', JSON.stringify({ 'gpt-4o-mini': 0.075, 'gpt-4o': 1.25 })],
    ['CompletionRatio', JSON.stringify({ 'gpt-4o': 4 })],
    ['QuotaForNewUser', '50000000'],
    // A chat client on the gateway itself (a static file), so the frame loads without leaving the test.
    ['Chats', JSON.stringify([{ 'Test chat': `${server.url}/logo.svg?key={key}&address={address}` }])],
  ]) {
    expect((await root.put('/api/option/', { key, value })).body, key).toMatchObject({ success: true });
  }
  const registered = await new DashboardClient(server.url).post('/api/user/register', {
    username: ALICE.username,
    password: ALICE.password,
    password2: ALICE.password,
  });
  expect(registered.body).toMatchObject({ success: true });
  alice = new DashboardClient(server.url);
  expect((await alice.login(ALICE.username, ALICE.password)).body).toMatchObject({ success: true });
  expect((await alice.post('/api/token/', { name: 'api-token', unlimited_quota: true })).body).toMatchObject({
    success: true,
  });
  expect((await root.post('/api/token/', { name: 'root-token' })).body).toMatchObject({ success: true });
  // A token past its expiry (the API refuses to create one, so it is aged in the database).
  expect((await alice.post('/api/token/', { name: 'old-token' })).body).toMatchObject({ success: true });
  await server.gateway.store.db
    .updateTable('tokens')
    .set({ expired_time: Math.floor(Date.now() / 1000) - 3600 })
    .where('name', '=', 'old-token')
    .execute();
  expect(
    (await new DashboardClient(server.url).post('/api/user/register', { ...BOB, password2: BOB.password })).body,
  ).toMatchObject({ success: true });
  // A drawing task and a creative task of alice's, for the two task logs.
  const now = Math.floor(Date.now() / 1000);
  const db = server.gateway.store.db;
  await db
    .insertInto('midjourneys')
    .values({
      user_id: alice.userId!,
      action: 'IMAGINE',
      mj_id: 'mj-alice',
      code: 1,
      status: 'SUCCESS',
      progress: '100%',
      prompt: 'a lighthouse at dusk',
      prompt_en: 'a lighthouse at dusk',
      submit_time: (now - 40) * 1000,
      finish_time: now * 1000,
      channel_id: 1,
    })
    .execute();
  await db
    .insertInto('tasks')
    .values({
      created_at: now,
      updated_at: now,
      task_id: 'suno-alice',
      platform: 'suno',
      user_id: alice.userId!,
      channel_id: 1,
      action: 'MUSIC',
      status: 'IN_PROGRESS',
      progress: '40%',
      submit_time: now - 20,
    })
    .execute();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await upstream?.close();
});

describe('user pages', { timeout: 60_000 }, () => {
  let page: Page;
  let consoleErrors: string[];

  it('creates a token in the UI, with the token validation messages', async () => {
    ({ page, consoleErrors } = await signedInPage(ALICE));
    await page.goto('/token');
    await page.locator('[data-testid="token-warning"]').waitFor();
    await page.getByText('api-token', { exact: true }).waitFor();

    // An expired token cannot be enabled (spec doc 2 §5): the server's message shows.
    const expired = page.locator('tr', { hasText: 'old-token' });
    await expired.getByText('已过期').waitFor();
    await expired.locator('[data-testid="token-enable"]').click();
    await page.getByText('令牌已过期，无法启用，请先修改令牌过期时间，或者设置为永不过期').waitFor();
    expectRefused(consoleErrors, 400);

    // Copying needs a selection (spec doc 2 §5).
    await page.locator('[data-testid="token-copy-selected"]').first().click();
    await page.getByText('请至少选择一个令牌！').waitFor();

    await page.goto('/token/create');
    const form = page.locator('form');
    await form.locator('input[name="count"]').fill('0');
    await form.locator('input[name="remain_quota"]').fill('-5');
    await form.locator('input[name="expired_time"]').fill('not a date');
    await form.locator('button[type="submit"]').click();
    await page.getByText('请输入令牌名称').waitFor();
    await page.getByText('新建数量必须是 1 到 100 之间的整数').waitFor();
    await page.getByText('额度必须是不小于 0 的整数').waitFor();
    await page.getByText('过期时间格式错误！').waitFor();
    await screenshot(page, 'user-01-token-validation');

    // The name length limit is the server's (spec doc 3 §5): its message shows.
    await form.locator('input[name="name"]').fill('x'.repeat(51));
    await form.locator('input[name="count"]').fill('1');
    await page.getByRole('button', { name: '$10', exact: true }).click();
    await page.getByRole('button', { name: '一天', exact: true }).click();
    await form.locator('button[type="submit"]').click();
    await page.getByText('令牌名称过长，最多 50 个字符').waitFor();
    expectRefused(consoleErrors, 400);
    await form.locator('input[name="name"]').fill('ui-token');
    expect(await form.locator('input[name="remain_quota"]').inputValue()).toBe('5000000');
    expect(await form.locator('input[name="expired_time"]').inputValue()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    await form.locator('button[type="submit"]').click();
    await page.waitForURL((url) => url.pathname === '/token');
    await page.getByText('ui-token', { exact: true }).waitFor();

    const tokens = (await alice.get('/api/token/?p=1&size=100')).body.data.items as Array<Record<string, any>>;
    const created = tokens.find((token) => token.name === 'ui-token')!;
    expect(created).toMatchObject({ remain_quota: 5_000_000, unlimited_quota: false, status: 1 });
    // Lists mask the key; the page shows it masked and copies the whole key, asked for one at a time.
    const fullKey = `sk-${(await alice.post(`/api/token/${created.id}/key`)).body.data.key}`;
    expect(created.key).toMatch(/^[0-9A-Za-z]{4}\*{10}[0-9A-Za-z]{4}$/);
    await page.locator('tr', { hasText: 'ui-token' }).getByText(`sk-${created.key}`).waitFor();
    const inADay = Math.floor(Date.now() / 1000) + 86_400;
    expect(Math.abs(created.expired_time - inADay)).toBeLessThan(120);

    // Editing: the expiry back to never.
    await page.locator('tr', { hasText: 'ui-token' }).getByRole('link', { name: '编辑' }).click();
    await page.waitForURL(`**/token/${created.id}`);
    await expect.poll(() => page.locator('input[name="name"]').inputValue()).toBe('ui-token');
    await page.getByRole('button', { name: '永不过期', exact: true }).click();
    await page.locator('form button[type="submit"]').click();
    await page.waitForURL((url) => url.pathname === '/token');
    await page.locator('tr', { hasText: 'ui-token' }).getByText('永不过期').waitFor();
    expect((await alice.get(`/api/token/${created.id}`)).body.data.expired_time).toBe(-1);

    // Search by name, disable and enable again from the list.
    await page.locator('input[name="q"]').fill('ui-');
    await expect.poll(() => page.getByText('api-token', { exact: true }).count()).toBe(0);
    const row = page.locator('tr', { hasText: 'ui-token' });
    await row.locator('[data-testid="token-disable"]').click();
    await row.getByText('已禁用').waitFor();
    await row.locator('[data-testid="token-enable"]').click();
    await row.getByText('已启用').waitFor();

    // Batch copy of the selected keys.
    await row.locator('input[type="checkbox"]').check();
    await page.locator('[data-testid="token-copy-selected"]').last().click();
    await page.getByText('已复制：1 个令牌').waitFor();
    const clipboard = (await page.evaluate('navigator.clipboard.readText()')) as string;
    expect(clipboard).toBe(`ui-token\t${fullKey}`);
    await row.locator('input[type="checkbox"]').uncheck();
    await row.locator('[data-testid="token-copy-key"]').click();
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(fullKey);

    // The chat link opens the saved chat client with this token's key.
    const [popup] = await Promise.all([
      page.context().waitForEvent('page'),
      row.locator('[data-testid="token-chat"]').click(),
    ]);
    await popup.waitForURL(/logo\.svg/);
    expect(decodeURIComponent(popup.url())).toContain(`key=${fullKey}`);
    await popup.close();
    await screenshot(page, 'user-02-token-list');
    await page.locator('input[name="q"]').fill('');
    await page.getByText('api-token', { exact: true }).waitFor();
    expect(consoleErrors).toEqual([]);
  });

  it('streams a playground answer from the upstream as it arrives', async () => {
    await page.goto('/playground');
    await page.locator('[data-testid="playground-panel"]').waitFor();
    expect(await page.locator('[data-testid="playground-message"]').count()).toBe(2);
    await expect.poll(() => page.locator('[data-testid="playground-model"]').inputValue()).toBe('gpt-4o-mini');
    await page.locator('[data-testid="playground-input"]').fill('Tell me something');
    await page.locator('[data-testid="playground-send"]').click();
    const answer = page.locator('[data-testid="playground-message"][data-role="assistant"]').last();
    // Part of the answer shows while the rest is still on its way.
    await page.waitForFunction(`(() => {
      const all = document.querySelectorAll('[data-testid="playground-message"][data-role="assistant"]');
      const last = all[all.length - 1];
      const text = last ? last.textContent : '';
      return last && last.dataset.status === 'incomplete' && text.length > 0 && text.length < ${REPLY.length};
    })()`);
    await page.locator('[data-testid="playground-message"][data-status="complete"]').nth(3).waitFor();
    expect(await answer.textContent()).toBe(REPLY);
    const sent = upstream.requests.at(-1)!.body;
    expect(sent).toMatchObject({ model: 'gpt-4o-mini', stream: true, temperature: 0.7 });
    expect(sent.messages[0]).toMatchObject({ role: 'system' });
    expect(sent.messages.at(-1)).toEqual({ role: 'user', content: 'Tell me something' });
    await screenshot(page, 'user-03-playground-answer');

    await page.locator('[data-testid="playground-clear"]').click();
    expect(await page.locator('[data-testid="playground-message"]').count()).toBe(0);
    expect(consoleErrors).toEqual([]);
  });

  it('shows the call in the usage log with its quota, and filters it', async () => {
    let log: Record<string, any> | undefined;
    await expect
      .poll(
        async () => {
          log = (await alice.get('/api/log/self/?type=2')).body.data.items[0];
          return log?.model_name;
        },
        { timeout: 5000 },
      )
      .toBe('gpt-4o-mini');
    expect(log!.quota).toBeGreaterThan(0);
    const quotaText = `$${(log!.quota / 500_000).toFixed(6)}`;

    await page.goto('/log');
    const quota = page.locator('[data-testid="log-quota"]');
    await quota.first().waitFor();
    expect(await quota.allTextContents()).toContain(quotaText);
    await page.locator('[data-testid="log-stat-quota"]').getByText('$').waitFor();
    // Administrators' columns are not there for a user.
    expect(await page.locator('[data-testid="log-username"]').count()).toBe(0);
    expect(await page.locator('[data-testid="log-filter-channel"]').count()).toBe(0);

    // A row expands into its details.
    await page.locator('tr', { hasText: quotaText }).first().click();
    const detail = page.locator('[data-testid="log-detail"]');
    await detail.getByText('模型倍率').waitFor();
    await detail.getByText('0.075', { exact: true }).waitFor();
    await screenshot(page, 'user-04-log-detail');

    // Filters apply with the Query button.
    await page.locator('[data-testid="log-filter-model"]').fill('no-such-model');
    await page.locator('[data-testid="log-query"]').click();
    await expect.poll(() => quota.count()).toBe(0);
    await page.locator('[data-testid="log-filter-model"]').fill('gpt-4o-mini');
    await page.locator('[data-testid="log-query"]').click();
    await quota.first().waitFor();

    // The type selector: no top-ups here.
    await page.locator('[data-testid="log-type"]').click();
    await page.getByRole('option', { name: '充值' }).click();
    await expect.poll(() => quota.count()).toBe(0);
    await page.locator('[data-testid="log-type"]').click();
    await page.getByRole('option', { name: '全部' }).click();
    await quota.first().waitFor();

    // Column settings are remembered in logs-table-columns.
    await page.locator('[data-testid="log-columns"]').click();
    await page.locator('[data-column="ip"]').uncheck();
    await page.keyboard.press('Escape');
    expect(JSON.parse((await localItem(page, 'logs-table-columns')) ?? '{}')).toEqual({ ip: false });
    await page.reload();
    await quota.first().waitFor();
    expect(await page.locator('th', { hasText: /^IP$/ }).count()).toBe(0);
    expect(consoleErrors).toEqual([]);
  });

  it('searches the pricing page, ignoring input while composing', async () => {
    await page.goto('/pricing');
    const rows = page.locator('[data-testid="pricing-row"]');
    await expect.poll(() => rows.count()).toBe(2);
    await page.locator('[data-testid="pricing-banner"]').getByText('default').waitFor();
    const copy = page.locator('[data-testid="pricing-copy-selected"]');
    expect(await copy.isDisabled()).toBe(true);

    const search = page.locator('[data-testid="pricing-search"]');
    await search.dispatchEvent('compositionstart');
    await search.fill('MINI');
    expect(await rows.count()).toBe(2);
    await search.dispatchEvent('compositionend');
    await expect.poll(() => rows.count()).toBe(1);
    await rows.first().locator('input[type="checkbox"]').check();
    expect(await copy.isDisabled()).toBe(false);
    await copy.click();
    await page.getByText('已复制：gpt-4o-mini').waitFor();
    // Prompt price per 1M tokens: ratio 0.075 × 2 × group ratio 1.
    await rows.first().getByText('提示 $0.15 / 1M tokens').waitFor();
    await screenshot(page, 'user-05-pricing-search');
    expect(consoleErrors).toEqual([]);
  });

  it('renders every page without console errors for a user, in zh and en, light and dark', async () => {
    const combos = [
      { lang: 'zh', theme: 'light' },
      { lang: 'zh', theme: 'dark' },
      { lang: 'en', theme: 'light' },
      { lang: 'en', theme: 'dark' },
    ];
    for (const { lang, theme } of combos) {
      await page.evaluate(
        `localStorage.setItem('i18nextLng', '${lang}'); localStorage.setItem('theme-mode', '${theme}')`,
      );
      await visitAll(page, `user-${lang}-${theme}`);
    }
    expect(consoleErrors).toEqual([]);
  });

  it('renders every page for an administrator, with the administrators columns and user info', async () => {
    const admin = await signedInPage(ROOT);
    await visitAll(admin.page, 'admin-zh-light');
    await admin.page.goto('/log');
    await admin.page.locator('[data-testid="log-filter-channel"]').waitFor();
    await admin.page.locator('[data-testid="log-username"]', { hasText: 'alice' }).first().click();
    const dialog = admin.page.locator('[data-testid="log-user-dialog"]');
    await dialog.getByText('请求次数').waitFor();
    await dialog.getByText('alice', { exact: true }).waitFor();
    await screenshot(admin.page, 'admin-log-user-info');
    await admin.page.goto('/midjourney');
    await admin.page.locator('[data-testid="midjourney-notify-warning"]').waitFor();
    expect(admin.consoleErrors).toEqual([]);
    expect(admin.errors).toEqual([]);
  });

  it('sends a user without an enabled token from the chat page to /token', async () => {
    const bob = await signedInPage(BOB);
    await bob.page.goto('/chat/0');
    await bob.page.getByText('当前没有可用的启用令牌，请确认是否有令牌处于启用状态！').first().waitFor();
    await bob.page.waitForURL((url) => url.pathname === '/token');
    expect(bob.consoleErrors).toEqual([]);
  });

  it('toggles the playground settings on a phone', async () => {
    const phone = await signedInPage(ALICE, { width: 390, height: 844 });
    await phone.page.goto('/playground');
    await phone.page.locator('[data-testid="playground-panel-toggle"]').waitFor();
    expect(await phone.page.locator('[data-testid="playground-panel"]').count()).toBe(0);
    await phone.page.locator('[data-testid="playground-panel-toggle"]').click();
    await phone.page.locator('[data-testid="playground-panel"]').waitFor();
    await screenshot(phone.page, 'user-06-playground-phone');
    expect(phone.consoleErrors).toEqual([]);
  });
});

/** The browser logs a refused call as a console error: take out the one the test caused on purpose. */
function expectRefused(errors: string[], status: number): void {
  const index = errors.findIndex((error) => error.includes(`status of ${status}`));
  expect(index, `no refused call with status ${status} in ${JSON.stringify(errors)}`).toBeGreaterThanOrEqual(0);
  errors.splice(index, 1);
}

/** Every page of this area, each waited for and photographed as `<prefix>-<page>`. */
async function visitAll(page: Page, prefix: string): Promise<void> {
  const pages: Array<[string, string, string]> = [
    ['token', '/token', '[data-testid="token-copy-key"]'],
    ['token-create', '/token/create', 'input[name="name"]'],
    ['log', '/log', '[data-testid="log-quota"]'],
    ['midjourney', '/midjourney', 'text=mj-alice'],
    ['task', '/task', 'text=suno-alice'],
    ['pricing', '/pricing', '[data-testid="pricing-row"]'],
    ['playground', '/playground', '[data-testid="playground-panel"]'],
    ['dashboard', '/detail', '[data-testid="dashboard-quota"]'],
    ['chat', '/chat/0', '[data-testid="chat-frame"]'],
  ];
  let first = true;
  for (const [name, path, ready] of pages) {
    // One page load (language and theme are read at start), then the router's own navigation.
    if (first) await page.goto(path);
    else await navigate(page, path);
    first = false;
    try {
      await page.locator(ready).first().waitFor({ timeout: 10_000 });
    } catch (error) {
      await screenshot(page, `${prefix}-${name}-FAILED`);
      throw error;
    }
    await screenshot(page, `${prefix}-${name}`);
  }
}

/** Client-side navigation, as a menu link does it, without reloading the console. */
async function navigate(page: Page, path: string): Promise<void> {
  await page.evaluate(
    `window.history.pushState({}, '', ${JSON.stringify(path)}); window.dispatchEvent(new PopStateEvent('popstate'))`,
  );
  await page.waitForURL((url) => url.pathname === path);
}
