import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient } from '../support/client.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
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

// The administrators' pages in a real browser (spec doc 2 §2 Channels, Redemption codes and Settings pages,
// doc 1 §2 User management): the flow (setup, sign-in, create a channel) through the UI, a model test
// against a mock OpenAI upstream, the validation messages of doc 2 §5, a Kubernetes-managed channel, codes,
// user row actions with confirmations, settings saves that send only the changed keys, access denied for a
// normal user, no console errors, and screenshots of every screen in zh/en, light/dark.

const ROOT: Credentials = { username: 'root', password: 'root-password-1' };
const ALICE: Credentials = { username: 'alice', password: 'alice-password' };

let server: ConsoleGateway;
let browser: Browser;
let upstream: MockOpenAI;
let rootApi: DashboardClient;
let page: Page;
const contexts: BrowserContext[] = [];
const consoleErrors: string[] = [];
const pageErrors: string[] = [];

/** Console errors, except the browser's own note about every failed HTTP answer (some are expected here). */
function watch(target: Page) {
  target.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
      consoleErrors.push(`${target.url()}: ${message.text()}`);
    }
  });
  target.on('pageerror', (error) => pageErrors.push(`${target.url()}: ${error.message}`));
}

async function newPage(): Promise<Page> {
  const opened = await openPage(browser, server.url);
  contexts.push(opened.context);
  await opened.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  watch(opened.page);
  return opened.page;
}

/** Waits for a message (a toast or an inline text). */
const see = (target: Page, text: string | RegExp) => target.getByText(text).first().waitFor();
const drawer = (target: Page) => target.locator('[data-testid="channel-drawer"]');
const channelRow = (target: Page, name: string) =>
  target.locator('tr[data-channel-id]').filter({ has: target.getByText(name, { exact: true }) });

beforeAll(async () => {
  const limits = { GLOBAL_API_RATE_LIMIT_ENABLE: 'false', CRITICAL_RATE_LIMIT_ENABLE: 'false' };
  [server, browser, upstream] = await Promise.all([startConsoleGateway(limits), launchBrowser(), startMockOpenAI()]);
  page = await newPage();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await upstream?.close();
});

describe('administrators’ pages', { timeout: 60_000 }, () => {
  it('sets up, signs in and creates a channel through the UI, with the validation messages', async () => {
    await page.goto('/setup');
    const setup = page.locator('[data-testid="setup-page"]');
    await setup.locator('input[name="username"]').fill(ROOT.username);
    await setup.locator('input[name="password"]').fill(ROOT.password);
    await setup.locator('input[name="confirmPassword"]').fill(ROOT.password);
    await setup.locator('button[type="submit"]').click();
    await page.waitForURL((url) => url.pathname === '/', { timeout: 10_000 });
    await signInThroughUi(page, ROOT);
    rootApi = new DashboardClient(server.url);
    expect((await rootApi.login(ROOT.username, ROOT.password)).body).toMatchObject({ success: true });

    await page.locator('[data-testid="side-menu"]').getByText('渠道', { exact: true }).click();
    await page.waitForURL('**/channel');
    await page.locator('[data-testid="channel-page"]').getByText('暂无渠道').waitFor();
    await page.locator('[data-testid="channel-add"]').click();
    await page.waitForURL('**/channel/add');
    const form = drawer(page);
    await form.waitFor();

    // The type picker offers exactly the types the gateway's registry offers.
    const registry = (await rootApi.get('/api/channel/types')).body.data as Array<{ id: number; offered: boolean }>;
    const offered = registry.filter((type) => type.offered).map((type) => `channel-type-${type.id}`);
    expect(offered).toContain('channel-type-14');
    await form.locator('[role="combobox"]').first().click();
    const choices = page.locator('[role="listbox"] [data-testid^="channel-type-"]');
    await expect.poll(() => choices.count()).toBe(offered.length);
    const shown = await Promise.all(offered.map((_, index) => choices.nth(index).getAttribute('data-testid')));
    expect(shown).toEqual(offered);
    await page.keyboard.press('Escape');
    await expect.poll(() => choices.count()).toBe(0);

    // Fetching models of a new channel needs a key; saving needs name and key, then a model.
    await form.locator('[data-testid="channel-fetch-models"]').click();
    await see(page, '请填写密钥');
    await form.locator('[data-testid="channel-submit"]').click();
    await see(page, '请填写渠道名称和渠道密钥！');
    await form.locator('[data-testid="channel-name"]').fill('mock-openai');
    await form.locator('[data-testid="channel-key"]').fill('sk-upstream-key');
    await form.locator('[data-testid="channel-submit"]').click();
    await see(page, '请至少选择一个模型！');
    // Models fetched from the (mock) upstream, then a custom name already in the list.
    await form.locator('[data-testid="channel-base_url"]').fill(upstream.url);
    await form.locator('[data-testid="channel-fetch-models"]').click();
    await see(page, '已获取 1 个模型');
    await form.locator('[data-testid="channel-custom-models"]').fill('gpt-4o-mini, gpt-4o');
    await form.locator('[data-testid="channel-add-custom"]').click();
    await see(page, '某些模型已存在！');
    await form.locator('[data-testid="channel-model_mapping"]').fill('{"gpt-4o": ');
    await form.locator('[data-testid="channel-model_mapping"]').blur();
    await see(page, '不是合法的 JSON 字符串');
    await form.locator('[data-testid="channel-submit"]').click();
    await see(page, '模型映射必须是合法的 JSON 格式！');
    await form.locator('[data-testid="channel-model_mapping"]').fill('');
    await form.locator('[data-testid="channel-param_override"]').fill('[');
    await form.locator('[data-testid="channel-submit"]').click();
    await see(page, '参数覆盖必须是合法的 JSON 格式！');
    await form.locator('[data-testid="channel-param_override"]').fill('');
    // A base URL ending in /v1 asks first; cancelling keeps the drawer open.
    await form.locator('[data-testid="channel-base_url"]').fill(`${upstream.url}/v1/`);
    await form.locator('[data-testid="channel-submit"]').click();
    await see(page, 'Base URL 不需要以 /v1 结尾，这样可能导致请求失败。确定要继续吗？');
    await screenshot(page, 'admin-01-channel-v1-warning');
    await page.locator('[data-testid="confirm-cancel"]').click();
    await form.locator('[data-testid="channel-base_url"]').fill(`${upstream.url}/`);
    await form.locator('[data-testid="channel-tag"]').fill('');
    await screenshot(page, 'admin-02-channel-drawer');
    await form.locator('[data-testid="channel-submit"]').click();
    await see(page, '渠道创建成功');
    await page.waitForURL((url) => url.pathname === '/channel');
    await channelRow(page, 'mock-openai').waitFor();

    const saved = await rootApi.get('/api/channel/?p=1&page_size=10');
    const created = saved.body.data.items[0];
    expect(created).toMatchObject({ name: 'mock-openai', base_url: upstream.url, type: 1, group: 'default' });
    expect(created.models.split(',')).toContain('gpt-4o-mini');
  });

  it('tests the channel from the model test picker and refreshes its row', async () => {
    const row = channelRow(page, 'mock-openai');
    await row.locator('[data-testid="channel-test-pick"]').click();
    const dialog = page.locator('[data-testid="model-test-dialog"]');
    await dialog.waitFor();
    await dialog.locator('input').first().fill('gpt-4o-mini');
    await dialog.locator('tr[data-model="gpt-4o-mini"] [data-testid="test-model"]').click();
    await see(page, /渠道 mock-openai 测试成功，模型 gpt-4o-mini，耗时 [\d.]+ 秒。/);
    await dialog.locator('tr[data-model="gpt-4o-mini"] [data-testid="response-time"]').waitFor();
    await screenshot(page, 'admin-03-model-test');
    expect(upstream.requests.some((r) => r.path === '/v1/chat/completions' && r.body?.model === 'gpt-4o-mini')).toBe(
      true,
    );
    await page.keyboard.press('Escape');
    // The list reloaded after the test: the row's response time is no longer "untested".
    await page.waitForFunction(
      `document.querySelector('tr[data-channel-id] [data-testid="response-time"]')?.getAttribute('data-colour') === 'green'`,
    );
  });

  it('edits the channel with validation messages, tags, tag mode, columns and id sort', async () => {
    const row = channelRow(page, 'mock-openai');
    await row.locator('[data-testid="channel-edit"]').click();
    await page.waitForURL(/\/channel\/edit\/\d+$/);
    const form = drawer(page);
    await form.locator('[data-testid="channel-name"]').fill('');
    await form.locator('[data-testid="channel-submit"]').click();
    await see(page, '请填写渠道名称和渠道密钥！');
    await form.locator('[data-testid="channel-name"]').fill('mock-edited');
    await form.getByText('清除所有模型').click();
    await form.locator('[data-testid="channel-submit"]').click();
    await see(page, '请至少选择一个模型！');
    await form.locator('[data-testid="channel-custom-models"]').fill('gpt-4o-mini, gpt-4o');
    await form.locator('[data-testid="channel-add-custom"]').click();
    await form.locator('[data-testid="channel-model_mapping"]').fill('{"gpt-4": "gpt-4o"}');
    await form.locator('[data-testid="channel-priority"]').fill('5');
    // The pass-through switch writes the channel setting's pass_through_body_enabled.
    await form.locator('[data-testid="channel-pass-through"]').check();
    expect(await form.locator('[data-testid="channel-setting"]').inputValue()).toContain(
      '"pass_through_body_enabled": true',
    );
    await form.locator('[data-testid="channel-submit"]').click();
    await see(page, '渠道更新成功');
    await channelRow(page, 'mock-edited').waitFor();
    const edited = (await rootApi.get('/api/channel/?p=1&page_size=10')).body.data.items[0];
    expect(edited).toMatchObject({ name: 'mock-edited', models: 'gpt-4o-mini,gpt-4o', priority: 5 });
    expect(JSON.parse(edited.model_mapping)).toEqual({ 'gpt-4': 'gpt-4o' });
    expect(JSON.parse(edited.setting)).toMatchObject({ pass_through_body_enabled: true });

    // Table weight: a non-negative integer, checked on blur (Escape first dismisses the last message).
    await page.keyboard.press('Escape');
    await channelRow(page, 'mock-edited').locator('[data-testid="weight-input"]').fill('-1');
    await channelRow(page, 'mock-edited').locator('[data-testid="weight-input"]').blur();
    await see(page, '权重必须是非负整数！');

    // Batch actions need a selection; the tag must not be empty.
    await page.locator('[data-testid="channel-batch-delete"]').click();
    await see(page, '请先选择要删除的通道！');
    const second = await rootApi.post('/api/channel/', {
      name: 'second',
      key: 'sk-second',
      base_url: upstream.url,
      models: 'gpt-4o',
    });
    expect(second.body).toMatchObject({ success: true });
    await page.reload();
    await channelRow(page, 'second').waitFor();
    for (const name of ['mock-edited', 'second']) {
      await channelRow(page, name).locator('input[type="checkbox"]').first().check();
    }
    await page.locator('[data-testid="channel-batch-tag"]').click();
    await page.locator('[data-testid="batch-tag-submit"]').click();
    await see(page, '标签不能为空！');
    await page.locator('[data-testid="batch-tag-input"]').fill('team');
    await page.locator('[data-testid="batch-tag-submit"]').click();
    await see(page, '已为 2 个渠道设置标签');

    // Tag mode: one aggregated row; tag priority and weight checks; the tag-edit drawer.
    await page.locator('[data-testid="channel-tag-mode"] input').check();
    const tagRow = page.locator('tr[data-tag="team"]');
    await tagRow.waitFor();
    expect(await page.locator('tr[data-channel-id]').count()).toBe(0);
    await tagRow.locator('[data-testid="tag-priority-input"]').fill('1.5');
    await tagRow.locator('[data-testid="tag-priority-input"]').blur();
    await see(page, '优先级必须是整数！');
    await page.keyboard.press('Escape');
    await tagRow.locator('[data-testid="tag-weight-input"]').fill('-2');
    await tagRow.locator('[data-testid="tag-weight-input"]').blur();
    await see(page, '权重必须是非负整数！');
    await tagRow.locator('[data-testid="tag-expand"]').click();
    await channelRow(page, 'second').waitFor();
    await screenshot(page, 'admin-04-channel-tag-mode');
    await tagRow.locator('[data-testid="tag-edit"]').click();
    const tagDrawer = page.locator('[data-testid="tag-edit-drawer"]');
    await tagDrawer.waitFor();
    await tagDrawer.locator('[data-testid="tag-submit"]').click();
    await see(page, '没有任何修改！');
    await tagDrawer.locator('[data-testid="tag-new_tag"]').fill('squad');
    await tagDrawer.locator('[data-testid="tag-submit"]').click();
    await see(page, '标签更新成功');
    await page.locator('tr[data-tag="squad"]').waitFor();
    expect(await localItem(page, 'tag-mode')).toBe('true');
    await page.locator('[data-testid="channel-tag-mode"] input').uncheck();
    await channelRow(page, 'second').waitFor();

    // Column settings and id sort are remembered across reloads.
    await page.locator('[data-testid="channel-columns"]').click();
    await page.locator('[data-testid="column-settings"] [data-column="balance"] input').uncheck();
    await page.locator('[data-testid="column-settings-save"]').click();
    await page.locator('[data-testid="channel-id-sort"] input').check();
    await page.reload();
    await channelRow(page, 'second').waitFor();
    expect(await page.locator('[data-testid="channel-table"] th').getByText('已用/剩余').count()).toBe(0);
    expect(JSON.parse((await localItem(page, 'channels-table-columns')) ?? '{}')).toMatchObject({ balance: false });
    expect(await localItem(page, 'id-sort')).toBe('true');
    expect(await page.locator('[data-testid="channel-id-sort"] input').isChecked()).toBe(true);
    // Newest first with id sort: "second" above the first channel.
    const names = await page.locator('[data-testid="channel-name-cell"]').allTextContents();
    expect(names.slice(0, 2)).toEqual(['second', 'mock-edited']);
    await page.locator('[data-testid="channel-columns"]').click();
    await page.locator('[data-testid="column-settings"] [data-column="balance"] input').check();
    await page.locator('[data-testid="column-settings-save"]').click();

    // Disable, copy and delete from the row (each asks first).
    await channelRow(page, 'second').locator('[data-testid="channel-toggle"]').click();
    await see(page, '渠道更新成功');
    await channelRow(page, 'second').locator('[data-testid="channel-more"]').click();
    await page.locator('[data-testid="channel-copy"]').click();
    await page.locator('[data-testid="confirm-ok"]').click();
    await see(page, '渠道复制成功');
    await channelRow(page, 'second_复制').waitFor();
    await channelRow(page, 'second_复制').locator('[data-testid="channel-more"]').click();
    await page.locator('[data-testid="channel-delete"]').click();
    await see(page, '确定要删除渠道 second_复制 吗？此操作不可逆');
    await page.locator('[data-testid="confirm-ok"]').click();
    await see(page, '渠道删除成功');
    await page.locator('[data-testid="channel-delete-disabled"]').click();
    await page.locator('[data-testid="confirm-ok"]').click();
    await see(page, '已删除 1 个禁用渠道');
    await page.locator('[data-testid="channel-fix"]').click();
    await page.locator('[data-testid="confirm-ok"]').click();
    await see(page, /已修复 \d+ 个渠道/);
  });

  it('marks a stored channel of a type no longer offered as unsupported, and deletes it', async () => {
    const created = await rootApi.post('/api/channel/', { name: 'legacy-palm', key: 'sk-l', models: 'gpt-4o' });
    const id = created.body.data.id as number;
    // PaLM (11) cannot be created any more; a row an older version stored is written directly.
    await server.gateway.store.db.updateTable('channels').set({ type: 11 }).where('id', '=', id).execute();
    await page.goto('/channel');
    const row = channelRow(page, 'legacy-palm');
    await row.locator('[data-testid="channel-type-unsupported-11"]').getByText('PaLM（不支持）').waitFor();
    // Nothing it cannot do is offered: no test, no balance refresh.
    expect(await row.locator('[data-testid="channel-test"]').isDisabled()).toBe(true);
    await row.locator('[data-testid="balance"]').hover();
    await see(page, '该渠道类型没有可查询的余额接口');
    await row.locator('[data-testid="channel-edit"]').click();
    await drawer(page).locator('[data-testid="channel-type-unsupported"]').waitFor();
    // Why, in the console's language (the registry says it in both).
    await see(page, 'Google 已停用该接口');
    await page.keyboard.press('Escape');
    expect((await rootApi.delete(`/api/channel/${id}`)).body.success).toBe(true);
  });

  it('offers a type’s `other` choices as a select (Dify’s app kind) and saves the one picked', async () => {
    const created = await rootApi.post('/api/channel/', {
      name: 'dify-app',
      type: 37,
      key: 'app-key',
      models: 'my-app',
      other: 'agent',
    });
    const id = created.body.data.id as number;
    await page.goto('/channel');
    await channelRow(page, 'dify-app').locator('[data-testid="channel-edit"]').click();
    const form = drawer(page);
    const kind = form.getByRole('combobox', { name: '应用类型' });
    await expect.poll(() => kind.textContent()).toBe('agent');
    await screenshot(page, 'admin-05-dify-app-kind');
    await kind.click();
    const options = page.locator('[role="listbox"] [role="option"]');
    expect(await options.allTextContents()).toEqual(['chat', 'agent', 'workflow']);
    await options.filter({ hasText: 'workflow' }).click();
    await form.locator('[data-testid="channel-submit"]').click();
    await expect.poll(async () => (await rootApi.get(`/api/channel/${id}`)).body.data.other).toBe('workflow');
    expect((await rootApi.delete(`/api/channel/${id}`)).body.success).toBe(true);
  });

  it('shows a Kubernetes-managed channel with a badge and read-only fields, and the gateway refuses edits', async () => {
    const created = await rootApi.post('/api/channel/', { name: 'managed', key: 'sk-m', models: 'gpt-4o' });
    const id = created.body.data.id as number;
    await server.gateway.store.db
      .updateTable('channels')
      .set({
        managed_by: 'tollgate-operator',
        managed_namespace: 'ai',
        managed_name: 'openai-main',
        managed_uid: 'u-1',
      })
      .where('id', '=', id)
      .execute();
    await page.goto('/channel');
    const row = channelRow(page, 'managed');
    await row.locator('[data-testid="managed-badge"]').getByText('K8s 管理：ai/openai-main').waitFor();
    await row.locator('[data-testid="channel-toggle"]').click();
    await see(page, /该记录由 Kubernetes 资源 Channel ai\/openai-main 管理/);
    await row.locator('[data-testid="channel-edit"]').click();
    const form = drawer(page);
    await form.locator('[data-testid="managed-notice"]').waitFor();
    expect(await form.locator('[data-testid="channel-name"]').isDisabled()).toBe(true);
    expect(await form.locator('[data-testid="channel-submit"]').isDisabled()).toBe(true);
    await screenshot(page, 'admin-05-managed-channel');
    const stored = await rootApi.get(`/api/channel/${id}`);
    expect(stored.body.data).toMatchObject({ name: 'managed', status: 1, managed_name: 'openai-main' });
    await page.keyboard.press('Escape');
  });

  it('creates redemption codes with the validation messages, copies, disables and deletes them', async () => {
    await page.goto('/redemption');
    await page.locator('[data-testid="redemption-page"]').waitFor();
    await page.locator('[data-testid="redemption-add"]').click();
    const form = page.locator('[data-testid="redemption-drawer"]');
    await form.locator('[data-testid="redemption-name"]').fill('x'.repeat(21));
    await form.locator('[data-testid="redemption-submit"]').click();
    await see(page, '兑换码名称长度必须在1-20之间');
    await form.locator('[data-testid="redemption-name"]').fill('promo');
    await form.locator('[data-testid="redemption-quota"]').fill('0');
    await form.locator('[data-testid="redemption-submit"]').click();
    await see(page, '兑换码额度必须是大于 0 的整数');
    await form.locator('[data-testid="redemption-quota"]').fill('500000');
    await form.locator('[data-testid="redemption-count"]').fill('101');
    await form.locator('[data-testid="redemption-submit"]').click();
    await see(page, '兑换码个数必须在 1 到 100 之间');
    await form.locator('[data-testid="redemption-count"]').fill('3');
    await form.locator('[data-testid="redemption-expiry"]').fill('2001-01-01T10:00');
    await form.locator('[data-testid="redemption-submit"]').click();
    await see(page, '过期时间不能早于当前时间');
    await form.locator('[data-testid="redemption-expiry"]').fill('');
    await form.locator('[data-testid="redemption-submit"]').click();
    await see(page, '兑换码创建成功');
    const created = page.locator('[data-testid="redemption-created"]');
    const keys = (await created.locator('[data-testid="redemption-created-keys"]').inputValue()).split('\n');
    expect(keys).toHaveLength(3);
    await created.locator('[data-testid="redemption-copy-all"]').click();
    await see(page, '已复制到剪贴板');
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(keys.join('\n'));
    await page.keyboard.press('Escape');
    await page.locator('[data-code-id]').nth(2).waitFor();
    expect(await page.locator('[data-code-id]').count()).toBe(3);

    const first = page.locator('[data-code-id]').first();
    await first.locator('[data-testid="redemption-disable"]').click();
    await see(page, '兑换码更新成功');
    await first.locator('[data-testid="redemption-enable"]').waitFor();
    await screenshot(page, 'admin-06-redemption');
    await first.locator('[data-testid="redemption-delete"]').click();
    await see(page, '确定要删除兑换码 promo 吗？');
    await page.locator('[data-testid="confirm-ok"]').click();
    await see(page, '兑换码已删除');
    await page.waitForFunction(`document.querySelectorAll('[data-code-id]').length === 2`);
    const list = await rootApi.get('/api/redemption/?p=1&page_size=10');
    expect(list.body.data.total).toBe(2);
  });

  it('runs user row actions, each after a confirmation, and adds and edits users', async () => {
    const registered = await new DashboardClient(server.url).post('/api/user/register', {
      username: 'bob',
      password: 'bob-password',
      password2: 'bob-password',
    });
    expect(registered.body).toMatchObject({ success: true });
    await page.goto('/user');
    await page.locator('[data-testid="user-page"]').waitFor();
    await page.getByPlaceholder('搜索用户的 ID、用户名、显示名称和邮箱').fill('bob');
    const bob = page.locator('[data-user="bob"]');
    await bob.waitFor();
    await page.waitForFunction(`document.querySelectorAll('[data-user]').length === 1`);

    const act = async (action: string, question: string, answer: 'ok' | 'cancel' = 'ok') => {
      await bob.locator(`[data-testid="user-${action}"]`).click();
      await see(page, question);
      await page.locator(`[data-testid="confirm-${answer}"]`).click();
    };
    await act('promote', '确定要将用户 bob 提升为管理员吗？', 'cancel');
    await bob.locator('[data-testid="user-promote"]').waitFor();
    await act('promote', '确定要将用户 bob 提升为管理员吗？');
    await bob.locator('[data-testid="user-demote"]').waitFor();
    await act('demote', '确定要将管理员 bob 降级为普通用户吗？');
    await bob.locator('[data-testid="user-promote"]').waitFor();
    await act('disable', '确定要禁用用户 bob 吗？');
    await bob.locator('[data-testid="user-enable"]').waitFor();
    await screenshot(page, 'admin-07-users');
    await act('enable', '确定要启用用户 bob 吗？');
    await bob.locator('[data-testid="user-disable"]').waitFor();
    await act('delete', '确定要注销用户 bob 吗？相当于删除用户，此操作不可逆');
    const live = async () =>
      (await rootApi.get('/api/user/search?keyword=bob')).body.data.items.filter(
        (u: { DeletedAt: string | null }) => !u.DeletedAt,
      );
    await expect.poll(live).toEqual([]);

    // Add user: username and password required.
    await page.locator('[data-testid="user-add"]').click();
    const add = page.locator('[data-testid="user-add-drawer"]');
    await add.locator('[data-testid="user-submit"]').click();
    await see(page, '用户名和密码不能为空！');
    await add.locator('[data-testid="user-username"]').fill('carol');
    await add.locator('[data-testid="user-password"]').fill('carol-password');
    await add.locator('[data-testid="user-submit"]').click();
    await see(page, '用户创建成功');

    // Edit: an integer quota; the add-quota dialog takes negative numbers; bindings read-only.
    const carol = (await rootApi.get('/api/user/search?keyword=carol')).body.data.items[0];
    await page.goto(`/user/edit/${carol.id}`);
    const edit = page.locator('[data-testid="user-edit-drawer"]');
    await edit.locator('[data-testid="user-quota"]').fill('12.5');
    await edit.locator('[data-testid="user-submit"]').click();
    await see(page, '额度必须是整数');
    await edit.locator('[data-testid="user-quota"]').fill('1000');
    await edit.locator('[data-testid="user-add-quota"]').click();
    await page.locator('[data-testid="user-add-quota-amount"]').fill('-300');
    await page.locator('[data-testid="user-add-quota-ok"]').click();
    expect(await edit.locator('[data-testid="user-quota"]').inputValue()).toBe('700');
    await edit.locator('[data-testid="user-display_name"]').fill('Carol C');
    // Rate limits: one rule per model ("*" first), whole numbers only.
    await edit.locator('[data-testid="rate-limit-add"]').click();
    expect(await edit.locator('[data-testid="rate-limit-model-0"]').inputValue()).toBe('*');
    await edit.locator('[data-testid="rate-limit-rpm-0"]').fill('30');
    await edit.locator('[data-testid="rate-limit-tpm-0"]').fill('1.5');
    await edit.locator('[data-testid="rate-limits-error"]').getByText('限制必须是不小于 0 的整数').waitFor();
    await edit.locator('[data-testid="user-submit"]').click();
    await see(page, '限制必须是不小于 0 的整数');
    await edit.locator('[data-testid="rate-limit-tpm-0"]').fill('20000');
    await edit.locator('[data-testid="rate-limit-add"]').click();
    await edit.locator('[data-testid="rate-limit-model-1"]').fill('gpt-4o');
    await edit.locator('[data-testid="rate-limit-rpm-1"]').fill('5');
    await screenshot(page, 'admin-08-user-edit');
    await edit.locator('[data-testid="user-submit"]').click();
    await see(page, '用户信息更新成功');
    await page.waitForURL((url) => url.pathname === '/user');
    const updated = await rootApi.get(`/api/user/${carol.id}`);
    expect(updated.body.data).toMatchObject({
      quota: 700,
      display_name: 'Carol C',
      rate_limits: { '*': { rpm: 30, tpm: 20000 }, 'gpt-4o': { rpm: 5 } },
    });
    // Shown again as rows when the drawer opens.
    await page.goto(`/user/edit/${carol.id}`);
    expect(await edit.locator('[data-testid="rate-limit-tpm-0"]').inputValue()).toBe('20000');
    expect(await edit.locator('[data-testid="rate-limit-model-1"]').inputValue()).toBe('gpt-4o');

    // A token's own rate limits, on the token form: refused until whole, then saved and shown again.
    await page.goto('/token/create');
    const form = page.locator('form');
    await form.locator('input[name="name"]').fill('limited-token');
    await form.locator('[data-testid="rate-limit-add"]').click();
    await form.locator('[data-testid="rate-limit-rpm-0"]').fill('x');
    await form.locator('button[type="submit"]').click();
    await see(page, '限制必须是不小于 0 的整数');
    await form.locator('[data-testid="rate-limit-rpm-0"]').fill('12');
    await form.locator('[data-testid="rate-limit-add"]').click();
    await form.locator('[data-testid="rate-limit-model-1"]').fill('gpt-4o-mini');
    await form.locator('[data-testid="rate-limit-tpm-1"]').fill('3000');
    await screenshot(page, 'admin-08-token-rate-limits');
    await form.locator('button[type="submit"]').click();
    await page.waitForURL((url) => url.pathname === '/token');
    const tokens = (await rootApi.get('/api/token/?p=1&size=100')).body.data.items as Array<Record<string, any>>;
    const limited = tokens.find((token) => token.name === 'limited-token')!;
    expect(limited.rate_limits).toEqual({ '*': { rpm: 12 }, 'gpt-4o-mini': { tpm: 3000 } });
    await page.goto(`/token/${limited.id}`);
    await expect.poll(() => page.locator('[data-testid="rate-limit-tpm-1"]').inputValue()).toBe('3000');
    await page.locator('[data-testid="rate-limit-rpm-0"]').fill('');
    await page.locator('form button[type="submit"]').click();
    await page.waitForURL((url) => url.pathname === '/token');
    await expect
      .poll(async () => (await rootApi.get(`/api/token/${limited.id}`)).body.data.rate_limits)
      .toEqual({ 'gpt-4o-mini': { tpm: 3000 } });
  });

  it('saves settings with one PUT per changed key and the spec’s messages', async () => {
    const puts: Array<{ key: string; value: string }> = [];
    const onRequest = (request: Request) => {
      if (request.method() === 'PUT' && new URL(request.url()).pathname === '/api/option/') {
        puts.push(request.postDataJSON() as { key: string; value: string });
      }
    };
    page.on('request', onRequest);
    try {
      await page.goto('/setting');
      const general = page.locator('[data-section="general"]');
      await general.waitFor();
      // The sensitive-word switches say what they do; off stops nothing but masks.
      const sensitive = page.locator('[data-section="sensitive"]');
      await sensitive.getByText('关闭：每个屏蔽词按字数替换为 * 后继续请求', { exact: false }).waitFor();
      await sensitive.getByText('不检查模型的输出', { exact: false }).waitFor();
      await sensitive.scrollIntoViewIfNeeded();
      await screenshot(page, 'admin-08b-settings-sensitive');
      await general.locator('[data-testid="save-general"]').click();
      await see(page, '你似乎并没有修改什么');
      expect(puts).toEqual([]);
      await general.locator('[data-option="RetryTimes"]').fill('3');
      await general.locator('[data-option="DisplayTokenStatEnabled"]').uncheck();
      await general.locator('[data-testid="save-general"]').click();
      await see(page, '保存成功');
      await page.waitForTimeout(200);
      expect(puts.map((put) => put.key).sort()).toEqual(['DisplayTokenStatEnabled', 'RetryTimes']);
      expect(puts.find((put) => put.key === 'RetryTimes')?.value).toBe('3');

      const chats = page.locator('[data-section="chats"]');
      await chats.locator('[data-option="Chats"]').fill('[{"a": ');
      await chats.locator('[data-option="Chats"]').blur();
      await see(page, '不是合法的 JSON 字符串');
      await chats.locator('[data-testid="save-chats"]').click();
      await see(page, '请检查输入');
      expect(puts).toHaveLength(2);
      await chats.locator('[data-option="Chats"]').fill('[]');

      // The visual pricing editor: duplicate names, price 0, non-numbers, batch needs a selection.
      await page.locator('[data-testid="ratio-tab-visual"]').click();
      const editor = page.locator('[data-testid="pricing-editor"]');
      await editor.locator('[data-testid="pricing-add"]').click();
      await page.locator('[data-testid="pricing-add-name"]').fill('gpt-4o');
      await page.locator('[data-testid="pricing-add-ok"]').click();
      await see(page, '模型名称已存在');
      await page.locator('[data-testid="pricing-add-name"]').fill('my-model');
      await page.locator('[data-testid="pricing-add-ok"]').click();
      const priceDialog = page.locator('[data-testid="pricing-edit-dialog"]');
      await priceDialog.getByText('按价格设置').click();
      await priceDialog.locator('[data-testid="price-inputPrice"]').fill('0');
      await priceDialog.locator('[data-testid="pricing-edit-apply"]').click();
      await see(page, '模型价格不能为0');
      await priceDialog.locator('[data-testid="price-inputPrice"]').fill('abc');
      await priceDialog.locator('[data-testid="pricing-edit-apply"]').click();
      await see(page, '请输入数字');
      await priceDialog.locator('[data-testid="price-inputPrice"]').fill('2');
      await priceDialog.locator('[data-testid="price-outputPrice"]').fill('8');
      await priceDialog.locator('[data-testid="pricing-edit-apply"]').click();
      await editor.locator('[data-testid="pricing-batch"]').click();
      await page.locator('[data-testid="pricing-batch-apply"]').click();
      await see(page, '请先选择需要批量设置的模型');
      await page.keyboard.press('Escape');
      await editor.locator('[data-testid="pricing-search"]').fill('my-model');
      await editor.locator('tr[data-model="my-model"]').getByText('1', { exact: true }).waitFor();
      await screenshot(page, 'admin-09-pricing-editor');
      puts.length = 0;
      await editor.locator('[data-testid="pricing-save"]').click();
      await see(page, '保存成功');
      await page.waitForTimeout(200);
      expect(puts.map((put) => put.key).sort()).toEqual(['CompletionRatio', 'ModelRatio']);
      const options = (await rootApi.get('/api/option/')).body.data as Array<{ key: string; value: string }>;
      const read = (key: string) => JSON.parse(options.find((o) => o.key === key)?.value ?? '{}');
      expect(read('ModelRatio')['my-model']).toBe(1);
      expect(read('CompletionRatio')['my-model']).toBe(4);

      // The completion a request without max_tokens reserves (issue 17): a JSON map, saved as it is.
      puts.length = 0;
      const quota = page.locator('[data-section="quota"]');
      await quota.getByText('未设 max_tokens 时预扣的补全 Token').first().waitFor();
      await quota.locator('[data-option="quota_setting.default_completion_tokens"]').fill('{"default": 1024}');
      await quota.locator('[data-testid="save-quota"]').click();
      await see(page, '保存成功');
      await page.waitForTimeout(200);
      expect(puts).toEqual([{ key: 'quota_setting.default_completion_tokens', value: '{"default": 1024}' }]);

      // Models tab: the thinking budget share stays within 0.1-1.
      puts.length = 0;
      await page.locator('[data-testid="tab-models"]').click();
      const gemini = page.locator('[data-section="gemini"]');
      await gemini.locator('[data-option="gemini.thinking_adapter_budget_tokens_percentage"]').fill('2');
      await gemini.locator('[data-testid="save-gemini"]').click();
      await see(page, '请检查输入');
      await see(page, '不能大于 1');
      expect(puts).toEqual([]);
      await screenshot(page, 'admin-10-settings-models');
      // Rate limit: the success count is at least 1.
      await page.locator('[data-testid="tab-ratelimit"]').click();
      const limit = page.locator('[data-section="rate_limit"]');
      await limit.locator('[data-option="ModelRequestRateLimitSuccessCount"]').fill('0');
      await limit.locator('[data-testid="save-rate_limit"]').click();
      await see(page, '不能小于 1');
      // Rate limit: requests and tokens per minute per group, checked by the gateway's option table.
      const groupLimits = page.locator('[data-section="rate_limit_groups"]');
      await groupLimits.getByText('分组速率限制（RPM/TPM）', { exact: true }).waitFor();
      await groupLimits.locator('[data-option="rate_limit_setting.groups"]').fill('{"vip": {"*": {"rpn": 60}}}');
      await groupLimits.locator('[data-testid="save-rate_limit_groups"]').click();
      await see(page, /只含 rpm, tpm 的对象/);
      const groups = '{"vip": {"*": {"rpm": 60, "tpm": 100000}}}';
      await groupLimits.locator('[data-option="rate_limit_setting.groups"]').fill(groups);
      await groupLimits.locator('[data-testid="save-rate_limit_groups"]').click();
      await see(page, '保存成功');
      await screenshot(page, 'admin-10-settings-rate-limits');
      await expect
        .poll(
          async () =>
            (await rootApi.get('/api/option/')).body.data.find((o: any) => o.key === 'rate_limit_setting.groups')
              ?.value,
        )
        .toBe(groups);
      expect((await rootApi.put('/api/option/', { key: 'rate_limit_setting.groups', value: '{}' })).body.success).toBe(
        true,
      );
      puts.length = 0;
      // System: turning password sign-in off asks first; cancelling keeps it on.
      await page.locator('[data-testid="tab-system"]').click();
      const login = page.locator('[data-section="login"]');
      await login.locator('[data-option="PasswordLoginEnabled"]').click();
      await see(page, '关闭密码登录后，用户只能通过第三方账户登录，确定要关闭吗？');
      await page.locator('[data-testid="confirm-cancel"]').click();
      expect(await login.locator('[data-option="PasswordLoginEnabled"]').isChecked()).toBe(true);
      expect(puts).toEqual([]);
      // System: the outbound request guard (fetch_setting.*), on by default, its rules said in words.
      const guard = page.locator('[data-section="fetch"]');
      await guard.getByText('出站请求防护（SSRF）', { exact: true }).waitFor();
      expect(await guard.locator('[data-option="fetch_setting.enable_ssrf_protection"]').isChecked()).toBe(true);
      await guard.getByText('允许上述请求访问回环、内网、链路本地、CGNAT 等内部地址', { exact: false }).waitFor();
      await guard.locator('[data-option="fetch_setting.allow_private_ip"]').check();
      await guard.locator('[data-option="fetch_setting.ip_list"]').fill('["10.0.0.0/8"]');
      await guard.locator('[data-testid="save-fetch"]').click();
      await see(page, '保存成功');
      await page.waitForTimeout(200);
      expect(puts.sort((x, y) => x.key.localeCompare(y.key))).toEqual([
        { key: 'fetch_setting.allow_private_ip', value: 'true' },
        { key: 'fetch_setting.ip_list', value: '["10.0.0.0/8"]' },
      ]);
      await guard.scrollIntoViewIfNeeded();
      await screenshot(page, 'admin-12-settings-fetch');
      for (const [key, value] of [
        ['fetch_setting.allow_private_ip', 'false'],
        ['fetch_setting.ip_list', '[]'],
      ]) {
        expect((await rootApi.put('/api/option/', { key, value })).body.success).toBe(true);
      }
    } finally {
      page.off('request', onRequest);
    }
  });

  it('edits channel affinity (the gateway checks the rules), shows and clears its cache, and makes auto tokens', async () => {
    await page.goto('/setting');
    const affinity = page.locator('[data-section="channel_affinity"]');
    await affinity.getByText('渠道亲和性', { exact: true }).waitFor();
    await affinity.locator('[data-testid="affinity-total"]').waitFor();
    await affinity.scrollIntoViewIfNeeded();
    await screenshot(page, 'admin-13-settings-channel-affinity');
    // A rule the gateway cannot honour is refused with its message; nothing is saved.
    const rules = affinity.locator('[data-option="channel_affinity_setting.rules"]');
    const saved = await rules.inputValue();
    await rules.fill('[{"name": "x", "model_pattern": "*", "key_source": "cookie:session"}]');
    await affinity.locator('[data-testid="save-channel_affinity"]').click();
    await see(page, /键来源「cookie:session」必须是 body:<路径>、header:<名称> 或 claude:cache_prefix/);
    expect(
      (await rootApi.get('/api/option/')).body.data.find(
        (o: { key: string }) => o.key === 'channel_affinity_setting.rules',
      ).value,
    ).toBe(saved);
    await rules.fill(saved);
    // Clearing asks first, then says how many keys were forgotten.
    await affinity.locator('[data-testid="affinity-clear"]').click();
    await see(page, '确定忘记所有已记住的键吗？之后的请求将重新分散到各渠道。');
    await page.locator('[data-testid="confirm-ok"]').click();
    await see(page, '已清除 0 个键');

    // DefaultUseAutoGroup: the token form starts on auto and offers cross-group retry there.
    expect((await rootApi.put('/api/option/', { key: 'DefaultUseAutoGroup', value: 'true' })).body.success).toBe(true);
    try {
      await page.goto('/token/create');
      await page.reload();
      const form = page.locator('form');
      await form.locator('input[name="name"]').fill('auto-token');
      await form.locator('input[name="cross_group_retry"]').check();
      await form.locator('button[type="submit"]').click();
      await page.waitForURL((url) => url.pathname === '/token');
      const tokens = (await rootApi.get('/api/token/?p=1&size=100')).body.data.items as Array<Record<string, any>>;
      expect(tokens.find((token) => token.name === 'auto-token')).toMatchObject({
        group: 'auto',
        cross_group_retry: true,
      });
    } finally {
      await rootApi.put('/api/option/', { key: 'DefaultUseAutoGroup', value: 'false' });
    }
  });

  it('prices a model by a tiered expression, pointing at the position of a mistake as it is typed', async () => {
    const puts: Array<{ key: string; value: string }> = [];
    const onRequest = (request: Request) => {
      if (request.method() === 'PUT' && new URL(request.url()).pathname === '/api/option/') {
        puts.push(request.postDataJSON() as { key: string; value: string });
      }
    };
    page.on('request', onRequest);
    const expression = 'len <= 200000 ? tier("standard", p * 2.5 + c * 10) : tier("long", p * 5 + c * 15)';
    try {
      await page.goto('/setting');
      await page.locator('[data-testid="ratio-tab-tiered"]').click();
      const editor = page.locator('[data-testid="tiered-editor"]');
      await editor.locator('[data-testid="tiered-add"]').click();
      const row = editor.locator('[data-testid="tiered-row"]').last();
      const text = row.locator('textarea[data-testid="tiered-expression"]').first();
      await row.locator('[data-testid="tiered-model"]').fill('gpt-4o');
      await text.fill('p * 2 + q');
      await see(page, '第 9 个字符：未知的名称 "q"');
      expect(await editor.locator('[data-testid="tiered-save"]').isDisabled()).toBe(true);
      await editor.locator('[data-testid="tiered-timezone"]').fill('Mars/Base');
      await see(page, '不是有效时区，请使用 IANA 时区名，例如 UTC 或 Asia/Shanghai');
      await editor.locator('[data-testid="tiered-timezone"]').fill('Asia/Shanghai');
      await text.fill(expression);
      await screenshot(page, 'admin-13-tiered-pricing');
      await editor.locator('[data-testid="tiered-save"]').click();
      await see(page, '保存成功');
      await page.waitForTimeout(200);
      expect(puts.map((put) => put.key)).toEqual([
        'billing_setting.billing_expr',
        'billing_setting.billing_mode',
        'billing_setting.timezone',
      ]);
      const options = (await rootApi.get('/api/option/')).body.data as Array<{ key: string; value: string }>;
      const read = (key: string) => options.find((o) => o.key === key)?.value ?? '';
      expect(JSON.parse(read('billing_setting.billing_mode'))).toEqual({ 'gpt-4o': 'tiered_expr' });
      expect(JSON.parse(read('billing_setting.billing_expr'))).toEqual({ 'gpt-4o': expression });
      expect(read('billing_setting.timezone')).toBe('Asia/Shanghai');

      // The pricing page shows the model by its tiers and expression, not by a ratio.
      const listed = (await rootApi.get('/api/pricing')).body.data as Array<Record<string, unknown>>;
      expect(listed.find((item) => item.model_name === 'gpt-4o')).toMatchObject({ billing_mode: 'tiered_expr' });
      await page.goto('/pricing');
      const priced = page.locator('[data-testid="pricing-row"][data-model="gpt-4o"]');
      await priced.getByText('阶梯计费（表达式）').waitFor();
      await priced.locator('[data-testid="pricing-tiered"]').getByText('档位：standard, long').waitFor();
      await priced.locator('[data-testid="pricing-tiered"]').getByText(expression).waitFor();
      await screenshot(page, 'admin-14-pricing-tiered');
    } finally {
      page.off('request', onRequest);
      for (const [key, value] of [
        ['billing_setting.billing_mode', '{}'],
        ['billing_setting.billing_expr', '{}'],
        ['billing_setting.timezone', 'UTC'],
      ]) {
        expect((await rootApi.put('/api/option/', { key, value })).body.success).toBe(true);
      }
    }
  });

  it('denies every administrators’ page to a normal user', async () => {
    const registered = await new DashboardClient(server.url).post('/api/user/register', {
      username: ALICE.username,
      password: ALICE.password,
      password2: ALICE.password,
    });
    expect(registered.body).toMatchObject({ success: true });
    const alice = await newPage();
    await signInByApi(alice, server.url, ALICE);
    for (const path of [
      '/channel',
      '/channel/add',
      '/channel/edit/1',
      '/redemption',
      '/user',
      '/user/edit',
      '/user/edit/1',
      '/setting',
    ]) {
      await alice.goto(path);
      await alice.getByText('拒绝访问').first().waitFor();
      expect(
        await alice
          .locator('[data-testid="channel-page"], [data-testid="settings-page"], [data-testid="user-page"]')
          .count(),
        path,
      ).toBe(0);
    }
    await screenshot(alice, 'admin-11-access-denied');
  });

  it('renders every screen in zh and en, light and dark, without console errors', async () => {
    const screens = [
      ['channel', '/channel', '[data-testid="channel-table"]'],
      ['channel-add', '/channel/add', '[data-testid="channel-drawer"] [data-testid="channel-name"]'],
      ['redemption', '/redemption?filter=%7B%7D', '[data-code-id]'],
      ['user', '/user?filter=%7B%7D', '[data-testid="user-name-cell"]'],
      ['setting', '/setting', '[data-section="general"]'],
    ] as const;
    for (const language of ['zh', 'en']) {
      for (const theme of ['light', 'dark']) {
        await page.evaluate(
          `localStorage.setItem('i18nextLng', '${language}'); localStorage.setItem('theme-mode', '${theme}')`,
        );
        for (const [name, path, ready] of screens) {
          await page.goto(path);
          await page
            .locator(ready)
            .first()
            .waitFor()
            .catch(async (error) => {
              await screenshot(page, `admin-failed-${name}`);
              throw error;
            });
          await screenshot(page, `admin-screen-${name}-${language}-${theme}`);
        }
      }
    }
    await page.goto('/channel');
    await page.getByText('Add channel').waitFor();
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
