import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DashboardClient } from '../support/client.ts';
import { hasPostgres } from '../support/database.ts';
import { type GatewayProcess, hasRedis } from '../support/gateway.ts';
import { type MockJimeng, startMockJimeng } from '../support/mock-jimeng.ts';
import { type MockSeedance, startMockSeedance } from '../support/mock-seedance.ts';
import {
  ALLOW_MOCK_DOWNLOADS,
  balanceOf,
  cleanupsAfterAll,
  downloaded,
  expectBooksBalanced,
  genericStatus,
  loggedOnce,
  logsOfTask,
  putOptions,
  startVideoGateway,
} from '../support/video-e2e.ts';
import { eventually } from '../support/wait.ts';

/**
 * ByteDance's two video vendors through one gateway: Doubao Seedance (type 54, Ark, Bearer key) and
 * Jimeng (type 51, the visual API signed with HMAC-SHA256), on the generic video API, OpenAI's Videos
 * API and Jimeng's native route. Each video is charged once on acceptance (per-call price, or model
 * ratio / 2, × group ratio × its ratios), polled to its end, its content proxied to its owner; a
 * Seedance task priced by model ratio is settled by the tokens Ark reports (the difference charged or
 * refunded with the task id); failures are refunded once; the books balance.
 */

const GROUP_RATIO = 2;
const QUOTA_PER_UNIT = 500_000;
const TOKEN_QUOTA = 50_000_000;
const SEEDANCE_PRO = 'doubao-seedance-1-0-pro-250528';
const SEEDANCE_2 = 'doubao-seedance-2-0-260128';
const SEEDANCE_2_RATIO = 3.85;
/** Per call: 0.4 USD × group ratio, whatever the seconds (new-api bills Seedance per call or by tokens). */
const PRO_CALL = 0.4 * QUOTA_PER_UNIT * GROUP_RATIO;
/** Ratio-priced: 3.85 / 2 × QuotaPerUnit × group ratio × the tier's video_input ratio. */
const byRatio = (tier: number) => Math.round((SEEDANCE_2_RATIO / 2) * QUOTA_PER_UNIT * GROUP_RATIO * tier);
/** What Ark's tokens cost: tokens × model ratio × group ratio × tier, truncated. */
const byTokens = (tokens: number, tier: number) => Math.floor(tokens * SEEDANCE_2_RATIO * GROUP_RATIO * tier);
/** The mock's tokens: width × height × 24 fps × seconds / 1024. */
const tokens = (width: number, height: number, seconds: number) => Math.floor((width * height * 24 * seconds) / 1024);
const JIMENG_L20_CALL = 0.2 * QUOTA_PER_UNIT * GROUP_RATIO;
const JIMENG_V30_CALL = 0.3 * QUOTA_PER_UNIT * GROUP_RATIO;

const cleanups = cleanupsAfterAll();

let gateway: GatewayProcess;
let seedance: MockSeedance;
let jimeng: MockJimeng;
let db: pg.Client;
let apiKey: string;
let initial: { wallet: number; token: number };

const call = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, json, text };
};

/** The generic API's view of a task, once its status is `status`. */
const finished = (id: string, status: string) => genericStatus(gateway.url, apiKey, id, status);

const billed: { consumed: number[]; refunded: number[] } = { consumed: [], refunded: [] };

describe.skipIf(!hasPostgres() || !hasRedis())('video tasks on Volcengine', () => {
  beforeAll(async () => {
    seedance = await startMockSeedance('ark-secret');
    cleanups.push(() => seedance.close());
    jimeng = await startMockJimeng();
    cleanups.push(() => jimeng.close());
    let root: DashboardClient;
    ({ gateway, db, root } = await startVideoGateway(cleanups));
    const channels = [
      {
        name: 'seedance',
        type: 54,
        key: seedance.key,
        base_url: seedance.url,
        models: `${SEEDANCE_PRO},${SEEDANCE_2}`,
      },
      { name: 'jimeng', type: 51, key: jimeng.key, base_url: jimeng.url, models: 'jimeng_vgfm_t2v_l20,jimeng_t2v_v30' },
      // A key whose secret is wrong: the mock refuses its signatures.
      {
        name: 'jimeng-bad',
        type: 51,
        key: `${jimeng.accessKey}|d3Jvbmc=`,
        base_url: jimeng.url,
        models: 'jimeng_i2v_first_v30',
      },
    ];
    for (const channel of channels) {
      const created = await root.post('/api/channel/', channel);
      expect(created.body.success, JSON.stringify(created.body)).toBe(true);
    }
    const refused = await root.post('/api/channel/', { name: 'x', type: 51, key: 'only-an-access-key', models: 'm' });
    expect(refused.body).toMatchObject({ success: false });
    await putOptions(root, {
      GroupRatio: { default: GROUP_RATIO, vip: 1, svip: 1 },
      ModelPrice: { [SEEDANCE_PRO]: 0.4, jimeng_vgfm_t2v_l20: 0.2, jimeng_t2v_v30: 0.3, jimeng_i2v_first_v30: 0.3 },
      ModelRatio: { [SEEDANCE_2]: SEEDANCE_2_RATIO },
      ...ALLOW_MOCK_DOWNLOADS,
    });
    const token = await root.post('/api/token/', { name: 'video', remain_quota: TOKEN_QUOTA, unlimited_quota: false });
    apiKey = String(token.body.data.key);
    await eventually(
      async () => ((await call('GET', '/v1/models')).json?.data ?? []).map((m: { id: string }) => m.id),
      (models: string[]) => models.includes(SEEDANCE_PRO) && models.includes('jimeng_t2v_v30'),
      5000,
    );
    initial = await balanceOf(db, 'video');
  }, 60_000);

  describe('Seedance (54)', () => {
    it('sends the prompt with its text commands, polls to succeeded and serves the video, billed per call', async () => {
      const submitted = await call('POST', '/v1/video/generations', {
        model: SEEDANCE_PRO,
        prompt: 'a paper boat on a river',
        duration: 10,
        metadata: { resolution: '1080p', ratio: '16:9' },
        images: ['https://img.example/boat.png'],
      });
      expect(submitted.status, submitted.text).toBe(200);
      expect(JSON.parse(submitted.headers.get('x-new-api-other-ratios') ?? '')).toEqual({});
      expect(submitted.json).toMatchObject({ model: SEEDANCE_PRO, seconds: '10', size: '1080p' });
      const id: string = submitted.json.task_id;
      const sent = seedance.requests.find((r) => r.method === 'POST')!;
      expect(sent.authorization).toBe('Bearer ark-secret');
      expect(sent.body).toEqual({
        model: SEEDANCE_PRO,
        content: [
          { type: 'text', text: 'a paper boat on a river --resolution 1080p --duration 10 --ratio 16:9' },
          { type: 'image_url', image_url: { url: 'https://img.example/boat.png' } },
        ],
      });

      const done = await finished(id, 'SUCCESS');
      expect(done.data).toMatchObject({ progress: '100%', url: expect.stringMatching(`/v1/videos/${id}/content`) });
      const { rows } = await db.query('select data from tasks where task_id = $1', [id]);
      expect(JSON.parse(rows[0].data).url).toMatch(/\/videos\/cgt-.*\.mp4$/);
      expect((await downloaded(gateway.url, apiKey, id)).equals(seedance.content)).toBe(true);
      const [charge] = await loggedOnce(db, 2, id);
      expect(charge).toMatchObject({ quota: PRO_CALL, model_name: SEEDANCE_PRO });
      // A per-call price is final: the tokens Ark reports settle nothing.
      expect(await logsOfTask(db, 2, id)).toHaveLength(1);
      expect(await logsOfTask(db, 6, id)).toHaveLength(0);
      billed.consumed.push(PRO_CALL);
    });

    it('settles a task priced by model ratio by the tokens Ark reports: an overcharge refunded, an undercharge taken', async () => {
      const videoInput = 28 / 46;
      const cheap = await call('POST', '/v1/videos', {
        model: SEEDANCE_2,
        prompt: 'the same boat, in the rain',
        seconds: '5',
        metadata: { content: [{ type: 'video_url', video_url: { url: 'https://v.example/boat.mp4' } }] },
      });
      expect(cheap.status, cheap.text).toBe(200);
      expect(JSON.parse(cheap.headers.get('x-new-api-other-ratios') ?? '')).toEqual({ video_input: videoInput });
      const hd = await call('POST', '/v1/video/generations', {
        model: SEEDANCE_2,
        prompt: 'the boat at sea',
        duration: 10,
        resolution: '1080p',
      });
      expect(hd.status, hd.text).toBe(200);
      expect(JSON.parse(hd.headers.get('x-new-api-other-ratios') ?? '')).toEqual({ video_input: 51 / 46 });

      const cases = [
        { id: cheap.json.id as string, tier: videoInput, tokens: tokens(1280, 720, 5) },
        { id: hd.json.id as string, tier: 51 / 46, tokens: tokens(1920, 1080, 10) },
      ];
      for (const { id, tier, tokens: used } of cases) {
        await finished(id, 'SUCCESS');
        const actual = byTokens(used, tier);
        const delta = actual - byRatio(tier);
        // The submission's consume log is written in a batch, the settlement's with the task's success.
        const logs = await eventually(
          async () => [...(await logsOfTask(db, 2, id)), ...(await logsOfTask(db, 6, id))],
          (rows) => rows.length === 2,
          5000,
        );
        const charge = logs.find((log) => log.other.actual_quota === undefined);
        const settled = logs.find((log) => log.other.actual_quota !== undefined);
        expect(charge).toMatchObject({ type: 2, quota: byRatio(tier), model_name: SEEDANCE_2 });
        expect(charge!.other).toMatchObject({ video_input_ratio: tier, group_ratio: GROUP_RATIO });
        expect(settled).toMatchObject({
          type: delta > 0 ? 2 : 6,
          quota: Math.abs(delta),
          model_name: SEEDANCE_2,
          other: { task_id: id, total_tokens: used, pre_consumed_quota: byRatio(tier), actual_quota: actual },
        });
        const { rows } = await db.query('select quota from tasks where task_id = $1', [id]);
        expect(Number(rows[0].quota)).toBe(actual);
        billed.consumed.push(byRatio(tier));
        (delta > 0 ? billed.consumed : billed.refunded).push(Math.abs(delta));
      }
      expect(cases.map(({ tier, tokens: used }) => Math.sign(byTokens(used, tier) - byRatio(tier)))).toEqual([-1, 1]);
    });

    it('refuses what Ark would refuse before anything is charged', async () => {
      const bad = await call('POST', '/v1/video/generations', { model: SEEDANCE_PRO, prompt: 'x', duration: 30 });
      expect(bad.status).toBe(400);
      expect(bad.json.error).toMatchObject({ code: 'invalid_request' });
    });

    it('refunds a failed task once with a type-6 log', async () => {
      seedance.behaviour.failNext = true;
      const submitted = await call('POST', '/v1/video/generations', {
        model: SEEDANCE_PRO,
        prompt: 'something blocked',
      });
      expect(submitted.status, submitted.text).toBe(200);
      const id: string = submitted.json.task_id;
      expect((await loggedOnce(db, 2, id))[0]?.quota).toBe(PRO_CALL);
      const failed = await finished(id, 'FAILURE');
      expect(failed.data.fail_reason).toBe('The output video may contain sensitive content');
      const refunds = await loggedOnce(db, 6, id);
      expect(refunds).toHaveLength(1);
      expect(refunds[0]).toMatchObject({ quota: PRO_CALL, model_name: SEEDANCE_PRO });
      billed.consumed.push(PRO_CALL);
      billed.refunded.push(PRO_CALL);
    });
  });

  describe('Jimeng (51)', () => {
    it('submits signed through the generic API, polls to done and serves the video, billed per call', async () => {
      const submitted = await call('POST', '/v1/video/generations', {
        model: 'jimeng_vgfm_t2v_l20',
        prompt: 'a lantern festival',
        duration: 10,
        aspect_ratio: '9:16',
      });
      expect(submitted.status, submitted.text).toBe(200);
      expect(submitted.json).toMatchObject({ seconds: '10', size: '9:16' });
      const id: string = submitted.json.task_id;
      const sent = jimeng.requests.find((r) => r.action === 'CVSync2AsyncSubmitTask')!;
      expect(sent.body).toEqual({
        req_key: 'jimeng_vgfm_t2v_l20',
        prompt: 'a lantern festival',
        seed: -1,
        aspect_ratio: '9:16',
        frames: 241,
      });
      expect(sent.headers.authorization).toMatch(
        /^HMAC-SHA256 Credential=AKLTmockAccessKey\/\d{8}\/cn-north-1\/cv\/request, /,
      );
      await finished(id, 'SUCCESS');
      expect(
        jimeng.requests.some((r) => r.action === 'CVSync2AsyncGetResult' && r.body.req_key === 'jimeng_vgfm_t2v_l20'),
      ).toBe(true);
      expect((await downloaded(gateway.url, apiKey, id)).equals(jimeng.content)).toBe(true);
      expect((await loggedOnce(db, 2, id))[0]).toMatchObject({
        quota: JIMENG_L20_CALL,
        model_name: 'jimeng_vgfm_t2v_l20',
      });
      billed.consumed.push(JIMENG_L20_CALL);
    });

    it("serves Jimeng's native route in its own shape under the gateway's task id", async () => {
      const native = (action: string, body: unknown) =>
        call('POST', `/jimeng/?Action=${action}&Version=2022-08-31`, body);
      const submitted = await native('CVSync2AsyncSubmitTask', {
        req_key: 'jimeng_t2v_v30',
        prompt: 'koi in a pond',
        frames: 121,
        aspect_ratio: '1:1',
        seed: 5,
      });
      expect(submitted.status, submitted.text).toBe(200);
      expect(submitted.json).toMatchObject({
        code: 10000,
        message: 'Success',
        data: { task_id: expect.stringMatching(/^video_/) },
      });
      const id: string = submitted.json.data.task_id;
      expect(jimeng.requests.filter((r) => r.action === 'CVSync2AsyncSubmitTask').at(-1)?.body).toEqual({
        req_key: 'jimeng_t2v_v30',
        prompt: 'koi in a pond',
        seed: 5,
        aspect_ratio: '1:1',
        frames: 121,
      });
      const result = await eventually(
        async () => (await native('CVSync2AsyncGetResult', { req_key: 'jimeng_t2v_v30', task_id: id })).json,
        (body) => body?.data?.status === 'done',
        10_000,
      );
      expect(result).toMatchObject({
        code: 10000,
        data: { status: 'done', video_url: expect.stringContaining('/videos/') },
      });
      expect((await downloaded(gateway.url, apiKey, id)).equals(jimeng.content)).toBe(true);
      expect((await loggedOnce(db, 2, id))[0]).toMatchObject({ quota: JIMENG_V30_CALL, model_name: 'jimeng_t2v_v30' });
      billed.consumed.push(JIMENG_V30_CALL);

      const unknown = await native('CVSync2AsyncGetResult', { req_key: 'jimeng_t2v_v30', task_id: 'video_nope' });
      expect(unknown.json).toMatchObject({ code: 10000, data: { status: 'not_found' } });
      const badAction = await native('CVProcess', { req_key: 'jimeng_t2v_v30' });
      expect(badAction.status).toBe(400);
      expect(badAction.json).toMatchObject({ code: 50400, data: null });
      const noKey = await fetch(`${gateway.url}/jimeng/?Action=CVSync2AsyncGetResult&Version=2022-08-31`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ req_key: 'jimeng_t2v_v30', task_id: id }),
      });
      expect(noKey.status).toBe(401);
    });

    it('passes on a refused signature and charges nothing', async () => {
      const refused = await call('POST', '/v1/video/generations', { model: 'jimeng_i2v_first_v30', prompt: 'x' });
      expect(refused.status).toBe(401);
      expect(refused.json.error).toMatchObject({ code: 'SignatureDoesNotMatch' });
      const { rows } = await db.query(`select count(*)::int as n from logs where model_name = 'jimeng_i2v_first_v30'`);
      expect(rows[0].n).toBe(0);
    });

    it('refunds a failed task once with a type-6 log, answered on the native route with its reason', async () => {
      jimeng.behaviour.failNext = true;
      const submitted = await call('POST', '/jimeng/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31', {
        req_key: 'jimeng_vgfm_t2v_l20',
        prompt: 'something risky',
      });
      const id: string = submitted.json.data.task_id;
      const failed = await finished(id, 'FAILURE');
      expect(failed.data.fail_reason).toBe('Post Text Risk Not Pass');
      const result = await call('POST', '/jimeng/?Action=CVSync2AsyncGetResult&Version=2022-08-31', {
        req_key: 'jimeng_vgfm_t2v_l20',
        task_id: id,
      });
      expect(result.json).toMatchObject({ code: 50500, message: 'Post Text Risk Not Pass', data: null });
      const refunds = await loggedOnce(db, 6, id);
      expect(refunds).toHaveLength(1);
      expect(refunds[0]).toMatchObject({ quota: JIMENG_L20_CALL });
      billed.consumed.push(JIMENG_L20_CALL);
      billed.refunded.push(JIMENG_L20_CALL);
    });
  });

  it('billed every video once and balanced the books', async () => {
    expect(await gateway.stop()).toBe(0);
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const { charged, refunded } = await expectBooksBalanced(db, 'video', initial);
    expect(charged).toBe(sum(billed.consumed));
    expect(refunded).toBe(sum(billed.refunded));
  });
});
