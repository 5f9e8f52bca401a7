import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addQuotaData } from '../../gateway/src/store/repositories/quota-data.ts';
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

// Issue 19 in the browser: the wallet's top-up history, the administrators' top-up orders with manual
// completion, prefill groups (managed, then filling a channel's models), and the dashboard's consumption by
// user and model flow; no console errors on any of these pages.

const ROOT: Credentials = { username: 'root', password: 'root-password-1' };
const ALICE: Credentials = { username: 'alice', password: 'alice-password' };

let server: ConsoleGateway;
let browser: Browser;
let root: DashboardClient;
let alice: DashboardClient;
let tradeNo = '';
const contexts: BrowserContext[] = [];

async function signedInPage(user: Credentials) {
  const opened = await openPage(browser, server.url);
  contexts.push(opened.context);
  const consoleErrors: string[] = [];
  opened.page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`${opened.page.url()}: ${message.text()}`);
  });
  await signInByApi(opened.page, server.url, user);
  return { ...opened, consoleErrors };
}

beforeAll(async () => {
  const limits = { GLOBAL_API_RATE_LIMIT_ENABLE: 'false', CRITICAL_RATE_LIMIT_ENABLE: 'false' };
  [server, browser] = await Promise.all([startConsoleGateway(limits), launchBrowser()]);
  root = await setupRoot(server.url, ROOT.password);
  for (const [key, value] of [
    ['PayAddress', 'https://pay.example.test/'],
    ['EpayId', '1001'],
    ['EpayKey', 'merchant-key'],
    ['DataExportEnabled', 'true'],
    ['payment_setting.amount_options', '[5, 20]'],
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
  const order = await alice.post('/api/user/pay', { amount: 5, payment_method: 'alipay' });
  expect(order.body).toMatchObject({ success: true });
  tradeNo = order.body.data.out_trade_no;

  // One consumed request of alice's an hour ago, in the log and in the hourly data.
  const db = server.gateway.store.db;
  const at = Math.floor(Date.now() / 1000) - 3600;
  await db
    .insertInto('logs')
    .values({
      user_id: alice.userId!,
      username: 'alice',
      type: 2,
      created_at: at,
      model_name: 'flow-model',
      group: 'default',
      quota: 4321,
      prompt_tokens: 11,
      completion_tokens: 22,
    })
    .execute();
  await addQuotaData(db, {
    userId: alice.userId!,
    username: 'alice',
    modelName: 'flow-model',
    at,
    quota: 4321,
    tokens: 33,
  });
}, 120_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await server?.stop();
});

describe('wallet history and top-up orders', () => {
  it('shows the user their pending order, and lets an administrator complete it once', async () => {
    const user = await signedInPage(ALICE);
    await user.page.goto('/topup');
    const row = user.page.getByTestId(`topup-order-${tradeNo}`);
    await row.waitFor({ timeout: 30_000 });
    expect(await row.getByTestId('topup-order-status').textContent()).toBe('待支付');
    // The administrator's amount buttons fill the amount.
    await user.page.getByTestId('topup-amount-options').getByText('20', { exact: true }).click();
    expect(await user.page.getByTestId('topup-amount').inputValue()).toBe('20');
    await screenshot(user.page, 'i19-wallet-history');

    const before = (await alice.get('/api/user/self')).body.data.quota as number;
    const admin = await signedInPage(ROOT);
    await admin.page.goto('/topup/orders');
    const adminRow = admin.page.getByTestId(`topup-order-${tradeNo}`);
    await adminRow.waitFor({ timeout: 30_000 });
    await adminRow.getByRole('button', { name: '补单' }).click();
    await admin.page.getByRole('dialog').getByRole('button', { name: '补单' }).click();
    await expect
      .poll(async () => adminRow.getByTestId('topup-order-status').textContent(), { timeout: 30_000 })
      .toBe('成功');
    expect(await adminRow.getByRole('button', { name: '补单' }).count()).toBe(0);
    await screenshot(admin.page, 'i19-topup-orders');
    expect((await alice.get('/api/user/self')).body.data.quota).toBe(before + 5 * 500_000);

    await user.page.reload();
    await expect
      .poll(
        async () => user.page.getByTestId(`topup-order-${tradeNo}`).getByTestId('topup-order-status').textContent(),
        {
          timeout: 30_000,
        },
      )
      .toBe('成功');
    // The administrators' pages by their address: access denied for a user.
    for (const path of ['/topup/orders', '/prefill_group']) {
      await user.page.goto(path);
      await user.page.getByText('拒绝访问').first().waitFor();
      expect(await user.page.getByTestId('topup-history').count(), path).toBe(0);
    }
    expect([...user.errors, ...user.consoleErrors, ...admin.errors, ...admin.consoleErrors]).toEqual([]);
  }, 120_000);
});

describe('prefill groups', () => {
  it("are created on their page and fill a new channel's models", async () => {
    const admin = await signedInPage(ROOT);
    await admin.page.goto('/prefill_group');
    await admin.page.getByTestId('prefill-add').click();
    await admin.page.getByTestId('prefill-name').fill('openai-chat');
    await admin.page.getByTestId('prefill-items').fill('gpt-4o\ngpt-4o-mini');
    await admin.page.getByTestId('prefill-save').click();
    const row = admin.page.getByTestId('prefill-row-openai-chat');
    await row.waitFor({ timeout: 30_000 });
    expect(await row.textContent()).toContain('gpt-4o, gpt-4o-mini');
    await screenshot(admin.page, 'i19-prefill-groups');
    expect((await root.get('/api/prefill_group?type=model')).body.data).toMatchObject([
      { name: 'openai-chat', items: ['gpt-4o', 'gpt-4o-mini'] },
    ]);

    await admin.page.goto('/channel/add');
    const picker = admin.page.getByRole('combobox', { name: '从预填组填充模型' });
    await picker.waitFor({ timeout: 30_000 });
    await picker.click();
    await admin.page.getByRole('option', { name: 'openai-chat' }).click();
    const chips = admin.page.locator('.MuiAutocomplete-root .MuiChip-label');
    await expect
      .poll(async () => (await chips.allTextContents()).sort(), { timeout: 30_000 })
      .toEqual(expect.arrayContaining(['gpt-4o', 'gpt-4o-mini']));
    expect([...admin.errors, ...admin.consoleErrors]).toEqual([]);
  }, 120_000);
});

describe('dashboard', () => {
  it('shows administrators consumption by user and the model flow, and a user their own flow', async () => {
    const admin = await signedInPage(ROOT);
    await admin.page.goto('/detail');
    const byUser = admin.page.getByTestId('by-user-alice');
    await byUser.waitFor({ timeout: 30_000 });
    expect(await byUser.textContent()).toContain('alice');
    const flow = admin.page.getByTestId('dashboard-flow').getByTestId('flow-row');
    await flow.first().waitFor({ timeout: 30_000 });
    expect(await flow.first().textContent()).toContain('flow-model');
    await screenshot(admin.page, 'i19-dashboard-admin');

    const user = await signedInPage(ALICE);
    await user.page.goto('/detail');
    const own = user.page.getByTestId('dashboard-flow').getByTestId('flow-row');
    await own.first().waitFor({ timeout: 30_000 });
    expect(await own.count()).toBe(1);
    expect(await own.first().textContent()).toContain('flow-model');
    expect(await user.page.getByTestId('dashboard-by-user').count()).toBe(0);
    expect([...admin.errors, ...admin.consoleErrors, ...user.errors, ...user.consoleErrors]).toEqual([]);
  }, 120_000);
});
