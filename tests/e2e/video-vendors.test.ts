import OpenAI from 'openai';
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DashboardClient } from '../support/client.ts';
import { hasPostgres } from '../support/database.ts';
import { type GatewayProcess, hasRedis } from '../support/gateway.ts';
import { type MockAli, startMockAli } from '../support/mock-ali.ts';
import { type MockMinimax, startMockMinimax } from '../support/mock-minimax.ts';
import { type MockVidu, startMockVidu } from '../support/mock-vidu.ts';
import {
  ALLOW_MOCK_DOWNLOADS,
  balanceOf,
  cleanupsAfterAll,
  expectBooksBalanced,
  genericStatus,
  loggedOnce,
  putOptions,
  startVideoGateway,
} from '../support/video-e2e.ts';
import { eventually } from '../support/wait.ts';

/**
 * The task vendors behind the generic video API, one gateway and one channel each: Vidu (52,
 * `Token` key), MiniMax Hailuo (35, its file id located through the files API) and Ali Wan (17, a
 * DashScope async task). Each video is charged once on acceptance (per-call price × group ratio ×
 * the vendor's ratios), polled to its end, its content proxied from the vendor's URL, a failure
 * refunded once, and the books balance.
 */

const GROUP_RATIO = 2;
const QUOTA_PER_UNIT = 500_000;
const PRICES = { viduq1: 0.25, 'MiniMax-Hailuo-02': 0.4, 'wan2.2-i2v-plus': 0.1, 'wan2.2-t2v-plus': 0.2 };
/** Vidu and Hailuo are priced per call, whatever the clip's length (as new-api prices them). */
const VIDU = PRICES.viduq1 * QUOTA_PER_UNIT * GROUP_RATIO;
const HAILUO = PRICES['MiniMax-Hailuo-02'] * QUOTA_PER_UNIT * GROUP_RATIO;
/** wan2.2-i2v-plus: 5 seconds at 1080P, which costs 0.7 / 0.14 = 5 times 480P. */
const WAN_IMAGE = PRICES['wan2.2-i2v-plus'] * QUOTA_PER_UNIT * GROUP_RATIO * 5 * 5;
/** wan2.2-t2v-plus: 5 seconds, one price at every size. */
const WAN_TEXT = PRICES['wan2.2-t2v-plus'] * QUOTA_PER_UNIT * GROUP_RATIO * 5;

const cleanups = cleanupsAfterAll();

let gateway: GatewayProcess;
let vidu: MockVidu;
let minimax: MockMinimax;
let ali: MockAli;
let db: pg.Client;
let root: DashboardClient;
let key: string;
let client: OpenAI;
let initial: { wallet: number; token: number };

interface Submitted {
  id: string;
  task_id: string;
  seconds: string;
  size: string;
}

async function generate(body: Record<string, unknown>) {
  const response = await fetch(`${gateway.url}/v1/video/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const ratios = JSON.parse(response.headers.get('x-new-api-other-ratios') ?? 'null') as unknown;
  return { status: response.status, ratios, body: (await response.json()) as Submitted & Record<string, any> };
}

/** The generic fetch of a task, once it reached `status`. */
const ended = (id: string, status: 'SUCCESS' | 'FAILURE') => genericStatus(gateway.url, key, id, status);

async function content(id: string): Promise<Buffer> {
  const response = await client.videos.downloadContent(id);
  expect(response.headers.get('content-type')).toBe('video/mp4');
  return Buffer.from(await response.arrayBuffer());
}

describe.skipIf(!hasPostgres() || !hasRedis())('video task vendors', () => {
  beforeAll(async () => {
    [vidu, minimax, ali] = await Promise.all([
      startMockVidu('vidu-secret'),
      startMockMinimax('minimax-secret'),
      startMockAli('dashscope-secret'),
    ]);
    cleanups.push(
      () => vidu.close(),
      () => minimax.close(),
      () => ali.close(),
    );
    ({ gateway, db, root } = await startVideoGateway(cleanups));
    for (const channel of [
      { name: 'vidu', type: 52, key: vidu.key, base_url: vidu.url, models: 'viduq1' },
      { name: 'hailuo', type: 35, key: 'minimax-secret', base_url: minimax.url, models: 'MiniMax-Hailuo-02' },
      { name: 'wan', type: 17, key: 'dashscope-secret', base_url: ali.url, models: 'wan2.2-i2v-plus,wan2.2-t2v-plus' },
    ]) {
      const created = await root.post('/api/channel/', channel);
      expect(created.body.success, JSON.stringify(created.body)).toBe(true);
    }
    await putOptions(root, {
      GroupRatio: { default: GROUP_RATIO, vip: 1, svip: 1 },
      ModelPrice: PRICES,
      ...ALLOW_MOCK_DOWNLOADS,
    });
    const token = await root.post('/api/token/', { name: 'video', remain_quota: 50_000_000, unlimited_quota: false });
    expect(token.body.success).toBe(true);
    key = String(token.body.data.key);
    client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    await eventually(
      async () => (await client.models.list()).data.map((m) => m.id),
      (models) => Object.keys(PRICES).every((model) => models.includes(model)),
      5000,
    );
    initial = await balanceOf(db, 'video');
  }, 60_000);

  describe('Vidu (52)', () => {
    it('creates an image-to-video with the Token key, polls it to success and proxies its creation', async () => {
      const submitted = await generate({
        model: 'viduq1',
        prompt: 'a paper boat on a river',
        image: 'https://img.example/boat.png',
        duration: 5,
        resolution: '1080p',
      });
      expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
      expect(submitted.ratios).toEqual({});
      expect(submitted.body).toMatchObject({ task_id: submitted.body.id, seconds: '5', size: '1080p' });
      const sent = vidu.requests.find((r) => r.method === 'POST')!;
      expect(sent.path).toBe('/ent/v2/img2video');
      expect(sent.headers.authorization).toBe('Token vidu-secret');
      expect(sent.body).toEqual({
        model: 'viduq1',
        images: ['https://img.example/boat.png'],
        prompt: 'a paper boat on a river',
        duration: 5,
        resolution: '1080p',
        movement_amplitude: 'auto',
      });
      const [charge] = await loggedOnce(db, 2, submitted.body.id);
      expect(charge).toMatchObject({ quota: VIDU, model_name: 'viduq1' });
      expect(charge!.other).toMatchObject({ group_ratio: GROUP_RATIO });

      const done = await ended(submitted.body.id, 'SUCCESS');
      const [task] = [...vidu.tasks.values()];
      expect(done.data).toMatchObject({ progress: '100%' });
      expect(done.data.url).toMatch(new RegExp(`/v1/videos/${submitted.body.id}/content$`));
      const { rows } = await db.query('select data from tasks where task_id = $1', [submitted.body.id]);
      expect(JSON.parse(rows[0].data)).toEqual({ url: `${vidu.url}/cdn/${task!.id}.mp4` });
      expect((await content(submitted.body.id)).equals(vidu.content)).toBe(true);

      // The address came from Vidu's answer: with internal addresses refused (the default), it is not fetched.
      const option = async (value: string) =>
        expect((await root.put('/api/option/', { key: 'fetch_setting.allow_private_ip', value })).body.success).toBe(
          true,
        );
      await option('false');
      const refused = await fetch(`${gateway.url}/v1/videos/${submitted.body.id}/content`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ error: { code: 'OUTBOUND_URL_REFUSED' } });
      await option('true');
    });

    it("refuses what Vidu would, or passes Vidu's refusal on, and charges nothing", async () => {
      const charges = async () => (await db.query('select count(*)::int as n from logs where type = 2')).rows[0].n;
      const before = await charges();
      const tooMany = await generate({ model: 'viduq1', prompt: 'x', images: Array(8).fill('https://img/a.png') });
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.error).toMatchObject({ code: 'invalid_request' });
      const tooLong = await generate({ model: 'viduq1', prompt: 'x'.repeat(1501) });
      expect(tooLong.status).toBe(400);
      expect(tooLong.body.error).toMatchObject({ code: 'PromptTooLong' });
      expect(await charges()).toBe(before);
    });

    it('refunds a failed creation once with a type-6 log', async () => {
      vidu.behaviour.failNext = true;
      const submitted = await generate({ model: 'viduq1', prompt: 'something refused' });
      expect(submitted.status).toBe(200);
      expect(vidu.requests.filter((r) => r.method === 'POST').at(-1)?.path).toBe('/ent/v2/text2video');
      const failed = await ended(submitted.body.id, 'FAILURE');
      expect(failed.data.fail_reason).toBe('AuditSubmitIllegal');
      const refunds = await loggedOnce(db, 6, submitted.body.id);
      expect(refunds).toHaveLength(1);
      expect(refunds[0]).toMatchObject({ quota: VIDU, model_name: 'viduq1' });
    });
  });

  describe('MiniMax Hailuo (35)', () => {
    it("creates a video, finds its file's download address and proxies it", async () => {
      const video = await client.videos.create({
        model: 'MiniMax-Hailuo-02' as 'sora-2',
        prompt: 'a heron lifting off',
        seconds: '10' as '4',
        size: '1920x1080' as '1280x720',
      });
      expect(video).toMatchObject({ model: 'MiniMax-Hailuo-02', seconds: '10', size: '1080P' });
      const sent = minimax.requests.find((r) => r.path === '/v1/video_generation')!;
      expect(sent.body).toEqual({
        model: 'MiniMax-Hailuo-02',
        prompt: 'a heron lifting off',
        duration: 10,
        resolution: '1080P',
      });
      expect((await loggedOnce(db, 2, video.id))[0]).toMatchObject({ quota: HAILUO, model_name: 'MiniMax-Hailuo-02' });

      const done = await ended(video.id, 'SUCCESS');
      const [task] = [...minimax.videoTasks.values()];
      expect(done.data.url).toMatch(new RegExp(`/v1/videos/${video.id}/content$`));
      expect(minimax.requests.some((r) => r.path === `/v1/files/retrieve?file_id=${task!.fileId}`)).toBe(true);
      expect((await content(video.id)).equals(minimax.videoContent)).toBe(true);
    });

    it('refuses a clip length Hailuo does not render before anything is charged', async () => {
      const refused = await generate({ model: 'MiniMax-Hailuo-02', prompt: 'x', duration: 8 });
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toBe('duration must be one of 6, 10');
    });

    it('refunds a failed video once with a type-6 log', async () => {
      minimax.behaviour.failNextVideo = true;
      const submitted = await generate({ model: 'MiniMax-Hailuo-02', prompt: 'something sensitive' });
      expect(submitted.status).toBe(200);
      const failed = await ended(submitted.body.id, 'FAILURE');
      expect(failed.data.fail_reason).toBe('video generation failed: sensitive content');
      const refunds = await loggedOnce(db, 6, submitted.body.id);
      expect(refunds).toHaveLength(1);
      expect(refunds[0]).toMatchObject({ quota: HAILUO });
    });
  });

  describe('Ali Wan (17)', () => {
    it('creates an image-to-video as a DashScope async task, charged × seconds × the resolution ratio', async () => {
      const submitted = await generate({
        model: 'wan2.2-i2v-plus',
        prompt: 'the tram pulls away',
        image: 'https://img.example/tram.png',
        duration: 5,
        resolution: '1080P',
      });
      expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
      expect(submitted.ratios).toEqual({ seconds: 5, resolution: 5 });
      expect(submitted.body).toMatchObject({ seconds: '5', size: '1080P' });
      const sent = ali.requests.find((r) => r.path.endsWith('/video-synthesis'))!;
      expect(sent.headers).toMatchObject({ authorization: 'Bearer dashscope-secret', 'x-dashscope-async': 'enable' });
      expect(sent.body).toEqual({
        model: 'wan2.2-i2v-plus',
        input: { prompt: 'the tram pulls away', img_url: 'https://img.example/tram.png' },
        parameters: { duration: 5, resolution: '1080P' },
      });
      const [charge] = await loggedOnce(db, 2, submitted.body.id);
      expect(charge).toMatchObject({ quota: WAN_IMAGE, model_name: 'wan2.2-i2v-plus' });
      expect(charge!.other).toMatchObject({ seconds_ratio: 5, resolution_ratio: 5, group_ratio: GROUP_RATIO });

      const done = await ended(submitted.body.id, 'SUCCESS');
      expect(done.data.url).toMatch(new RegExp(`/v1/videos/${submitted.body.id}/content$`));
      expect((await content(submitted.body.id)).equals(ali.videoContent)).toBe(true);
    });

    it('refunds a failed text-to-video once with a type-6 log', async () => {
      ali.failNextVideo = true;
      const submitted = await generate({ model: 'wan2.2-t2v-plus', prompt: 'blocked', width: 1280, height: 720 });
      expect(submitted.status).toBe(200);
      expect(submitted.ratios).toEqual({ seconds: 5 });
      expect(ali.requests.filter((r) => r.method === 'POST').at(-1)?.body.parameters).toEqual({
        duration: 5,
        size: '1280*720',
      });
      const failed = await ended(submitted.body.id, 'FAILURE');
      expect(failed.data.fail_reason).toBe('DataInspectionFailed: Output data may contain inappropriate content.');
      const refunds = await loggedOnce(db, 6, submitted.body.id);
      expect(refunds).toHaveLength(1);
      expect(refunds[0]).toMatchObject({ quota: WAN_TEXT, model_name: 'wan2.2-t2v-plus' });
    });
  });

  it('billed every video once and balanced the books', async () => {
    expect(await gateway.stop()).toBe(0);
    const { charged, refunded } = await expectBooksBalanced(db, 'video', initial);
    expect(charged).toBe(2 * VIDU + 2 * HAILUO + WAN_IMAGE + WAN_TEXT);
    expect(refunded).toBe(VIDU + HAILUO + WAN_TEXT);
  });
});
