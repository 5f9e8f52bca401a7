import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { type MockMidjourney, startMockMidjourney } from '../support/mock-midjourney.ts';
import {
  type ConsoleGateway,
  type Credentials,
  launchBrowser,
  openPage,
  screenshot,
  signInByApi,
  startConsoleGateway,
} from './support.ts';

// The drawing log live (spec doc 3 §2 "Drawing log page"): a user's task submitted through /mj/submit/imagine
// shows unfinished with its progress, then, without a reload, its success with the image (forwarded through
// the gateway's /mj/image/{id}); a failed task shows its reason; the page stops asking once all are finished.

const ALICE: Credentials = { username: 'alice', password: 'alice-password' };

let server: ConsoleGateway;
let browser: Browser;
let mock: MockMidjourney;
let key: string;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [server, browser, mock] = await Promise.all([
    startConsoleGateway({
      GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
      CRITICAL_RATE_LIMIT_ENABLE: 'false',
      TASK_POLL_INTERVAL_MS: '300',
    }),
    launchBrowser(),
    startMockMidjourney(),
  ]);
  const root = await setupRoot(server.url);
  const channel = await root.post('/api/channel/', {
    name: 'mj',
    type: 2,
    key: mock.secret,
    base_url: mock.url,
    models: 'mj_imagine',
    group: 'default',
  });
  expect(channel.body).toMatchObject({ success: true });
  for (const [name, value] of [
    ['QuotaForNewUser', '50000000'],
    ['ServerAddress', server.url],
    ['MjForwardUrlEnabled', 'true'],
  ]) {
    expect((await root.put('/api/option/', { key: name, value })).body, name).toMatchObject({ success: true });
  }
  const registered = await new DashboardClient(server.url).post('/api/user/register', {
    ...ALICE,
    password2: ALICE.password,
  });
  expect(registered.body).toMatchObject({ success: true });
  const alice = new DashboardClient(server.url);
  expect((await alice.login(ALICE.username, ALICE.password)).body).toMatchObject({ success: true });
  const token = await alice.post('/api/token/', { name: 'mj', unlimited_quota: true });
  expect(token.body).toMatchObject({ success: true });
  key = String(token.body.data.key);
});

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await mock?.close();
  await server?.stop();
});

/** Submits an imagine task with alice's key; answers the upstream task id. */
async function imagine(prompt: string): Promise<string> {
  const answer = await fetch(`${server.url}/mj/submit/imagine`, {
    method: 'POST',
    headers: { authorization: `Bearer sk-${key.replace(/^sk-/, '')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt }),
  });
  const body = (await answer.json()) as { code: number; result: string };
  expect(body.code, JSON.stringify(body)).toBe(1);
  return body.result;
}

/** The drawing log row of one task, found by its task id. */
const row = (page: Page, mjId: string) => page.locator('tr', { hasText: mjId });

describe('drawing log', () => {
  it('shows a task live: unfinished with its progress, then its image; a failure with its reason', async () => {
    const { context, page, errors } = await openPage(browser, server.url);
    contexts.push(context);
    await signInByApi(page, server.url, ALICE);
    const listCalls: number[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/rest/midjourney') listCalls.push(Date.now());
    });

    // A task that stays in progress until the test lets it finish.
    mock.behaviour.stuckNext = true;
    const id = await imagine('a lighthouse at dusk');
    await page.goto('/midjourney');
    const live = row(page, id);
    await expect.poll(() => live.locator('[data-testid="midjourney-status"]').textContent()).toBe('执行中');
    await expect.poll(() => live.locator('[data-testid="midjourney-progress"]').textContent()).toBe('10%');
    expect(await live.locator('[data-testid="midjourney-thumbnail"]').count()).toBe(0);
    await screenshot(page, 'drawing-log-in-progress');

    // It finishes upstream: the open page shows it, no reload.
    const loads = listCalls.length;
    mock.tasks.get(id)!.fate = 'success';
    await expect.poll(() => live.locator('[data-testid="midjourney-status"]').textContent()).toBe('成功');
    expect(listCalls.length).toBeGreaterThan(loads);
    await expect.poll(() => live.locator('[data-testid="midjourney-progress"]').textContent()).toBe('100%');
    const thumbnail = live.locator('[data-testid="midjourney-thumbnail"] img');
    expect(await thumbnail.getAttribute('src')).toBe(`${server.url}/mj/image/${id}`);
    // The gateway forwarded the upstream's image: it loaded.
    await expect
      .poll(() => thumbnail.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth))
      .toBe(1);
    await live.locator('[data-testid="midjourney-thumbnail"]').click();
    const full = page.locator('[data-testid="midjourney-image"]');
    await full.waitFor();
    expect(await full.getAttribute('src')).toBe(`${server.url}/mj/image/${id}`);
    await screenshot(page, 'drawing-log-image');
    await page.keyboard.press('Escape');

    // A failing task, on the page loaded anew, shows its reason.
    mock.behaviour.failNext = true;
    const failing = await imagine('banned words');
    await page.reload();
    const failed = row(page, failing);
    await expect.poll(() => failed.locator('[data-testid="midjourney-status"]').textContent()).toBe('失败');
    expect(await failed.locator('[data-testid="midjourney-fail-reason"]').textContent()).toBe('Banned prompt detected');
    await screenshot(page, 'drawing-log-failure');

    // Every visible task is finished: the page stops asking.
    const settled = listCalls.length;
    await page.waitForTimeout(4000);
    expect(listCalls.length).toBe(settled);
    expect(errors).toEqual([]);
  });

  it('shows a creative task live on the task log: progress, then its results from the data; a failure reason', async () => {
    const { context, page, errors } = await openPage(browser, server.url);
    contexts.push(context);
    await signInByApi(page, server.url, ALICE);
    const db = server.gateway.store.db;
    const user = await db
      .selectFrom('users')
      .select('id')
      .where('username', '=', ALICE.username)
      .executeTakeFirstOrThrow();
    const now = Math.floor(Date.now() / 1000);
    const task = (task_id: string) => ({
      created_at: now,
      updated_at: now,
      task_id,
      platform: 'suno',
      user_id: user.id,
      channel_id: 1,
      action: 'MUSIC',
      status: 'IN_PROGRESS',
      progress: '40%',
      submit_time: now,
    });
    await db
      .insertInto('tasks')
      .values([task('suno-live'), task('suno-bad')])
      .execute();
    await page.goto('/task');
    const live = row(page, 'suno-live');
    await expect.poll(() => live.locator('[data-testid="task-progress"]').textContent()).toBe('40%');

    // The engine (here: the test) finishes one with a clip and fails the other; the open page follows.
    const clip = { id: 'c1', audio_url: `${mock.url}/attachments/c1.mp3`, image_url: `${mock.url}/attachments/c1.png` };
    await db
      .updateTable('tasks')
      .set({ status: 'SUCCESS', progress: '100%', finish_time: now + 5, data: JSON.stringify([clip]) })
      .where('task_id', '=', 'suno-live')
      .execute();
    await db
      .updateTable('tasks')
      .set({ status: 'FAILURE', progress: '100%', finish_time: now + 5, fail_reason: 'upstream refused the lyrics' })
      .where('task_id', '=', 'suno-bad')
      .execute();
    await expect.poll(() => live.locator('[data-testid="task-status"]').textContent()).toBe('成功');
    const results = live.locator('[data-testid="task-results"]');
    expect(await results.locator('a[href]').getAttribute('href')).toBe(clip.audio_url);
    expect(await results.locator('img').getAttribute('src')).toBe(clip.image_url);
    const failed = row(page, 'suno-bad');
    await expect
      .poll(() => failed.locator('[data-testid="task-fail-reason"]').textContent())
      .toBe('upstream refused the lyrics');
    await screenshot(page, 'task-log-live');
    expect(errors).toEqual([]);
  });
});
