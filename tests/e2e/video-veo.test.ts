import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DashboardClient } from '../support/client.ts';
import { hasPostgres } from '../support/database.ts';
import { type GatewayProcess, hasRedis } from '../support/gateway.ts';
import { type MockGemini, startMockGemini } from '../support/mock-gemini.ts';
import {
  createServiceAccount,
  type MockVertex,
  startMockVertex,
  type TestServiceAccount,
} from '../support/mock-vertex.ts';
import {
  ALLOW_MOCK_DOWNLOADS,
  balanceOf,
  cleanupsAfterAll,
  downloaded,
  expectBooksBalanced,
  genericStatus,
  loggedOnce,
  putOptions,
  startVideoGateway,
} from '../support/video-e2e.ts';
import { eventually } from '../support/wait.ts';

/**
 * Google's Veo through one gateway, on a Gemini channel (type 24, API key) and a Vertex channel
 * (type 41, service account): submitted through the generic and the OpenAI video APIs, billed once
 * on acceptance (per-call price × group ratio × seconds × resolution ratio), polled to their end,
 * content downloaded by the gateway with the channel's credentials for the owner, failures refunded
 * once, chat models refused before anything is charged, books balanced.
 */

const GROUP_RATIO = 2;
const QUOTA_PER_UNIT = 500_000;
const GEMINI_KEY = 'AIza-veo-e2e-key-0123456789';
/** veo-3.0-generate-001 at new-api's default 0.4 USD, 6 seconds at 720p (resolution ratio 1). */
const GEMINI_SIX = 0.4 * QUOTA_PER_UNIT * GROUP_RATIO * 6;
/** veo-3.0-fast-generate-001 at 0.15 USD, 4 seconds at 720p. */
const VERTEX_FOUR = 0.15 * QUOTA_PER_UNIT * GROUP_RATIO * 4;
/** veo-3.0-generate-001, Veo's default 8 seconds. */
const GEMINI_EIGHT = 0.4 * QUOTA_PER_UNIT * GROUP_RATIO * 8;

const cleanups = cleanupsAfterAll();

let gateway: GatewayProcess;
let gemini: MockGemini;
let vertex: MockVertex;
let account: TestServiceAccount;
let db: pg.Client;
let apiKey: string;
let initial: { wallet: number; token: number };

const call = (path: string, init: { method?: string; body?: unknown } = {}) =>
  fetch(`${gateway.url}${path}`, {
    method: init.method ?? (init.body ? 'POST' : 'GET'),
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
  });

const video = (id: string, status: string) =>
  eventually(
    async () => (await (await call(`/v1/videos/${id}`)).json()) as Record<string, any>,
    (body) => body.status === status,
    10_000,
  );

describe.skipIf(!hasPostgres() || !hasRedis())('video tasks (Veo on Gemini and Vertex)', () => {
  beforeAll(async () => {
    [gemini, vertex] = await Promise.all([startMockGemini(), startMockVertex()]);
    cleanups.push(
      () => gemini.close(),
      () => vertex.close(),
    );
    gemini.behaviour = { validKeys: [GEMINI_KEY] };
    account = createServiceAccount(vertex.tokenUri, { project: 'veo-e2e', name: 'gateway' });
    vertex.trust(account);
    let root: DashboardClient;
    ({ gateway, db, root } = await startVideoGateway(cleanups));
    const channels = [
      {
        name: 'gemini',
        type: 24,
        key: GEMINI_KEY,
        base_url: gemini.url,
        models: 'veo-3.0-generate-001,gemini-2.5-flash',
      },
      {
        name: 'vertex',
        type: 41,
        key: account.json,
        base_url: vertex.url,
        other: 'us-central1',
        models: 'veo-3.0-fast-generate-001',
      },
    ];
    for (const channel of channels) {
      const created = await root.post('/api/channel/', channel);
      expect(created.body.success, JSON.stringify(created.body)).toBe(true);
    }
    await putOptions(root, {
      GroupRatio: { default: GROUP_RATIO, vip: 1, svip: 1 },
      ModelPrice: { 'veo-3.0-generate-001': 0.4, 'veo-3.0-fast-generate-001': 0.15 },
      // Gemini's download redirects to a signed address on the mock.
      ...ALLOW_MOCK_DOWNLOADS,
    });
    const token = await root.post('/api/token/', { name: 'veo', remain_quota: 50_000_000, unlimited_quota: false });
    expect(token.body.success).toBe(true);
    apiKey = String(token.body.data.key);
    await eventually(
      async () => ((await (await call('/v1/models')).json()) as { data: Array<{ id: string }> }).data.map((m) => m.id),
      (models) => models.includes('veo-3.0-generate-001') && models.includes('veo-3.0-fast-generate-001'),
      5000,
    );
    initial = await balanceOf(db, 'veo');
  }, 60_000);

  it('makes a Gemini video through the generic API, with the key, and downloads it without showing the key', async () => {
    const response = await call('/v1/video/generations', {
      body: { model: 'veo-3.0-generate-001', prompt: 'a lighthouse at dusk', duration: 6, width: 1280, height: 720 },
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.headers.get('x-new-api-other-ratios') ?? '{}')).toEqual({ seconds: 6, resolution: 1 });
    const submitted = (await response.json()) as { id: string; task_id: string; seconds: string; size: string };
    expect(submitted).toMatchObject({ task_id: submitted.id, seconds: '6', size: '1280x720' });
    const sent = gemini.requests.find((r) => r.action === 'predictLongRunning')!;
    expect(sent.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    expect(sent.body).toEqual({
      instances: [{ prompt: 'a lighthouse at dusk' }],
      parameters: { resolution: '720p', aspectRatio: '16:9', durationSeconds: 6, sampleCount: 1 },
    });
    const [charge] = await loggedOnce(db, 2, submitted.id);
    expect(charge).toMatchObject({ quota: GEMINI_SIX, model_name: 'veo-3.0-generate-001' });
    expect(charge!.other).toMatchObject({ seconds_ratio: 6, resolution_ratio: 1, group_ratio: GROUP_RATIO });

    const task = await genericStatus(gateway.url, apiKey, submitted.id, 'SUCCESS');
    expect(task.data).toMatchObject({ task_id: submitted.id, progress: '100%' });
    expect(task.data.url).toMatch(new RegExp(`/v1/videos/${submitted.id}/content$`));
    expect(JSON.stringify(task)).not.toContain(GEMINI_KEY);
    const { rows } = await db.query('select data from tasks where task_id = $1', [submitted.id]);
    expect(String(rows[0].data)).not.toContain(GEMINI_KEY);

    expect((await downloaded(gateway.url, apiKey, submitted.id)).equals(gemini.veo.content)).toBe(true);
    // The file was asked for with the key; the signed address it redirected to was not given it.
    const file = gemini.requests.find((r) => r.path.endsWith(':download'))!;
    expect(file.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    expect(gemini.requests.find((r) => r.path.startsWith('/download/'))?.headers['x-goog-api-key']).toBeUndefined();
  });

  it("makes a Vertex video through the Videos API with the service account's token and serves its inline bytes", async () => {
    const response = await call('/v1/videos', {
      body: { model: 'veo-3.0-fast-generate-001', prompt: 'a kite', seconds: '4', size: '720x1280' },
    });
    expect(response.status).toBe(200);
    const submitted = (await response.json()) as { id: string };
    const sent = vertex.requests.find((r) => r.action === 'predictLongRunning')!;
    expect(sent).toMatchObject({ project: 'veo-e2e', location: 'us-central1', model: 'veo-3.0-fast-generate-001' });
    expect(sent.headers.authorization).toBe(`Bearer ${vertex.grants[0]!.token}`);
    expect(sent.body.parameters).toEqual({
      resolution: '720p',
      aspectRatio: '9:16',
      durationSeconds: 4,
      sampleCount: 1,
    });
    expect((await loggedOnce(db, 2, submitted.id))[0]).toMatchObject({ quota: VERTEX_FOUR });

    expect(await video(submitted.id, 'completed')).toMatchObject({ progress: 100, seconds: '4', size: '720x1280' });
    // Nothing of the video is kept: the content route asks the operation again and decodes it.
    const { rows } = await db.query('select data from tasks where task_id = $1', [submitted.id]);
    expect(String(rows[0].data ?? '').length).toBeLessThan(200);
    expect((await downloaded(gateway.url, apiKey, submitted.id)).equals(vertex.veo.content)).toBe(true);
    expect(vertex.requests.filter((r) => r.action === 'fetchPredictOperation').length).toBeGreaterThanOrEqual(3);
  });

  it('refuses a chat model and bad fields on the video routes before anything is charged', async () => {
    const before = await db.query('select count(*)::int as n from logs where type = 2');
    const chat = await call('/v1/videos', { body: { model: 'gemini-2.5-flash', prompt: 'a kite' } });
    expect(chat.status).toBe(400);
    expect(((await chat.json()) as any).error.message).toMatch(/not a Veo video model/);
    const seconds = await call('/v1/video/generations', {
      body: { model: 'veo-3.0-generate-001', prompt: 'a kite', duration: 5 },
    });
    expect(seconds.status).toBe(400);
    expect(((await seconds.json()) as any).error.message).toBe('seconds must be 4, 6 or 8');
    expect(gemini.requests.filter((r) => r.action === 'predictLongRunning')).toHaveLength(1);
    const after = await db.query('select count(*)::int as n from logs where type = 2');
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it('refunds a failed video once with a type-6 log', async () => {
    gemini.veo.failNext = 'Veo could not render this prompt.';
    const response = await call('/v1/videos', { body: { model: 'veo-3.0-generate-001', prompt: 'something odd' } });
    expect(response.status).toBe(200);
    const submitted = (await response.json()) as { id: string };
    expect((await loggedOnce(db, 2, submitted.id))[0]?.quota).toBe(GEMINI_EIGHT);
    const failed = await video(submitted.id, 'failed');
    expect(failed.error).toMatchObject({ message: 'Veo could not render this prompt.' });
    const refunds = await loggedOnce(db, 6, submitted.id);
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ quota: GEMINI_EIGHT, model_name: 'veo-3.0-generate-001' });
    expect((await call(`/v1/videos/${submitted.id}/content`)).status).toBe(400);
  });

  it('billed every video once and balanced the books', async () => {
    expect(await gateway.stop()).toBe(0);
    const { charged, refunded } = await expectBooksBalanced(db, 'veo', initial);
    expect(charged).toBe(GEMINI_SIX + VERTEX_FOUR + GEMINI_EIGHT);
    expect(refunded).toBe(GEMINI_EIGHT);
  });
});
