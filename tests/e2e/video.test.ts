import OpenAI from 'openai';
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient } from '../support/client.ts';
import { hasPostgres } from '../support/database.ts';
import { type GatewayProcess, hasRedis } from '../support/gateway.ts';
import { parseSamples, scrapeMetrics } from '../support/metrics.ts';
import { type MockSora, startMockSora } from '../support/mock-sora.ts';
import {
  balanceOf,
  cleanupsAfterAll,
  expectBooksBalanced,
  loggedOnce,
  putOptions,
  startVideoGateway,
} from '../support/video-e2e.ts';
import { eventually } from '../support/wait.ts';

/**
 * OpenAI's Videos API (Sora, type 55) through one gateway, driven by the official client: videos
 * billed once on acceptance (per-call price × group ratio × seconds × size ratio) under a public id,
 * polled to their end, content proxied to their owner only, failures refunded once, books balanced.
 */

const GROUP_RATIO = 2;
const QUOTA_PER_UNIT = 500_000;
/** sora-2 at 0.3 USD per call, 8 seconds, 1280x720 (size ratio 1). */
const EIGHT_SECONDS = 0.3 * QUOTA_PER_UNIT * GROUP_RATIO * 8;
/** sora-2 at 0.3 USD per call, 4 seconds, 720x1280. */
const FOUR_SECONDS = 0.3 * QUOTA_PER_UNIT * GROUP_RATIO * 4;
/** sora-2-pro at 0.5 USD per call, 4 seconds, 1792x1024 (size ratio 1.666667). */
const PRO_LARGE = Math.round(0.5 * QUOTA_PER_UNIT * GROUP_RATIO * 4 * 1.666667);
const TOKEN_QUOTA = 50_000_000;

const cleanups = cleanupsAfterAll();

let gateway: GatewayProcess;
let mock: MockSora;
let db: pg.Client;
let client: OpenAI;
let other: OpenAI;
let rootSession: DashboardClient;
let otherSession: DashboardClient;
let initial: { wallet: number; token: number };

const completed = (id: string, status: string) =>
  eventually(
    () => client.videos.retrieve(id),
    (video) => video.status === status,
    10_000,
  );

describe.skipIf(!hasPostgres() || !hasRedis())('video tasks (Sora)', () => {
  beforeAll(async () => {
    mock = await startMockSora('sora-secret');
    cleanups.push(() => mock.close());
    let root: DashboardClient;
    ({ gateway, db, root } = await startVideoGateway(cleanups));
    rootSession = root;
    const created = await root.post('/api/channel/', {
      name: 'sora',
      type: 55,
      key: mock.key,
      base_url: mock.url,
      models: 'sora-2,sora-2-pro',
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
    await putOptions(root, {
      GroupRatio: { default: GROUP_RATIO, vip: 1, svip: 1 },
      ModelPrice: { 'sora-2': 0.3, 'sora-2-pro': 0.5 },
    });
    const token = await root.post('/api/token/', { name: 'video', remain_quota: TOKEN_QUOTA, unlimited_quota: false });
    expect(token.body.success).toBe(true);
    client = new OpenAI({ apiKey: String(token.body.data.key), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    expect((await root.post('/api/user/', { username: 'other', password: 'password-1' })).body.success).toBe(true);
    const dashboard = new DashboardClient(gateway.url);
    otherSession = dashboard;
    expect((await dashboard.login('other', 'password-1')).body.success).toBe(true);
    const otherKey = String(
      (await dashboard.post('/api/token/', { name: 'other', unlimited_quota: true })).body.data.key,
    );
    other = new OpenAI({ apiKey: otherKey, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    await eventually(
      async () => (await client.models.list()).data.map((m) => m.id),
      (models) => models.includes('sora-2'),
      5000,
    );
    initial = await balanceOf(db, 'video');
  }, 60_000);

  it('creates a video, polls it to completed, downloads its bytes, remixes it, charged with the seconds ratio', async () => {
    const video = await client.videos.create({
      model: 'sora-2',
      prompt: 'a lighthouse at dusk',
      seconds: '8',
      size: '1280x720',
    });
    expect(video).toMatchObject({ object: 'video', model: 'sora-2', seconds: '8', size: '1280x720', error: null });
    expect(['queued', 'in_progress']).toContain(video.status);
    expect(video.id).toMatch(/^video_[0-9a-f]{32}$/);
    expect(mock.videos.has(video.id)).toBe(false);
    const sent = mock.requests.find((r) => r.method === 'POST' && r.path === '/v1/videos')!;
    expect(sent.headers.authorization).toBe('Bearer sora-secret');
    expect(sent.fields).toEqual({ model: 'sora-2', prompt: 'a lighthouse at dusk', seconds: '8', size: '1280x720' });

    const done = await completed(video.id, 'completed');
    expect(done).toMatchObject({ id: video.id, progress: 100, error: null });
    const content = await client.videos.downloadContent(video.id);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    expect(Buffer.from(await content.arrayBuffer()).equals(mock.content)).toBe(true);

    const [charge] = await loggedOnce(db, 2, video.id);
    expect(charge).toMatchObject({ quota: EIGHT_SECONDS, model_name: 'sora-2' });
    expect(charge!.other).toMatchObject({ seconds_ratio: 8, size_ratio: 1, group_ratio: GROUP_RATIO });

    // A remix runs on the original's channel against the upstream's id, billed like the original.
    const remix = await client.videos.remix(video.id, { prompt: 'now in the rain' });
    expect(remix).toMatchObject({ remixed_from_video_id: video.id, seconds: '8', size: '1280x720' });
    const [upstreamOriginal] = [...mock.videos.values()];
    expect(mock.requests.some((r) => r.path === `/v1/videos/${upstreamOriginal!.id}/remix`)).toBe(true);
    expect((await loggedOnce(db, 2, remix.id))[0]?.quota).toBe(EIGHT_SECONDS);
    await completed(remix.id, 'completed');
  });

  it("serves new-api's generic video API on the same tasks", async () => {
    const response = await fetch(`${gateway.url}/v1/video/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sora-2', prompt: 'a kite', duration: 4, width: 720, height: 1280 }),
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.headers.get('x-new-api-other-ratios') ?? '{}')).toEqual({ seconds: 4, size: 1 });
    const submitted = (await response.json()) as { id: string; task_id: string; seconds: string; size: string };
    expect(submitted).toMatchObject({ task_id: submitted.id, seconds: '4', size: '720x1280' });
    expect(mock.requests.filter((r) => r.method === 'POST').at(-1)?.fields).toEqual({
      model: 'sora-2',
      prompt: 'a kite',
      seconds: '4',
      size: '720x1280',
    });
    expect((await loggedOnce(db, 2, submitted.id))[0]?.quota).toBe(FOUR_SECONDS);
    const task = await eventually(
      async () => {
        const answer = await fetch(`${gateway.url}/v1/video/generations/${submitted.id}`, {
          headers: { authorization: `Bearer ${client.apiKey}` },
        });
        return (await answer.json()) as { code: string; data: { status: string; progress: string } };
      },
      (body) => body.data?.status === 'SUCCESS',
      10_000,
    );
    expect(task).toMatchObject({ code: 'success', data: { task_id: submitted.id, progress: '100%' } });
  });

  it("lists the caller's own videos newest first, page by page", async () => {
    const { rows } = await db.query(
      `select t.task_id from tasks t join users u on u.id = t.user_id
       where t.platform = 'video' and u.username = 'root' order by t.id desc`,
    );
    const mine = rows.map((row) => String(row.task_id));
    expect(mine.length).toBeGreaterThanOrEqual(3);
    const first = await client.videos.list({ limit: 2 });
    expect(first.data.map((video) => video.id)).toEqual(mine.slice(0, 2));
    expect(first.has_more).toBe(true);
    const rest = await client.videos.list({ limit: 100, after: mine[1] });
    expect(rest.data.map((video) => video.id)).toEqual(mine.slice(2));
    expect((await other.videos.list()).data).toEqual([]);
  });

  it("serves a video's content to its owner's console session too, never to another user's", async () => {
    const [row] = (
      await db.query(
        `select t.task_id from tasks t join users u on u.id = t.user_id
         where t.platform = 'video' and t.status = 'SUCCESS' and u.username = 'root' order by t.id limit 1`,
      )
    ).rows;
    const bySession = (session: DashboardClient, headers: Record<string, string> = {}) =>
      fetch(`${gateway.url}/v1/videos/${row.task_id}/content`, {
        headers: { cookie: session.cookie, 'new-api-user': String(session.userId), ...headers },
      });
    const owner = await bySession(rootSession);
    expect(owner.status).toBe(200);
    expect(Buffer.from(await owner.arrayBuffer()).equals(mock.content)).toBe(true);
    expect((await bySession(otherSession)).status).toBe(404);
    // A session without the user header is not signed in (401), as on /api.
    const anonymous = await fetch(`${gateway.url}/v1/videos/${row.task_id}/content`, {
      headers: { cookie: rootSession.cookie },
    });
    expect(anonymous.status).toBe(401);
  });

  it("never shows another user's video or its content", async () => {
    const [row] = (await db.query(`select task_id from tasks where platform = 'video' order by id limit 1`)).rows;
    await expect(other.videos.retrieve(row.task_id)).rejects.toMatchObject({ status: 404 });
    await expect(other.videos.downloadContent(row.task_id)).rejects.toMatchObject({ status: 404 });
    await expect(other.videos.remix(row.task_id, { prompt: 'mine now' })).rejects.toMatchObject({ status: 404 });
  });

  it('refuses bad input before anything is charged', async () => {
    await expect(client.videos.create({ model: 'sora-2', prompt: 'x', seconds: '5' as '4' })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_request',
    });
    await expect(client.videos.create({ model: 'sora-2', prompt: '' })).rejects.toMatchObject({ status: 400 });
  });

  it('counts video requests in the relay metrics: charged ones by model and channel, refusals by why', async () => {
    const samples = parseSamples(await scrapeMetrics(gateway), 'tollgate_relay_requests_total').filter(
      (sample) => sample.labels.format === 'video',
    );
    const charged = samples.find(
      (sample) =>
        sample.labels.model === 'sora-2' && sample.labels.status === '2xx' && sample.labels.channel !== 'none',
    );
    expect(charged?.value).toBeGreaterThanOrEqual(3);
    const refused = samples.filter((sample) => sample.labels.error_type === 'invalid_request');
    expect(refused.reduce((sum, sample) => sum + sample.value, 0)).toBeGreaterThanOrEqual(2);
  });

  it('refunds a failed video once with a type-6 log', async () => {
    mock.behaviour.failNext = true;
    const video = await client.videos.create({
      model: 'sora-2-pro',
      prompt: 'something blocked',
      seconds: '4',
      size: '1792x1024',
    });
    expect((await loggedOnce(db, 2, video.id))[0]?.quota).toBe(PRO_LARGE);
    const failed = await completed(video.id, 'failed');
    expect(failed.error).toMatchObject({ message: 'prompt was blocked' });
    const refunds = await loggedOnce(db, 6, video.id);
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ quota: PRO_LARGE, model_name: 'sora-2-pro' });
    await expect(client.videos.downloadContent(video.id)).rejects.toMatchObject({ status: 400 });
  });

  it('billed every video once and balanced the books', async () => {
    expect(await gateway.stop()).toBe(0);
    const q = async (text: string) => (await db.query(text)).rows[0] as Record<string, any>;
    const { charged, refunded } = await expectBooksBalanced(db, 'video', initial);
    expect(charged).toBe(2 * EIGHT_SECONDS + FOUR_SECONDS + PRO_LARGE);
    expect(refunded).toBe(PRO_LARGE);
    const tasks = await q(`select sum(quota) as s, count(*)::int as n from tasks where platform = 'video'`);
    expect({ n: tasks.n, s: Number(tasks.s) }).toEqual({ n: 4, s: charged });
  });
});
