import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { type MockMidjourney, startMockMidjourney } from '../support/mock-midjourney.ts';
import { type MockSora, startMockSora } from '../support/mock-sora.ts';
import { type MockSuno, startMockSuno } from '../support/mock-suno.ts';
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
// The task log does the same for a Suno task submitted through /suno/submit/music.

const ALICE: Credentials = { username: 'alice', password: 'alice-password' };

let server: ConsoleGateway;
let browser: Browser;
let mock: MockMidjourney;
let suno: MockSuno;
let sora: MockSora;
let key: string;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [server, browser, mock, suno, sora] = await Promise.all([
    startConsoleGateway({
      GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
      CRITICAL_RATE_LIMIT_ENABLE: 'false',
      TASK_POLL_INTERVAL_MS: '300',
    }),
    launchBrowser(),
    startMockMidjourney(),
    startMockSuno(),
    startMockSora('sora-secret'),
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
  const music = await root.post('/api/channel/', {
    name: 'suno',
    type: 36,
    key: suno.key,
    base_url: suno.url,
    models: 'suno_music',
    group: 'default',
  });
  expect(music.body).toMatchObject({ success: true });
  const video = await root.post('/api/channel/', {
    name: 'sora',
    type: 55,
    key: sora.key,
    base_url: sora.url,
    models: 'sora-2',
    group: 'default',
  });
  expect(video.body).toMatchObject({ success: true });
  for (const [name, value] of [
    ['QuotaForNewUser', '50000000'],
    ['ServerAddress', server.url],
    ['MjForwardUrlEnabled', 'true'],
    // The mock's images are on 127.0.0.1 at a random port: the outbound guard must be told they may be fetched.
    ['fetch_setting.allow_private_ip', 'true'],
    ['fetch_setting.allowed_ports', '[]'],
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
  await suno?.close();
  await sora?.close();
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

/** Submits a Suno music task with alice's key; answers the gateway's public task id. */
async function compose(prompt: string): Promise<string> {
  const answer = await fetch(`${server.url}/suno/submit/music`, {
    method: 'POST',
    headers: { authorization: `Bearer sk-${key.replace(/^sk-/, '')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt, tags: 'pop' }),
  });
  const body = (await answer.json()) as { code: string; data: string };
  expect(body.code, JSON.stringify(body)).toBe('success');
  return body.data;
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

  it('shows a Suno task live on the task log: progress, then its clips; a failure with its reason', async () => {
    const { context, page, errors } = await openPage(browser, server.url);
    contexts.push(context);
    await signInByApi(page, server.url, ALICE);

    // A task that stays in progress upstream until the test lets it finish.
    suno.behaviour.stuckNext = true;
    const id = await compose('lights over the harbour');
    const upstream = [...suno.tasks.values()].at(-1)!;
    await page.goto('/task');
    const live = row(page, id);
    await expect.poll(() => live.locator('[data-testid="task-status"]').textContent()).toBe('执行中');
    await expect.poll(() => live.locator('[data-testid="task-progress"]').textContent()).toBe('10%');

    // It finishes upstream: the open page shows its clips, no reload.
    upstream.fate = 'success';
    await expect
      .poll(() => live.locator('[data-testid="task-status"]').textContent(), { timeout: 15_000 })
      .toBe('成功');
    const results = live.locator('[data-testid="task-results"]');
    const clip = (upstream.data as Array<{ audio_url: string; image_url: string }>)[0]!;
    expect(await results.locator('a[href]').first().getAttribute('href')).toBe(clip.audio_url);
    expect(await results.locator('img').first().getAttribute('src')).toBe(clip.image_url);

    // One that fails upstream shows its reason.
    suno.behaviour.failNext = true;
    const failing = await compose('flagged lyrics');
    await page.reload();
    const failed = row(page, failing);
    await expect
      .poll(() => failed.locator('[data-testid="task-fail-reason"]').textContent(), { timeout: 15_000 })
      .toBe('Unable to generate: lyrics flagged');
    await screenshot(page, 'task-log-live');
    expect(errors).toEqual([]);
  });

  it('plays a finished video from the gateway for its owner', async () => {
    const { context, page } = await openPage(browser, server.url);
    contexts.push(context);
    await signInByApi(page, server.url, ALICE);
    const answer = await fetch(`${server.url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key.replace(/^sk-/, '')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sora-2', prompt: 'a lighthouse at dusk' }),
    });
    const submitted = (await answer.json()) as { id: string };
    expect(answer.status, JSON.stringify(submitted)).toBe(200);
    await page.goto('/task');
    const live = row(page, submitted.id);
    await expect
      .poll(() => live.locator('[data-testid="task-status"]').textContent(), { timeout: 15_000 })
      .toBe('成功');
    await live.locator('[data-testid="task-video"]').click();
    const player = page.locator('[data-testid="task-video-player"]');
    await expect.poll(() => player.getAttribute('src')).toMatch(/^blob:/);
    // The bytes the player got are the upstream's, through the gateway's content route and the session.
    const source = String(await player.getAttribute('src'));
    const bytes = await page.evaluate(async (url: string) => {
      const body = await (await fetch(url)).arrayBuffer();
      return Array.from(new Uint8Array(body));
    }, source);
    expect(Buffer.from(bytes).equals(sora.content)).toBe(true);
  });
});
