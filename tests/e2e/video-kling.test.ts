import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { signKlingToken } from '../../gateway/src/relay/protocols/kling/jwt.ts';
import type { DashboardClient } from '../support/client.ts';
import { hasPostgres } from '../support/database.ts';
import { type GatewayProcess, hasRedis } from '../support/gateway.ts';
import { type MockKling, startMockKling } from '../support/mock-kling.ts';
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
 * Kling (type 50) through one gateway, driven as its clients drive it: new-api's generic video API and
 * Kling's own /kling/v1/videos routes, on the same tasks. The mock checks every request's JWT as Kling
 * does. Videos are billed once on acceptance at the per-call price × group ratio (Kling adds no ratio,
 * as in new-api), polled to their end, their content proxied to the owner, failures refunded once.
 */

const GROUP_RATIO = 2;
const QUOTA_PER_UNIT = 500_000;
const PRICES = { 'kling-v1': 0.2, 'kling-v1-6': 0.35 };
const V1 = PRICES['kling-v1'] * QUOTA_PER_UNIT * GROUP_RATIO;
const V16 = Math.round(PRICES['kling-v1-6'] * QUOTA_PER_UNIT * GROUP_RATIO);

const cleanups = cleanupsAfterAll();

let gateway: GatewayProcess;
let mock: MockKling;
let db: pg.Client;
let apiKey: string;
let initial: { wallet: number; token: number };

const call = async (method: string, path: string, body?: unknown, key = apiKey) => {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, headers: response.headers, body: json };
};

const generic = (id: string, status: string) => genericStatus(gateway.url, apiKey, id, status);
const native = (endpoint: string, id: string, status: string) =>
  eventually(
    async () => (await call('GET', `/kling/v1/videos/${endpoint}/${id}`)).body,
    (body) => body.data?.task_status === status,
    10_000,
  );

describe.skipIf(!hasPostgres() || !hasRedis())('video tasks (Kling)', () => {
  beforeAll(async () => {
    mock = await startMockKling('ak-test', 'sk-test-secret');
    cleanups.push(() => mock.close());
    let root: DashboardClient;
    ({ gateway, db, root } = await startVideoGateway(cleanups));
    const refused = await root.post('/api/channel/', {
      name: 'bad',
      type: 50,
      key: 'no-secret',
      base_url: mock.url,
      models: 'kling-v1',
    });
    expect(refused.body).toMatchObject({ success: false, code: 'CHANNEL_KEY_INVALID' });
    const created = await root.post('/api/channel/', {
      name: 'kling',
      type: 50,
      key: mock.key,
      base_url: mock.url,
      models: 'kling-v1,kling-v1-6',
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
    await putOptions(root, {
      GroupRatio: { default: GROUP_RATIO, vip: 1, svip: 1 },
      ModelPrice: PRICES,
      ...ALLOW_MOCK_DOWNLOADS,
    });
    const token = await root.post('/api/token/', { name: 'kling', remain_quota: 50_000_000, unlimited_quota: false });
    expect(token.body.success).toBe(true);
    apiKey = String(token.body.data.key);
    await eventually(
      async () => ((await call('GET', '/v1/models')).body.data ?? []).map((m: { id: string }) => m.id),
      (models: string[]) => models.includes('kling-v1-6'),
      5000,
    );
    initial = await balanceOf(db, 'kling');
  }, 60_000);

  it("checks Kling's JWT as Kling does: signature, issuer, nbf and exp", async () => {
    const now = Math.floor(Date.now() / 1000);
    const ask = async (authorization?: string) => {
      const response = await fetch(`${mock.url}/v1/videos/text2video/none`, {
        headers: authorization ? { authorization } : {},
      });
      return { status: response.status, code: ((await response.json()) as { code: number }).code };
    };
    expect(await ask()).toEqual({ status: 401, code: 1001 });
    expect(await ask('Bearer not-a-jwt')).toEqual({ status: 401, code: 1002 });
    expect(await ask(`Bearer ${signKlingToken('ak-test', 'wrong-secret', now)}`)).toEqual({ status: 401, code: 1000 });
    expect(await ask(`Bearer ${signKlingToken('someone-else', 'sk-test-secret', now)}`)).toEqual({
      status: 401,
      code: 1000,
    });
    expect(await ask(`Bearer ${signKlingToken('ak-test', 'sk-test-secret', now - 1900)}`)).toEqual({
      status: 401,
      code: 1004,
    });
    expect(await ask(`Bearer ${signKlingToken('ak-test', 'sk-test-secret', now + 60)}`)).toEqual({
      status: 401,
      code: 1003,
    });
    // A good token reaches the route: an unknown task is Kling's 404.
    expect(await ask(`Bearer ${signKlingToken('ak-test', 'sk-test-secret', now)}`)).toEqual({
      status: 404,
      code: 1203,
    });
  });

  it('serves the generic video API: text2video, polled to SUCCESS, content downloaded, charged per call', async () => {
    const submitted = await call('POST', '/v1/video/generations', {
      model: 'kling-v1',
      prompt: 'a red fox in the snow',
      duration: 10,
      width: 1280,
      height: 720,
      metadata: { negative_prompt: 'blur', cfg_scale: 0.4 },
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    expect(JSON.parse(submitted.headers.get('x-new-api-other-ratios') ?? 'null')).toEqual({});
    const { id } = submitted.body as { id: string };
    expect(submitted.body).toMatchObject({ task_id: id, model: 'kling-v1', seconds: '10', size: '16:9' });
    expect(id).toMatch(/^video_[0-9a-f]{32}$/);
    const sent = mock.requests.findLast((r) => r.method === 'POST')!;
    expect(sent.path).toBe('/v1/videos/text2video');
    expect(sent.body).toEqual({
      model_name: 'kling-v1',
      prompt: 'a red fox in the snow',
      negative_prompt: 'blur',
      cfg_scale: 0.4,
      mode: 'std',
      duration: '10',
      aspect_ratio: '16:9',
    });
    expect(mock.tasks.has(id)).toBe(false);

    const done = await generic(id, 'SUCCESS');
    const [upstream] = [...mock.tasks.values()];
    expect(done.data).toMatchObject({ task_id: id, action: 'TEXT2VIDEO', progress: '100%' });
    expect(done.data.url).toMatch(new RegExp(`/v1/videos/${id}/content$`));
    expect(mock.requests.some((r) => r.path === `/v1/videos/text2video/${upstream!.task_id}`)).toBe(true);
    expect((await downloaded(gateway.url, apiKey, id)).equals(mock.content)).toBe(true);

    const [charge] = await loggedOnce(db, 2, id);
    expect(charge).toMatchObject({ quota: V1, model_name: 'kling-v1' });
    expect(charge!.other).toMatchObject({ group_ratio: GROUP_RATIO, model_price: PRICES['kling-v1'] });
  });

  it('makes an image video through the generic API and asks image2video after it', async () => {
    const submitted = await call('POST', '/v1/video/generations', {
      model: 'kling-v1-6',
      prompt: 'the fox turns its head',
      image: 'data:image/png;base64,iVBORw0KGgo=',
      mode: 'pro',
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    const sent = mock.requests.findLast((r) => r.method === 'POST')!;
    expect(sent.path).toBe('/v1/videos/image2video');
    expect(sent.body).toMatchObject({ model_name: 'kling-v1-6', image: 'iVBORw0KGgo=', mode: 'pro', duration: '5' });
    // The mock finds a task only under the endpoint that made it: SUCCESS proves the queries went there.
    expect((await generic(submitted.body.id, 'SUCCESS')).data.action).toBe('IMAGE2VIDEO');
    expect((await loggedOnce(db, 2, submitted.body.id))[0]?.quota).toBe(V16);
  });

  it("serves Kling's own routes in Kling's shapes under the gateway's task id", async () => {
    const submitted = await call('POST', '/kling/v1/videos/text2video', {
      model_name: 'kling-v1-6',
      prompt: 'waves on a rocky shore',
      mode: 'pro',
      duration: '5',
      aspect_ratio: '1:1',
      camera_control: { type: 'simple', config: { zoom: 5 } },
      callback_url: 'https://client.example/hook',
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    expect(submitted.body).toMatchObject({ code: 0, message: 'SUCCEED', data: { task_status: 'submitted' } });
    const id = submitted.body.data.task_id as string;
    expect(id).toMatch(/^video_[0-9a-f]{32}$/);
    expect(typeof submitted.body.request_id).toBe('string');
    const sent = mock.requests.findLast((r) => r.method === 'POST')!;
    expect(sent.body).toEqual({
      model_name: 'kling-v1-6',
      prompt: 'waves on a rocky shore',
      mode: 'pro',
      duration: '5',
      aspect_ratio: '1:1',
      camera_control: { type: 'simple', config: { zoom: 5 } },
    });

    const done = await native('text2video', id, 'succeed');
    const upstream = [...mock.tasks.values()].at(-1)!;
    expect(done).toMatchObject({
      code: 0,
      data: {
        task_id: id,
        task_status_msg: '',
        task_result: { videos: [{ id, url: `${mock.url}/files/${upstream.task_id}.mp4`, duration: '5' }] },
      },
    });
    expect(done.data.created_at).toBeGreaterThan(1_000_000_000_000);
    expect((await loggedOnce(db, 2, id))[0]?.quota).toBe(V16);
    const content = await fetch(`${gateway.url}/v1/videos/${id}/content`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(Buffer.from(await content.arrayBuffer()).equals(mock.content)).toBe(true);

    // image2video animates an image without a prompt; the model defaults to kling-v1 as Kling's does.
    const image = await call('POST', '/kling/v1/videos/image2video', { image: 'https://img.example/a.png' });
    expect(image.status, JSON.stringify(image.body)).toBe(200);
    expect(mock.requests.findLast((r) => r.method === 'POST')?.body).toEqual({
      model_name: 'kling-v1',
      image: 'https://img.example/a.png',
      mode: 'std',
      duration: '5',
    });
    expect((await native('image2video', image.body.data.task_id, 'succeed')).data.task_result.videos).toHaveLength(1);
    expect((await loggedOnce(db, 2, image.body.data.task_id))[0]?.quota).toBe(V1);
  });

  it("answers refusals in Kling's error shape, charging nothing", async () => {
    const before = Number((await db.query('select count(*) as n from logs where type = 2')).rows[0].n);
    const bad = await call('POST', '/kling/v1/videos/text2video', { prompt: 'x' }, 'sk-not-a-key');
    expect(bad).toMatchObject({ status: 401, body: { code: 1000 } });
    expect(typeof bad.body.message).toBe('string');
    expect(await call('POST', '/kling/v1/videos/text2video', { prompt: 'x', mode: 'ultra' })).toMatchObject({
      status: 400,
      body: { code: 1201, message: 'mode must be std or pro' },
    });
    expect(await call('POST', '/kling/v1/videos/image2video', { prompt: 'no image' })).toMatchObject({
      status: 400,
      body: { code: 1201 },
    });
    expect(await call('POST', '/kling/v1/videos/text2video', { image: 'https://img.example/a.png' })).toMatchObject({
      status: 400,
      body: { code: 1201, message: 'prompt is required' },
    });
    const broken = await fetch(`${gateway.url}/kling/v1/videos/text2video`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: '{"prompt": ',
    });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ code: 1201 });
    expect(await call('GET', '/kling/v1/videos/text2video/video_unknown')).toMatchObject({
      status: 404,
      body: { code: 1203 },
    });
    mock.behaviour.refuseNext = true;
    expect(await call('POST', '/kling/v1/videos/text2video', { prompt: 'x' })).toMatchObject({
      status: 429,
      body: { code: 1102 },
    });
    mock.behaviour.refuseNext = true;
    expect(await call('POST', '/v1/video/generations', { model: 'kling-v1', prompt: 'x' })).toMatchObject({
      status: 429,
      body: { error: { code: '1102' } },
    });
    expect(
      await call('POST', '/v1/video/generations', { model: 'kling-v1', prompt: 'x', size: '640x480' }),
    ).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    expect(Number((await db.query('select count(*) as n from logs where type = 2')).rows[0].n)).toBe(before);
  });

  it('refunds a failed video once with a type-6 log', async () => {
    mock.behaviour.failNext = true;
    const submitted = await call('POST', '/kling/v1/videos/text2video', { model_name: 'kling-v1', prompt: 'blocked' });
    expect(submitted.status).toBe(200);
    const id = submitted.body.data.task_id as string;
    expect((await loggedOnce(db, 2, id))[0]?.quota).toBe(V1);
    const failed = await native('text2video', id, 'failed');
    expect(failed.data).toMatchObject({ task_status_msg: 'Failure to pass the risk control system' });
    expect((await generic(id, 'FAILURE')).data.fail_reason).toBe('Failure to pass the risk control system');
    const refunds = await loggedOnce(db, 6, id);
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ quota: V1, model_name: 'kling-v1' });
    const content = await fetch(`${gateway.url}/v1/videos/${id}/content`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(content.status).toBe(400);
  });

  it('billed every video once and balanced the books', async () => {
    expect(await gateway.stop()).toBe(0);
    const q = async (text: string) => (await db.query(text)).rows[0] as Record<string, any>;
    const { charged, refunded } = await expectBooksBalanced(db, 'kling', initial);
    expect(charged).toBe(V1 + V16 + V16 + V1 + V1);
    expect(refunded).toBe(V1);
    const tasks = await q(`select sum(quota) as s, count(*)::int as n from tasks where platform = 'video'`);
    expect({ n: tasks.n, s: Number(tasks.s) }).toEqual({ n: 5, s: charged });
  });
});
