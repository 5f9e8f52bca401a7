import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient } from '../support/client.ts';
import { type SmtpInbox, startSmtpInbox } from '../support/smtp.ts';
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

// The account pages of the console in a real browser against a real gateway (spec doc 1 §2-§5, §8; doc 2
// wallet and password reset): setup, home, about, login (human check, third-party buttons), registration
// with a mailed code and an invitation, password reset by mail, the OAuth callback (a fake GitHub), personal
// settings and the wallet. Every page is screenshot in zh and en, light and dark; console errors fail a test
// unless they are the HTTP failures the test provokes.

const ROOT: Credentials = { username: 'root', password: 'root-password-1' };
const BOB = { username: 'bob', password: 'bob-password-1', email: 'bob@example.test' };
const ROOT_EMAIL = 'root@example.test';
const QUOTA_FOR_INVITER = 1_000_000;

// ---------------------------------------------------------------------------------------------
// A fake GitHub (token and user endpoints) and Turnstile verifier, on one loopback server
// ---------------------------------------------------------------------------------------------

interface GithubAccount {
  id: number;
  login: string;
}
const githubCodes = new Map<string, GithubAccount>();
const githubTokens = new Map<string, GithubAccount>();
/** Who the next GitHub authorization signs in as. */
let githubAccount: GithubAccount = { id: 7001, login: 'octo' };
const TURNSTILE_TOKEN = 'turnstile-pass-token';

async function startFakeProviders(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
        const input = JSON.parse(body) as { code?: string };
        const account = input.code ? githubCodes.get(input.code) : undefined;
        if (!account) return json(200, { error: 'bad_verification_code' });
        githubCodes.delete(input.code!);
        const token = `gho_${randomBytes(8).toString('hex')}`;
        githubTokens.set(token, account);
        return json(200, { access_token: token, token_type: 'bearer', scope: '' });
      }
      if (req.method === 'GET' && url.pathname === '/api/user') {
        const account = githubTokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
        if (!account) return json(401, { message: 'Bad credentials' });
        return json(200, { id: account.id, login: account.login, name: account.login, email: null });
      }
      if (req.method === 'POST' && url.pathname === '/siteverify') {
        return json(200, { success: new URLSearchParams(body).get('response') === TURNSTILE_TOKEN });
      }
      json(404, {});
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Turnstile's script as the page gets it here: a widget that answers when the test says so. */
const FAKE_TURNSTILE = `window.turnstile = {
  render(element, options) {
    element.textContent = 'human check';
    window.__turnstilePass = () => options.callback(${JSON.stringify(TURNSTILE_TOKEN)});
    return 'widget-1';
  },
  reset() {},
  remove() {},
};`;

// ---------------------------------------------------------------------------------------------
// Gateway, browser, pages
// ---------------------------------------------------------------------------------------------

let server: ConsoleGateway;
let browser: Browser;
let smtp: SmtpInbox;
let fakes: { url: string; close(): Promise<void> };
let root: DashboardClient;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [smtp, fakes, browser] = await Promise.all([startSmtpInbox(), startFakeProviders(), launchBrowser()]);
  server = await startConsoleGateway({
    // Sign-in, registration, codes and OAuth all count against the per-IP limit; every page here is 127.0.0.1.
    CRITICAL_RATE_LIMIT: '100000',
    // Four screenshots a screen load the status and the page's data again each time.
    GLOBAL_API_RATE_LIMIT: '100000',
    GITHUB_OAUTH_URL: fakes.url,
    GITHUB_API_URL: `${fakes.url}/api`,
    TURNSTILE_VERIFY_URL: `${fakes.url}/siteverify`,
  });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await Promise.all([smtp?.close(), fakes?.close()]);
});

interface TestPage {
  page: Page;
  context: BrowserContext;
  /** Page errors and console errors, each with the address it came from. */
  errors: string[];
}

/**
 * A fresh context: clipboard allowed, the external scripts (Turnstile, Telegram) served locally, GitHub's
 * authorization page answering at once with a code for `githubAccount`; console errors are collected.
 */
async function newPage(): Promise<TestPage> {
  const { context, page, errors } = await openPage(browser, server.url);
  contexts.push(context);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  await context.route('https://challenges.cloudflare.com/**', (route) =>
    route.fulfill({ contentType: 'text/javascript', body: FAKE_TURNSTILE }),
  );
  await context.route('https://telegram.org/**', (route) =>
    route.fulfill({ contentType: 'text/javascript', body: '/* Telegram widget */' }),
  );
  await context.route('https://github.com/login/oauth/authorize**', (route) => {
    const state = new URL(route.request().url()).searchParams.get('state') ?? '';
    const code = randomBytes(8).toString('hex');
    githubCodes.set(code, githubAccount);
    const back = `${server.url}/oauth/github?code=${code}&state=${encodeURIComponent(state)}`;
    return route.fulfill({
      contentType: 'text/html',
      body: `<script>location.replace(${JSON.stringify(back)})</script>`,
    });
  });
  // Screenshots show settled screens: no transitions or animations half-way (theme and language switches).
  await context.addInitScript(`document.addEventListener('DOMContentLoaded', () => {
    if (!document.head) return;
    const style = document.createElement('style');
    style.textContent = '*, *::before, *::after { transition-duration: 0s !important; transition-delay: 0s !important; animation-duration: 0s !important; animation-delay: 0s !important; }';
    document.head.appendChild(style);
  });`);
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
  });
  return { context, page, errors };
}

/**
 * No page or console errors, except failed calls with the HTTP statuses a test provokes on purpose
 * (a wrong password answers 401, a used code 400, …): the browser logs those as console errors.
 */
function expectNoErrors(errors: string[], allowedStatuses: number[] = []) {
  const unexpected = errors.filter((error) => {
    const status = error.match(/the server responded with a status of (\d{3})/)?.[1];
    return !(status && allowedStatuses.includes(Number(status)));
  });
  expect(unexpected, unexpected.join('\n')).toEqual([]);
}

/** Switches the interface language with the top bar's menu, as a user would (no reload). */
async function chooseLanguage(page: Page, language: 'zh' | 'en') {
  await byTestId(page, 'language-menu').click();
  await page.locator(`[data-locale="${language}"]`).click();
  await page.locator(`[data-locale="${language}"]`).waitFor({ state: 'hidden' });
  await page.waitForFunction(`document.documentElement.lang === '${language}'`);
}

async function chooseTheme(page: Page, theme: 'light' | 'dark') {
  await byTestId(page, 'theme-switch').click();
  await page.waitForFunction(`localStorage.getItem('theme-mode') === '${theme}'`);
}

/**
 * Screenshots of one screen in both languages and both themes (account-<name>-<lang>-<theme>.png), switched
 * with the top bar; the page is left on the screen in Chinese and the light theme. `reload` opens the
 * screen again for each (for screens that do not stay, like a failed OAuth callback).
 */
async function screenshots(
  page: Page,
  name: string,
  path: string,
  ready: string,
  options: { reload?: boolean; before?: () => Promise<void> } = {},
) {
  const open = async () => {
    await page.goto(path);
    await page.locator(ready).first().waitFor();
    await options.before?.();
  };
  const variants = [
    ['zh', 'light'],
    ['zh', 'dark'],
    ['en', 'dark'],
    ['en', 'light'],
  ] as const;
  let current: readonly [string, string] = ['zh', 'light'];
  await open();
  for (const [language, theme] of variants) {
    if (options.reload) {
      await page.evaluate(
        `localStorage.setItem('i18nextLng', '${language}'); localStorage.setItem('theme-mode', '${theme}')`,
      );
      if (language !== 'zh' || theme !== 'light') await open();
    } else {
      if (current[0] !== language) await chooseLanguage(page, language);
      if (current[1] !== theme) await chooseTheme(page, theme);
    }
    current = [language, theme];
    // Away from the top bar, so that no tooltip or hover shows.
    await page.mouse.move(640, 795);
    await screenshot(page, `account-${name}-${language}-${theme}`);
  }
  if (options.reload) {
    await page.evaluate(`localStorage.setItem('i18nextLng', 'zh'); localStorage.setItem('theme-mode', 'light')`);
  } else {
    await chooseLanguage(page, 'zh');
  }
}

const byTestId = (page: Page, id: string) => page.locator(`[data-testid="${id}"]`);

/** The newest mail to an address that matches, waiting for it to arrive. */
async function mailTo(address: string, pattern: RegExp, after: number): Promise<RegExpMatchArray> {
  for (let i = 0; i < 100; i++) {
    for (const mail of smtp.inbox.slice(after).reverse()) {
      const match = mail.to.includes(address) ? mail.body.match(pattern) : null;
      if (match) return match;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no mail to ${address} matching ${pattern}`);
}
const CODE = /(?:验证码为：|verification code is: )(?:<strong>)?(\w{4,12})/;

async function setOptions(values: Record<string, string>) {
  await server.gateway.options.setMany(values);
}

async function self(client: DashboardClient) {
  const answer = await client.get('/api/user/self');
  expect(answer.body.success).toBe(true);
  return answer.body.data;
}

describe('console account pages', { timeout: 60_000 }, () => {
  it('first-run setup: database warning, validation messages, usage-mode help, setup through the UI', async () => {
    const { page, errors } = await newPage();
    await page.goto('/');
    await page.waitForURL('**/setup');
    const form = byTestId(page, 'setup-page');
    await form.locator('input[name="username"]').waitFor();
    const setupState = (await (await fetch(`${server.url}/api/setup`)).json()) as any;
    const embedded = ['sqlite', 'pglite'].includes(setupState.data.database_type);
    expect(await byTestId(page, 'setup-database-warning').count()).toBe(embedded ? 1 : 0);

    await form.locator('input[name="username"]').fill('   ');
    await form.locator('input[name="password"]').fill('short');
    await form.locator('input[name="confirmPassword"]').fill('other');
    await form.locator('button[type="submit"]').click();
    await page.getByText('请输入管理员用户名').waitFor();
    await page.getByText('密码长度至少为 8 个字符').waitFor();
    await page.getByText('两次输入的密码不一致').waitFor();

    await page.getByRole('button', { name: '使用模式说明' }).click();
    await page.getByText('对外运营：计算用量并计费').waitFor();
    await page.getByRole('button', { name: '关闭' }).click();

    await screenshots(page, 'setup', '/setup', '[data-testid="setup-page"] input[name="username"]');

    await form.locator('input[name="username"]').fill(ROOT.username);
    await form.locator('input[name="password"]').fill(ROOT.password);
    await form.locator('input[name="confirmPassword"]').fill(ROOT.password);
    await form.locator('button[type="submit"]').click();
    await page.getByText('系统初始化成功，正在跳转…').waitFor();
    await page.waitForURL((url) => url.pathname === '/', { timeout: 10_000 });
    await byTestId(page, 'home-default').waitFor();
    expectNoErrors(errors);

    root = new DashboardClient(server.url);
    expect((await root.login(ROOT.username, ROOT.password)).body.success).toBe(true);
    await setOptions({
      ...smtp.options,
      ServerAddress: server.url,
      EmailVerificationEnabled: 'true',
      QuotaForInviter: String(QUOTA_FOR_INVITER),
      GitHubOAuthEnabled: 'true',
      GitHubClientId: 'gh-client',
      GitHubClientSecret: 'gh-secret',
      LinuxDOOAuthEnabled: 'true',
      LinuxDOClientId: 'ldo-client',
      WeChatAuthEnabled: 'true',
      WeChatAccountQRCodeImageURL: `${server.url}/logo.svg`,
      TelegramOAuthEnabled: 'true',
      TelegramBotName: 'tollgate_bot',
      TurnstileSiteKey: 'site-key',
      TurnstileSecretKey: 'secret-key',
    });
  });

  it('home and about: the defaults, then the administrator’s Markdown, HTML, frame and notice', async () => {
    const { page, errors } = await newPage();
    await page.goto('/');
    await byTestId(page, 'home-default').waitFor();
    await expect(byTestId(page, 'home-address').textContent()).resolves.toBe(server.url);
    await screenshots(page, 'home', '/', '[data-testid="home-default"]');
    await screenshots(page, 'about', '/about', '[data-testid="about-default"]');

    await setOptions({
      HomePageContent:
        '# Welcome to the gate\n\nSome **bold** words and a [link](https://example.com).\n\n- one\n- two',
      About: '<h2 data-testid="about-html">About us</h2>',
      Notice: 'Maintenance on **Sunday**',
    });
    await page.goto('/');
    await byTestId(page, 'home-content').locator('h1', { hasText: 'Welcome to the gate' }).waitFor();
    await byTestId(page, 'home-content').locator('strong', { hasText: 'bold' }).waitFor();
    expect(await byTestId(page, 'home-content').locator('li').count()).toBe(2);
    await byTestId(page, 'home-notice').locator('strong', { hasText: 'Sunday' }).waitFor();
    await page.goto('/about');
    await byTestId(page, 'about-html').waitFor();

    await setOptions({ About: `${server.url}/logo.svg`, HomePageContent: '', Notice: '' });
    await page.goto('/about');
    await expect(byTestId(page, 'about-content').getAttribute('src')).resolves.toBe(`${server.url}/logo.svg`);
    await setOptions({ About: '' });
    expectNoErrors(errors);
  });

  it('login: validation, the expired notice, links, third-party buttons and the WeChat dialog', async () => {
    const { page, errors } = await newPage();
    await page.goto('/login?expired=true');
    await byTestId(page, 'login-expired').getByText('未登录或登录已过期，请重新登录').waitFor();
    const form = byTestId(page, 'login-page');
    await form.locator('button[type="submit"]').click();
    await byTestId(page, 'form-problem').getByText('请输入用户名和密码！').waitFor();
    await form.locator('input[name="username"]').fill(ROOT.username);
    await form.locator('input[name="password"]').fill('wrong-password');
    await form.locator('button[type="submit"]').click();
    await page.getByText('用户名或密码错误，或用户已被封禁').waitFor();

    const providers = byTestId(page, 'third-party');
    for (const label of ['使用 GitHub 登录', '使用 LinuxDO 登录', '使用微信登录']) {
      await providers.getByRole('button', { name: label }).waitFor();
    }
    expect(await providers.getByRole('button', { name: '使用 OIDC 登录' }).count()).toBe(0);
    await byTestId(page, 'telegram-widget').waitFor({ state: 'attached' });

    await providers.getByRole('button', { name: '使用微信登录' }).click();
    const wechat = byTestId(page, 'wechat-dialog');
    await wechat.locator('img').waitFor();
    await byTestId(page, 'wechat-submit').click();
    await page.getByText('请输入验证码').waitFor();
    await screenshot(page, 'account-login-wechat');
    await wechat.getByRole('button', { name: '取消' }).click();

    await byTestId(page, 'login-register-link').click();
    await page.waitForURL('**/register');
    await page.goBack();
    await byTestId(page, 'login-reset-link').click();
    await page.waitForURL('**/reset');

    await screenshots(page, 'login', '/login', '[data-testid="third-party"]');
    expectNoErrors(errors, [401]);
  });

  it('login with the human check: asks to wait for it, then sends its token', async () => {
    await setOptions({ TurnstileCheckEnabled: 'true' });
    try {
      await loginWithHumanCheck();
    } finally {
      await setOptions({ TurnstileCheckEnabled: 'false' });
    }
  });

  async function loginWithHumanCheck() {
    const { page, errors } = await newPage();
    await page.goto('/login');
    await byTestId(page, 'turnstile').getByText('human check').waitFor();
    const form = byTestId(page, 'login-page');
    await form.locator('input[name="username"]').fill(ROOT.username);
    await form.locator('input[name="password"]').fill(ROOT.password);
    await form.locator('button[type="submit"]').click();
    await byTestId(page, 'form-problem').getByText('请稍后几秒重试，Turnstile 正在检查用户环境！').waitFor();
    await screenshot(page, 'account-login-turnstile');
    await page.evaluate('window.__turnstilePass()');
    const login = page.waitForRequest((request) => request.url().includes('/api/user/login'));
    await form.locator('button[type="submit"]').click();
    expect(new URL((await login).url()).searchParams.get('turnstile')).toBe(TURNSTILE_TOKEN);
    await page.waitForURL('**/token');

    // The password reset request waits for the human check too (spec doc 2 §5).
    await page.goto('/reset');
    await byTestId(page, 'turnstile').getByText('human check').waitFor();
    await byTestId(page, 'reset-page').locator('input[name="email"]').fill(BOB.email);
    await byTestId(page, 'reset-submit').click();
    await byTestId(page, 'form-problem').getByText('请稍后几秒重试，Turnstile 正在检查用户环境！').waitFor();
    expectNoErrors(errors);
  }

  it('registers with an invitation link and a mailed code, each validation message first, then signs in', async () => {
    const rootAff = (await root.get('/api/user/aff')).body.data as string;
    const { page, errors } = await newPage();
    await page.goto(`/register?aff=${rootAff}`);
    const form = byTestId(page, 'register-page');
    await form.locator('input[name="verification_code"]').waitFor();
    expect(await localItem(page, 'aff')).toBe(rootAff);
    await screenshots(
      page,
      'register',
      `/register?aff=${rootAff}`,
      '[data-testid="register-page"] input[name="email"]',
    );

    const field = (name: string) => form.locator(`input[name="${name}"]`);
    const submit = () => form.locator('button[type="submit"]').click();
    const problem = (text: string) => byTestId(page, 'form-problem').getByText(text, { exact: true }).waitFor();
    await submit();
    await problem('请输入用户名和密码！');
    await field('username').fill('a-much-too-long-name');
    await field('password').fill(BOB.password);
    await submit();
    await problem('用户名长度不能超过 12 个字符');
    await field('username').fill(BOB.username);
    await field('password').fill('short');
    await field('password2').fill('short');
    await submit();
    await problem('密码长度不得小于 8 位！');
    await field('password').fill(BOB.password);
    await field('password2').fill('another-password');
    await submit();
    await problem('两次输入的密码不一致');
    await field('password2').fill(BOB.password);
    await submit();
    await problem('请输入邮箱地址和验证码');

    await byTestId(page, 'send-code').click();
    await problem('请输入邮箱地址');
    const before = smtp.inbox.length;
    await field('email').fill(BOB.email);
    await byTestId(page, 'send-code').click();
    await page.getByText('验证码发送成功，请检查邮箱').waitFor();
    await expect(byTestId(page, 'send-code').isDisabled()).resolves.toBe(true);
    await byTestId(page, 'send-code')
      .getByText(/重新发送（\d+）/)
      .waitFor();
    const code = (await mailTo(BOB.email, CODE, before))[1]!;
    await field('verification_code').fill(code);
    await submit();
    await page.getByText('注册成功').waitFor();
    await page.waitForURL('**/login');

    const login = byTestId(page, 'login-page');
    await login.locator('input[name="username"]').fill(BOB.username);
    await login.locator('input[name="password"]').fill(BOB.password);
    await login.locator('button[type="submit"]').click();
    await page.waitForURL('**/token');
    await page.getByText('登录成功').waitFor();
    expect(JSON.parse((await localItem(page, 'user')) ?? '{}')).toMatchObject({ username: BOB.username, role: 1 });
    // The invitation paid the inviter.
    expect((await self(root)).aff_quota).toBe(QUOTA_FOR_INVITER);
    expectNoErrors(errors);
  });

  it('resets a forgotten password by mail: request with its 30 s lock, confirm, copy the new password', async () => {
    const { page, errors } = await newPage();
    await page.goto('/reset');
    const submit = byTestId(page, 'reset-submit');
    // An empty email does nothing.
    await submit.click();
    await expect(submit.isDisabled()).resolves.toBe(false);
    await screenshots(page, 'reset', '/reset', '[data-testid="reset-submit"]');

    const before = smtp.inbox.length;
    await byTestId(page, 'reset-page').locator('input[name="email"]').fill(BOB.email);
    await submit.click();
    await page.getByText('如果该邮箱已注册，重置邮件已发送，请检查邮箱').waitFor();
    await submit.getByText(/重试（\d+）/).waitFor();
    await expect(submit.isDisabled()).resolves.toBe(true);
    const link = (
      await mailTo(BOB.email, /(http:\/\/[^\s"<]+\/user\/reset\?email=[^\s"<&]+&(?:amp;)?token=[\w-]+)/, before)
    )[1]!;

    await page.goto('/user/reset');
    await byTestId(page, 'reset-link-invalid').waitFor();
    const confirmUrl = link.replace('&amp;', '&');
    await screenshots(page, 'reset-confirm', confirmUrl, '[data-testid="reset-confirm"]');
    await page.goto(confirmUrl);
    await byTestId(page, 'reset-confirm').click();
    const shown = byTestId(page, 'new-password');
    await shown.waitFor();
    const password = await shown.inputValue();
    expect(password.length).toBeGreaterThanOrEqual(8);
    await page.getByText(`新密码已复制到剪贴板：${password}`).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(password);
    await screenshot(page, 'account-reset-done');
    const check = new DashboardClient(server.url);
    expect((await check.login(BOB.username, password)).body.success).toBe(true);
    BOB.password = password;
    expectNoErrors(errors);
  });

  it('signs in with GitHub through the callback page, shows a failed callback, binds GitHub to root', async () => {
    const { page, errors } = await newPage();
    githubAccount = { id: 7001, login: 'octo' };
    await page.goto('/login');
    await byTestId(page, 'third-party').getByRole('button', { name: '使用 GitHub 登录' }).click();
    await page.waitForURL('**/token');
    await page.getByText('登录成功').waitFor();
    const stored = JSON.parse((await localItem(page, 'user')) ?? '{}');
    expect(stored.username).toMatch(/octo|github/);

    const visitor = await newPage();
    await visitor.page.goto('/oauth/github?code=nope&state=nope');
    await byTestId(visitor.page, 'oauth-failure').waitFor();
    await visitor.page.waitForURL('**/login');
    await screenshots(
      visitor.page,
      'oauth-failure',
      '/oauth/github?code=nope&state=nope',
      '[data-testid="oauth-failure"]',
      { reload: true },
    );

    const rootPage = await newPage();
    await signInByApi(rootPage.page, server.url, ROOT);
    githubAccount = { id: 7002, login: 'rootcat' };
    await rootPage.page.goto('/personal');
    await byTestId(rootPage.page, 'bind-github').click();
    await rootPage.page.waitForURL('**/personal');
    await rootPage.page.getByText('绑定成功！').waitFor();
    await byTestId(rootPage.page, 'binding-github').getByText('7002').waitFor();
    await expect(byTestId(rootPage.page, 'bind-github').isDisabled()).resolves.toBe(true);
    expect((await self(root)).github_id).toBe('7002');
    expectNoErrors(errors);
    expectNoErrors(visitor.errors, [400, 401, 403]);
    expectNoErrors(rootPage.errors);
  });

  it('personal settings: statistics, model chips, invitation transfer, email binding, access token', async () => {
    const models = Array.from({ length: 12 }, (_, i) => `model-${String(i + 1).padStart(2, '0')}`);
    const channel = await root.post('/api/channel/', {
      name: 'models',
      type: 1,
      key: 'sk-test',
      models: models.join(','),
      group: 'default',
    });
    expect(channel.body.success, channel.body.message).toBe(true);

    const { page, errors } = await newPage();
    await signInByApi(page, server.url, ROOT);
    await page.goto('/personal');
    await byTestId(page, 'personal-balance').getByText('$200.00').waitFor();
    await byTestId(page, 'personal-profile').getByText('超级管理员').waitFor();
    await byTestId(page, 'invite-pending').getByText('$2.00').waitFor();

    // Model chips: the first 10, then all, then 10 again.
    const chips = byTestId(page, 'model-chip');
    await chips.first().waitFor();
    expect(await chips.count()).toBe(10);
    await byTestId(page, 'models-toggle').getByText('展开全部（还有 2 个）').click();
    expect(await chips.count()).toBe(12);
    await byTestId(page, 'models-toggle').click();
    expect(await chips.count()).toBe(10);

    const affCode = (await root.get('/api/user/aff')).body.data;
    await expect(byTestId(page, 'invite-link').inputValue()).resolves.toBe(`${server.url}/register?aff=${affCode}`);

    await screenshots(page, 'personal', '/personal', '[data-testid="personal-page"][data-loaded="true"]', {
      before: () => chips.first().waitFor(),
    });

    // Transfer: at least one unit (500,000 quota = $1.00).
    await byTestId(page, 'invite-transfer').click();
    await byTestId(page, 'transfer-amount').fill('1000');
    await byTestId(page, 'transfer-submit').click();
    await byTestId(page, 'transfer-dialog').getByText('划转金额最低为 $1.00').waitFor();
    await screenshot(page, 'account-personal-transfer');
    await byTestId(page, 'transfer-amount').fill('500000');
    await byTestId(page, 'transfer-submit').click();
    await page.getByText('划转成功').waitFor();
    await byTestId(page, 'invite-pending').getByText('$1.00').waitFor();
    await byTestId(page, 'personal-balance').getByText('$201.00').waitFor();

    // Email binding: both fields required, then a mailed code.
    await byTestId(page, 'bind-email').click();
    await byTestId(page, 'bind-email-submit').click();
    await byTestId(page, 'email-dialog').getByText('请输入邮箱地址和验证码').waitFor();
    const before = smtp.inbox.length;
    await byTestId(page, 'bind-email-address').fill(ROOT_EMAIL);
    await byTestId(page, 'bind-email-send').click();
    await byTestId(page, 'bind-email-send')
      .getByText(/重新发送（\d+）/)
      .waitFor();
    const code = (await mailTo(ROOT_EMAIL, CODE, before))[1]!;
    await byTestId(page, 'bind-email-code').fill(code);
    await screenshot(page, 'account-personal-email');
    await byTestId(page, 'bind-email-submit').click();
    await page.getByText('邮箱账户绑定成功！').waitFor();
    await byTestId(page, 'binding-email').getByText(ROOT_EMAIL).waitFor();
    expect((await self(root)).email).toBe(ROOT_EMAIL);

    // The system access token, generated and copied.
    await byTestId(page, 'token-generate').click();
    const token = await byTestId(page, 'access-token').inputValue();
    expect(token.length).toBeGreaterThan(10);
    await page.getByText(`令牌已重置并已复制到剪贴板：${token}`).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(token);
    const byToken = await new DashboardClient(server.url).get('/api/user/self', {
      authorization: `Bearer ${token}`,
      'new-api-user': String(root.userId),
    });
    expect(byToken.body.data?.username).toBe(ROOT.username);
    expectNoErrors(errors);
  });

  it('personal settings: notification and pricing settings with their validation, saved and reloaded', async () => {
    const { page, errors } = await newPage();
    await signInByApi(page, server.url, ROOT);
    await page.goto('/personal');
    const card = byTestId(page, 'personal-settings');
    await expect(byTestId(page, 'notify-threshold').inputValue()).resolves.toBe('500000');

    await byTestId(page, 'notify-threshold').fill('-1');
    await byTestId(page, 'notify-save').click();
    await card.getByText('额度预警阈值不能小于 0').waitFor();
    await byTestId(page, 'notify-threshold').fill('1000000');
    await byTestId(page, 'notify-email').fill('not-an-email');
    await byTestId(page, 'notify-save').click();
    await card.getByText('请输入正确的邮箱地址').waitFor();
    await byTestId(page, 'notify-email').fill('');
    await card.getByText('Webhook', { exact: true }).click();
    await byTestId(page, 'notify-save').click();
    await card.getByText('请输入 Webhook 地址').waitFor();
    await byTestId(page, 'notify-webhook-url').fill('http://hooks.example.test/tollgate');
    await byTestId(page, 'notify-save').click();
    await card.getByText('Webhook 地址必须以 https:// 开头').waitFor();
    // An address the gateway would never call (fetch_setting: no internal addresses) is refused by the gateway.
    await byTestId(page, 'notify-webhook-url').fill('https://127.0.0.1/tollgate');
    await byTestId(page, 'notify-save').click();
    await page.getByText('出于安全设置，服务器不会请求该地址（private_ip）', { exact: false }).waitFor();
    await byTestId(page, 'notify-webhook-url').fill('https://hooks.example.test/tollgate');
    await byTestId(page, 'notify-webhook-secret').fill('hook-secret');
    await screenshot(page, 'account-personal-notify');
    await byTestId(page, 'notify-save').click();
    await page.getByText('设置已更新').waitFor();

    await byTestId(page, 'tab-pricing').click();
    await byTestId(page, 'accept-unpriced').check();
    await screenshot(page, 'account-personal-pricing');
    await byTestId(page, 'notify-save').click();
    // The first save's toast may still show: wait for the second save itself.
    await expect
      .poll(async () => JSON.parse((await self(root)).setting).accept_unset_model_ratio_model, { timeout: 5000 })
      .toBe(true);

    const setting = JSON.parse((await self(root)).setting);
    expect(setting).toMatchObject({
      notify_type: 'webhook',
      quota_warning_threshold: 1_000_000,
      webhook_url: 'https://hooks.example.test/tollgate',
      webhook_secret_set: true,
      accept_unset_model_ratio_model: true,
    });
    await page.reload();
    await expect(byTestId(page, 'notify-webhook-url').inputValue()).resolves.toBe(
      'https://hooks.example.test/tollgate',
    );
    await card.getByText('已设置密钥；留空则保持不变').waitFor();
    expectNoErrors(errors);
  });

  it('personal settings: changes the password and deletes the account, each validation message first', async () => {
    const { page, errors } = await newPage();
    await signInByApi(page, server.url, BOB);
    await page.goto('/personal');
    await byTestId(page, 'password-open').click();
    const dialog = byTestId(page, 'password-dialog');
    const submit = () => byTestId(page, 'password-submit').click();
    await submit();
    await dialog.getByText('请输入原密码').waitFor();
    await byTestId(page, 'password-original').fill(BOB.password);
    await submit();
    await dialog.getByText('请输入新密码').waitFor();
    await byTestId(page, 'password-password').fill(BOB.password);
    await submit();
    await dialog.getByText('新密码不能与原密码相同').waitFor();
    await byTestId(page, 'password-password').fill('bob-password-2');
    await byTestId(page, 'password-confirm').fill('bob-password-3');
    await submit();
    await dialog.getByText('两次输入的密码不一致').waitFor();
    await screenshot(page, 'account-personal-password');
    await byTestId(page, 'password-confirm').fill('bob-password-2');
    await submit();
    await page.getByText('更新成功').waitFor();
    await dialog.waitFor({ state: 'detached' });
    const check = new DashboardClient(server.url);
    expect((await check.login(BOB.username, 'bob-password-2')).body.success).toBe(true);

    await byTestId(page, 'delete-open').click();
    await byTestId(page, 'delete-confirm').fill('not-bob');
    await byTestId(page, 'delete-submit').click();
    await byTestId(page, 'delete-dialog').getByText('请输入你的账户名以确认删除').waitFor();
    await screenshot(page, 'account-personal-delete');
    await byTestId(page, 'delete-confirm').fill(BOB.username);
    await byTestId(page, 'delete-submit').click();
    await page.getByText('账户已注销').waitFor();
    await page.waitForURL('**/login');
    expect(await localItem(page, 'user')).toBeNull();
    expect((await new DashboardClient(server.url).login(BOB.username, 'bob-password-2')).body.success).toBe(false);
    expectNoErrors(errors);
  });

  it('wallet: balance, redeeming a code, top-up disabled until configured', async () => {
    const created = await root.post('/api/redemption/', { name: 'wallet test', quota: 500_000, count: 1 });
    expect(created.body.success, created.body.message).toBe(true);
    const [key] = created.body.data as string[];

    const { page, errors } = await newPage();
    await signInByApi(page, server.url, ROOT);
    await page.goto('/topup');
    await byTestId(page, 'wallet-balance').getByText('$201.00').waitFor();
    await byTestId(page, 'wallet-online-disabled').getByText('管理员未开启在线充值！').waitFor();
    await expect(byTestId(page, 'topup-amount').isDisabled()).resolves.toBe(true);
    await screenshots(page, 'wallet', '/topup', '[data-testid="wallet-page"][data-loaded="true"]');

    await byTestId(page, 'redeem-submit').click();
    await byTestId(page, 'wallet-redeem').getByText('请输入兑换码！').waitFor();
    await byTestId(page, 'buy-code').click();
    await page.getByText('超级管理员未设置充值链接！').waitFor();
    await byTestId(page, 'redeem-code').fill(key!);
    await byTestId(page, 'redeem-submit').click();
    await page.getByText('兑换成功！', { exact: true }).waitFor();
    await byTestId(page, 'redeem-added').getByText('$1.00').waitFor();
    await byTestId(page, 'wallet-balance').getByText('$202.00').waitFor();
    // The same code again: the server's message, as it is.
    await byTestId(page, 'redeem-code').fill(key!);
    await byTestId(page, 'redeem-submit').click();
    await page.getByText('该兑换码已被使用').waitFor();
    await byTestId(page, 'redeem-added').waitFor({ state: 'detached' });
    expect((await self(root)).quota).toBe(101_000_000);
    expectNoErrors(errors, [400]);
  });

  it('wallet: online top-up prices the amount, confirms, and posts the payment form', async () => {
    const { page, errors } = await newPage();
    await signInByApi(page, server.url, ROOT);
    // The gateway has no payment provider here: the status, price and pay answers are new-api's shapes.
    await page.route('**/api/status', async (route) => {
      const answer = await route.fetch();
      const body = await answer.json();
      body.data = {
        ...body.data,
        enable_online_topup: true,
        min_topup: 2,
        pay_methods: [{ name: '支付宝', type: 'alipay', color: '#1677ff' }],
      };
      await route.fulfill({ response: answer, json: body });
    });
    const priced: unknown[] = [];
    await page.route('**/api/user/amount', async (route) => {
      const body = route.request().postDataJSON();
      priced.push(body);
      await route.fulfill({ json: { success: true, message: 'success', data: (body.amount * 7.3).toFixed(2) } });
    });
    const paid: unknown[] = [];
    await page.route('**/api/user/pay', async (route) => {
      paid.push(route.request().postDataJSON());
      await route.fulfill({
        json: {
          success: true,
          message: 'success',
          data: { pid: '1001', money: '21.90', sign: 'abc' },
          url: `${server.url}/fake-pay`,
        },
      });
    });
    let paymentForm = '';
    await page.route('**/fake-pay', async (route) => {
      paymentForm = route.request().postData() ?? '';
      await route.fulfill({ contentType: 'text/html', body: '<p data-testid="paid">payment page</p>' });
    });

    await page.goto('/topup');
    await byTestId(page, 'topup-price').getByText('实付金额：14.60').waitFor();
    // The amount is at least 1 (spec doc 2 §5), and at least the minimum top-up to pay.
    await byTestId(page, 'topup-amount').fill('0');
    await byTestId(page, 'topup-amount').blur();
    await expect(byTestId(page, 'topup-amount').inputValue()).resolves.toBe('1');
    await byTestId(page, 'pay-alipay').click();
    await byTestId(page, 'wallet-online').getByText('充值数量不能小于 2').waitFor();
    await byTestId(page, 'topup-amount').fill('3');
    await byTestId(page, 'topup-price').getByText('实付金额：21.90').waitFor();
    await byTestId(page, 'pay-alipay').click();
    await byTestId(page, 'pay-confirm').getByText('支付方式：支付宝').waitFor();
    await screenshot(page, 'account-wallet-confirm');
    await byTestId(page, 'pay-submit').click();
    await page.locator('[data-testid="paid"]').waitFor();
    expect(paid).toEqual([{ amount: 3, top_up_code: '', payment_method: 'alipay' }]);
    expect(Object.fromEntries(new URLSearchParams(paymentForm))).toEqual({ pid: '1001', money: '21.90', sign: 'abc' });
    expect(priced.length).toBeGreaterThan(0);
    expectNoErrors(errors);
  });
});
