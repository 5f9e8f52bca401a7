import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

// The options that shape the console (issue 17, "no inert switch"), set through /api/option/ and seen in a
// real browser: top-bar entries (HeaderNavModules, pricing behind a sign-in), side-menu entries
// (SidebarModulesAdmin, their pages closed to users), the dashboard's API addresses, announcements and FAQ
// (console_setting.*), user text shown as text; then the settings' console tab changing them back.

const ROOT: Credentials = { username: 'root', password: 'root-password-1' };
const ALICE: Credentials = { username: 'alice', password: 'alice-password' };
/** Markdown with HTML an attacker would hope the dashboard runs. */
const HOSTILE = '**Maintenance** tonight <img src=x onerror="window.__owned=1"><script>window.__owned=2</script>';

let server: ConsoleGateway;
let browser: Browser;
let root: DashboardClient;
const contexts: BrowserContext[] = [];

async function setOption(key: string, value: unknown) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  expect((await root.put('/api/option/', { key, value: text })).body, key).toMatchObject({ success: true });
}

async function newPage(user?: Credentials): Promise<{ page: Page; errors: string[] }> {
  const opened = await openPage(browser, server.url);
  contexts.push(opened.context);
  if (user) await signInByApi(opened.page, server.url, user);
  return opened;
}

/** An attribute of every element the locator finds, in order. */
async function attributes(page: Page, selector: string, name: string): Promise<Array<string | null>> {
  const found = page.locator(selector);
  const count = await found.count();
  return Promise.all(Array.from({ length: count }, (_, index) => found.nth(index).getAttribute(name)));
}
const navKeys = (page: Page) => attributes(page, '[data-testid="top-bar"] [data-nav]', 'data-nav');
const menuLinks = (page: Page) => attributes(page, '[data-testid="side-menu"] a', 'href');

beforeAll(async () => {
  const limits = { GLOBAL_API_RATE_LIMIT_ENABLE: 'false', CRITICAL_RATE_LIMIT_ENABLE: 'false' };
  [server, browser] = await Promise.all([startConsoleGateway(limits), launchBrowser()]);
  root = await setupRoot(server.url, ROOT.password);
  const registered = await new DashboardClient(server.url).post('/api/user/register', {
    username: ALICE.username,
    password: ALICE.password,
    password2: ALICE.password,
  });
  expect(registered.body).toMatchObject({ success: true });

  await setOption('general_setting.docs_link', 'https://docs.example.com');
  await setOption('HeaderNavModules', {
    home: true,
    console: true,
    pricing: { enabled: true, requireAuth: true },
    docs: false,
    about: false,
  });
  await setOption('SidebarModulesAdmin', { console: { log: false }, personal: { topup: false } });
  await setOption('console_setting.api_info', [
    { id: 1, url: 'https://api.example.com', route: 'Main line', description: 'Closest to you', color: 'green' },
  ]);
  await setOption('console_setting.announcements', [
    { id: 1, content: 'Older news', publishDate: '2026-01-01T08:00:00Z', type: 'default' },
    { id: 2, content: HOSTILE, publishDate: '2026-11-20T08:00:00Z', type: 'warning', extra: 'Back at *dawn*' },
  ]);
  await setOption('console_setting.faq', [{ id: 1, question: 'How do I get a key?', answer: 'Open **API tokens**.' }]);
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => {});
  await browser?.close();
  await server?.stop();
});

describe('console layout options in the browser', () => {
  it('shows a visitor only the top-bar entries turned on, and asks for a sign-in before pricing', async () => {
    const { page, errors } = await newPage();
    await page.goto('/about');
    await page.locator('[data-testid="top-bar"] [data-nav="home"]').waitFor();
    expect(await navKeys(page)).toEqual(['home', 'console', 'pricing']);
    expect(await page.locator('[data-nav="pricing"]').getAttribute('href')).toBe('/login');
    await page.goto('/pricing');
    await page.waitForURL((url) => url.pathname === '/login');
    expect(errors).toEqual([]);
  });

  it("hides a user's turned-off menu entries, closes their pages, and fills the dashboard safely", async () => {
    const { page, errors } = await newPage(ALICE);
    await page.goto('/detail');
    await page.locator('[data-testid="panel-api-info"]').waitFor();
    const links = await menuLinks(page);
    expect(links).toEqual(expect.arrayContaining(['/detail', '/token', '/personal']));
    expect(links).not.toContain('/log');
    expect(links).not.toContain('/topup');
    expect(await navKeys(page)).toEqual(['home', 'console', 'pricing']);
    expect(await page.locator('[data-nav="pricing"]').getAttribute('href')).toBe('/pricing');

    const apiInfo = page.locator('[data-testid="panel-api-info"]');
    expect(await apiInfo.innerText()).toContain('https://api.example.com');
    expect(await apiInfo.locator('[data-api-route="Main line"]').count()).toBe(1);

    // Newest first; Markdown rendered, the HTML in it shown as text and never run.
    const announcements = page.locator('[data-testid="panel-announcements"]');
    const first = announcements.locator('[data-announcement="0"]');
    expect(await first.locator('strong').innerText()).toBe('Maintenance');
    expect(await first.innerText()).toContain('<script>window.__owned=2</script>');
    expect(await first.locator('em').innerText()).toBe('dawn');
    expect(await announcements.locator('[data-announcement="1"]').innerText()).toContain('Older news');
    expect(await announcements.locator('script, img').count()).toBe(0);
    expect(await page.evaluate('window.__owned')).toBeUndefined();

    const faq = page.locator('[data-testid="panel-faq"]');
    await faq.getByText('How do I get a key?').click();
    await expect.poll(() => faq.locator('strong').innerText()).toBe('API tokens');
    await screenshot(page, 'console-modules-dashboard');

    await page.goto('/log');
    await page.locator('[data-testid="module-off"]').waitFor();
    await page.goto('/topup');
    await page.locator('[data-testid="module-off"]').waitFor();
    await page.goto('/token');
    await page.locator('[data-testid="module-off"]').waitFor({ state: 'detached' });
    expect(errors).toEqual([]);
  });

  it('keeps turned-off pages open to the super administrator, who turns entries back on in the settings', async () => {
    const { page, errors } = await newPage(ROOT);
    await page.goto('/log');
    await page.locator('[data-testid="log-page"]').waitFor();
    expect(await page.locator('[data-testid="module-off"]').count()).toBe(0);

    // In English, for screenshots that read without Chinese fonts.
    await page.evaluate(`localStorage.setItem('i18nextLng', 'en')`);
    await page.goto('/setting?tab=console');
    const header = page.locator('[data-section="header_nav"]');
    await header.waitFor();
    await screenshot(page, 'console-modules-settings-nav');
    expect(await header.locator('[data-module="header.about"]').isChecked()).toBe(false);
    expect(await header.locator('[data-module="header.pricing.requireAuth"]').isChecked()).toBe(true);
    await header.locator('[data-module="header.about"]').check();
    await header.locator('[data-module="header.pricing.requireAuth"]').uncheck();
    await header.locator('[data-testid="save-header_nav"]').click();
    await expect.poll(() => navKeys(page)).toEqual(['home', 'console', 'pricing', 'about']);
    const stored = (await root.get('/api/option/')).body.data as Array<{ key: string; value: string }>;
    const nav = JSON.parse(stored.find((o) => o.key === 'HeaderNavModules')?.value ?? '{}');
    expect(nav).toMatchObject({ about: true, docs: false, pricing: { enabled: true, requireAuth: false } });

    const sidebar = page.locator('[data-section="sidebar"]');
    await sidebar.locator('[data-module="sidebar.console.log"]').check();
    await sidebar.locator('[data-testid="save-sidebar"]').click();
    await expect.poll(() => menuLinks(page)).toContain('/log');

    // A FAQ entry is checked before it is saved: an empty answer is refused, a filled one saved.
    const faq = page.locator('[data-section="faq"]');
    await faq.locator('[data-testid="add-faq"]').click();
    const added = faq.locator('[data-entry="1"]');
    await added.locator('[data-field="question"]').fill('Which models?');
    await faq.locator('[data-testid="save-faq"]').click();
    await added.locator('.Mui-error').first().waitFor();
    await added.locator('[data-field="answer"]').fill('See *Pricing*.');
    await faq.locator('[data-testid="save-faq"]').click();
    await expect
      .poll(async () => {
        const options = (await root.get('/api/option/')).body.data as Array<{ key: string; value: string }>;
        return JSON.parse(options.find((o) => o.key === 'console_setting.faq')?.value ?? '[]');
      })
      .toEqual([
        { id: 1, question: 'How do I get a key?', answer: 'Open **API tokens**.' },
        { id: 2, question: 'Which models?', answer: 'See *Pricing*.' },
      ]);
    await screenshot(page, 'console-modules-settings');
    expect(errors).toEqual([]);
  });
});
