import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockMidjourney, startMockMidjourney } from '../support/mock-midjourney.ts';
import { type MockRealtime, realtimeUsage, startMockRealtime } from '../support/mock-realtime.ts';
import { type MockSora, startMockSora } from '../support/mock-sora.ts';
import { type MockSuno, startMockSuno } from '../support/mock-suno.ts';
import { billed as billedBy } from '../support/usage.ts';
import { eventually, waitFor } from '../support/wait.ts';

// Tokens in the `auto` group on the task routes (Midjourney, Suno) and on Realtime walk AutoGroups as
// the relay does (reference §4.2; tests/relay/auto-group.test.ts): the first group with a channel for
// the model serves, with cross_group_retry a refused submission moves to the next group, and the
// group that served is the one billed and logged. The ratios differ so that a bill in the wrong group
// cannot pass; every quota is the formula worked out by hand, to the unit.
const RATIOS = { default: 0.5, vip: 2, svip: 3 };
const QUOTA_PER_UNIT = 500_000;
const PRICES = { mj_imagine: 0.1, mj_describe: 0.05, mj_upscale: 0.04, suno_music: 0.2, 'sora-2': 0.3 };
/** Per-call price × QuotaPerUnit × group ratio (× the task's own ratios: a Sora video's seconds). */
const taskQuota = (model: keyof typeof PRICES, group: keyof typeof RATIOS, ratio = 1) =>
  Math.round(PRICES[model] * QUOTA_PER_UNIT * RATIOS[group] * ratio);
const RT_USAGE = { textIn: 100, audioIn: 0, textOut: 50, audioOut: 0 };
/** (text in + text out × completion ratio 1) × model ratio 1 × group ratio. */
const realtimeQuota = (group: keyof typeof RATIOS) => Math.round((100 + 50) * RATIOS[group]);

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let mj: MockMidjourney;
let suno: MockSuno;
let realtime: MockRealtime;
let sora: MockSora;
const channelIds: Record<string, number> = {};

beforeAll(async () => {
  mj = await startMockMidjourney('mj-secret');
  suno = await startMockSuno('suno-key');
  realtime = await startMockRealtime(['rt-key']);
  sora = await startMockSora('sora-key');
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  await gateway.options.setMany({
    GroupRatio: JSON.stringify(RATIOS),
    // svip comes first but root (group default) may not use it: UserUsableGroups is default and vip.
    AutoGroups: JSON.stringify(['svip', 'vip', 'default']),
    ModelPrice: JSON.stringify(PRICES),
    ModelRatio: JSON.stringify({ 'rt-model': 1, 'rt-refused': 1 }),
    CompletionRatio: JSON.stringify({ 'rt-model': 1, 'rt-refused': 1 }),
    RetryTimes: '0',
  });
  // vip (the first usable auto group) serves mj_describe and rt-refused only, with keys its upstream refuses;
  // default serves everything. svip serves everything too, but root may not use it.
  const channels = [
    { name: 'mj-svip', type: 2, group: 'svip', key: 'mj-secret', base_url: mj.url, models: 'mj_imagine,mj_describe' },
    { name: 'mj-vip', type: 2, group: 'vip', key: 'mj-wrong', base_url: mj.url, models: 'mj_describe' },
    {
      name: 'mj-default',
      type: 2,
      group: 'default',
      key: 'mj-secret',
      base_url: mj.url,
      models: 'mj_imagine,mj_describe',
    },
    { name: 'sora-vip', type: 55, group: 'vip', key: 'sora-wrong', base_url: sora.url, models: 'sora-2' },
    { name: 'sora-default', type: 55, group: 'default', key: 'sora-key', base_url: sora.url, models: 'sora-2' },
    { name: 'suno-default', type: 36, group: 'default', key: 'suno-key', base_url: suno.url, models: 'suno_music' },
    { name: 'rt-vip', type: 1, group: 'vip', key: 'rt-wrong', base_url: realtime.url, models: 'rt-refused' },
    {
      name: 'rt-default',
      type: 1,
      group: 'default',
      key: 'rt-key',
      base_url: realtime.url,
      models: 'rt-model,rt-refused',
    },
  ];
  for (const channel of channels) {
    const created = await root.post('/api/channel/', channel);
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  }
  const rows = await gateway.store.db.selectFrom('channels').select(['id', 'name']).execute();
  for (const row of rows) channelIds[row.name] = row.id;
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await mj?.close();
  await suno?.close();
  await realtime?.close();
  await sora?.close();
});

beforeEach(() => {
  mj.requests.length = 0;
  suno.requests.length = 0;
  realtime.connections.length = 0;
  sora.requests.length = 0;
});

/** A new token of root's; the first request of a new key may race the routing index, so it waits for the model list. */
async function tokenKey(body: Record<string, unknown>): Promise<string> {
  const token = await root.post('/api/token/', { name: `auto-${Math.random()}`, unlimited_quota: true, ...body });
  expect(token.body.success).toBe(true);
  const key = String(token.body.data.key);
  await eventually(
    async () => {
      const answer = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      return ((await answer.json()) as { data?: unknown[] }).data?.length ?? 0;
    },
    (n) => n > 0,
    3000,
  );
  return key;
}

const post = (key: string, path: string, body: unknown) =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** The secrets (thus the channels) the Midjourney submissions were sent with. */
const mjSecretsUsed = () =>
  mj.requests.filter((r) => r.path.includes('/submit/')).map((r) => r.headers['mj-api-secret']);

async function mjRow(mjId: string) {
  return gateway.store.db
    .selectFrom('midjourneys')
    .select(['group', 'channel_id', 'quota'])
    .where('mj_id', '=', mjId)
    .executeTakeFirstOrThrow();
}

describe('Midjourney submissions of an auto token', () => {
  it('go to the second auto group when the first has no channel for the model, billed at its ratio', async () => {
    const key = await tokenKey({ group: 'auto' });
    let answer: Record<string, any> = {};
    const log = await billedBy(gateway, async () => {
      const response = await post(key, '/mj/submit/imagine', { prompt: 'a lighthouse' });
      answer = (await response.json()) as Record<string, any>;
      expect(response.status).toBe(200);
    });
    expect(answer.code).toBe(1);
    expect(mjSecretsUsed()).toEqual(['mj-secret']);
    expect(log.quota).toBe(taskQuota('mj_imagine', 'default'));
    expect(log).toMatchObject({ group: 'default', channel_id: channelIds['mj-default'] });
    expect(log.other).toMatchObject({ auto_group: 'default', group_ratio: RATIOS.default, task_id: answer.result });
    expect(await mjRow(answer.result)).toMatchObject({
      group: 'default',
      channel_id: channelIds['mj-default'],
      quota: taskQuota('mj_imagine', 'default'),
    });
  });

  it('with cross_group_retry, move to the next group when the first group refuses, billed there', async () => {
    const key = await tokenKey({ group: 'auto', cross_group_retry: true });
    let answer: Record<string, any> = {};
    const log = await billedBy(gateway, async () => {
      const response = await post(key, '/mj/submit/describe', { base64: 'data:image/png;base64,AAAA' });
      answer = (await response.json()) as Record<string, any>;
      expect(response.status).toBe(200);
    });
    expect(mjSecretsUsed()).toEqual(['mj-wrong', 'mj-secret']);
    expect(log.quota).toBe(taskQuota('mj_describe', 'default'));
    expect(log).toMatchObject({ group: 'default', channel_id: channelIds['mj-default'] });
    expect(log.other).toMatchObject({ auto_group: 'default', group_ratio: RATIOS.default });
    expect(await mjRow(answer.result)).toMatchObject({ group: 'default', quota: taskQuota('mj_describe', 'default') });
    await expectBooksBalance();
  });

  it('count one request for RPM however many groups a submission is sent to', async () => {
    const key = await tokenKey({ group: 'auto', cross_group_retry: true, rate_limits: { '*': { rpm: 2 } } });
    const describe = () => post(key, '/mj/submit/describe', { base64: 'data:image/png;base64,AAAA' });
    expect((await describe()).status).toBe(200);
    expect((await describe()).status).toBe(200);
    expect(mjSecretsUsed()).toEqual(['mj-wrong', 'mj-secret', 'mj-wrong', 'mj-secret']);
    expect((await describe()).status).toBe(429);
    expect(mjSecretsUsed()).toHaveLength(4);
  });

  it('send a follow-up to the channel of its task, billed in the group that task was served in', async () => {
    const key = await tokenKey({ group: 'auto' });
    const submitted = await post(key, '/mj/submit/imagine', { prompt: 'a harbour' });
    const original = ((await submitted.json()) as Record<string, any>).result as string;
    await gateway.options.set('MjActionCheckSuccessEnabled', 'false');
    try {
      const log = await billedBy(gateway, async () => {
        const response = await post(key, '/mj/submit/change', { action: 'UPSCALE', index: 1, taskId: original });
        expect(response.status).toBe(200);
      });
      expect(log.quota).toBe(taskQuota('mj_upscale', 'default'));
      expect(log).toMatchObject({ group: 'default', channel_id: channelIds['mj-default'], model_name: 'mj_upscale' });
      expect(log.other).toMatchObject({ auto_group: 'default', group_ratio: RATIOS.default });
    } finally {
      await gateway.options.set('MjActionCheckSuccessEnabled', 'true');
    }
  });

  it('without cross_group_retry, stay in the first group: its refusal is the answer, nothing charged', async () => {
    const key = await tokenKey({ group: 'auto' });
    const before = await consumeLogCount();
    const response = await post(key, '/mj/submit/describe', { base64: 'data:image/png;base64,AAAA' });
    expect(response.status).toBe(401);
    expect(mjSecretsUsed()).toEqual(['mj-wrong']);
    expect(await consumeLogCount()).toBe(before);
  });
});

describe('Suno submissions of an auto token', () => {
  it('go to the second auto group when the first has no channel for the model, billed at its ratio', async () => {
    const key = await tokenKey({ group: 'auto' });
    let answer: Record<string, any> = {};
    const log = await billedBy(gateway, async () => {
      const response = await post(key, '/suno/submit/music', { prompt: 'a sea shanty' });
      answer = (await response.json()) as Record<string, any>;
      expect(response.status).toBe(200);
    });
    expect(answer.code).toBe('success');
    expect(suno.requests.filter((r) => r.path.includes('/submit/'))).toHaveLength(1);
    expect(log.quota).toBe(taskQuota('suno_music', 'default'));
    expect(log).toMatchObject({ group: 'default', channel_id: channelIds['suno-default'] });
    expect(log.other).toMatchObject({ auto_group: 'default', group_ratio: RATIOS.default, task_id: answer.data });
    const row = await gateway.store.db
      .selectFrom('tasks')
      .select(['group', 'quota'])
      .where('task_id', '=', answer.data)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ group: 'default', quota: taskQuota('suno_music', 'default') });
  });
});

describe('video submissions of an auto token', () => {
  it('with cross_group_retry, move to the next group when the first refuses, billed there with the seconds ratio', async () => {
    const key = await tokenKey({ group: 'auto', cross_group_retry: true });
    let video: Record<string, any> = {};
    const log = await billedBy(gateway, async () => {
      const response = await post(key, '/v1/videos', { model: 'sora-2', prompt: 'a lighthouse', seconds: '4' });
      video = (await response.json()) as Record<string, any>;
      expect(response.status).toBe(200);
    });
    const submissions = sora.requests.filter((r) => r.method === 'POST' && r.path === '/v1/videos');
    expect(submissions.map((r) => r.headers.authorization)).toEqual(['Bearer sora-wrong', 'Bearer sora-key']);
    expect(log.quota).toBe(taskQuota('sora-2', 'default', 4));
    expect(log).toMatchObject({ group: 'default', channel_id: channelIds['sora-default'] });
    expect(log.other).toMatchObject({ auto_group: 'default', group_ratio: RATIOS.default, task_id: video.id });
    await expectBooksBalance();
  });
});

/** One Realtime session: a response asked for and answered, then closed by the client. */
async function realtimeSession(key: string, model: string): Promise<void> {
  const socket = new WebSocket(`${gateway.url.replace(/^http/, 'ws')}/v1/realtime?model=${model}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const events: any[] = [];
  socket.on('message', (data) => events.push(JSON.parse(String(data))));
  const closed = new Promise((resolve) => socket.on('close', resolve));
  await waitFor(() => events.some((e) => e.type === 'session.created'), 5000);
  socket.send(JSON.stringify({ type: 'response.create', response: { output_modalities: ['text'] } }));
  await waitFor(() => events.some((e) => e.type === 'response.done'), 5000);
  socket.close();
  await closed;
}

describe('Realtime sessions of an auto token', () => {
  it('are dialled in the second auto group when the first has no channel for the model, billed at its ratio', async () => {
    const key = await tokenKey({ group: 'auto' });
    realtime.usages.push(realtimeUsage(RT_USAGE));
    const log = await billedBy(gateway, () => realtimeSession(key, 'rt-model'));
    expect(realtime.connections.map((c) => c.headers.authorization)).toEqual(['Bearer rt-key']);
    expect(log.quota).toBe(realtimeQuota('default'));
    expect(log).toMatchObject({ group: 'default', channel_id: channelIds['rt-default'] });
    expect(log.other).toMatchObject({ auto_group: 'default', group_ratio: RATIOS.default });
  });

  it('with cross_group_retry, move to the next group when the first refuses the handshake, billed there', async () => {
    const key = await tokenKey({ group: 'auto', cross_group_retry: true });
    realtime.usages.push(realtimeUsage(RT_USAGE));
    const log = await billedBy(gateway, () => realtimeSession(key, 'rt-refused'));
    expect(log.quota).toBe(realtimeQuota('default'));
    expect(log).toMatchObject({ group: 'default', channel_id: channelIds['rt-default'] });
    expect(log.other).toMatchObject({
      auto_group: 'default',
      group_ratio: RATIOS.default,
      admin_info: { use_channel: [String(channelIds['rt-vip']), String(channelIds['rt-default'])] },
    });
    await expectBooksBalance();
  });
});

async function consumeLogCount(): Promise<number> {
  const row = await gateway.store.db
    .selectFrom('logs')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('type', '=', 2)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * The books: what the consume logs charged equals what root and each channel record as used, and what
 * each of root's tokens records (the usage writer applies relay charges in batches, hence the wait).
 */
async function expectBooksBalance(): Promise<void> {
  const db = gateway.store.db;
  const logged = async (column: 'token_id' | 'user_id' | 'channel_id', id: number) =>
    Number(
      (
        await db
          .selectFrom('logs')
          .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('quota'), eb.val(0)).as('total'))
          .where('type', '=', 2)
          .where(column, '=', id)
          .executeTakeFirstOrThrow()
      ).total,
    );
  const books = await eventually(
    async () => {
      const user = await db
        .selectFrom('users')
        .select(['id', 'used_quota'])
        .where('username', '=', 'root')
        .executeTakeFirstOrThrow();
      const tokens = await db.selectFrom('tokens').select(['id', 'used_quota']).execute();
      const channels = await db.selectFrom('channels').select(['id', 'used_quota']).execute();
      return [
        [Number(user.used_quota), await logged('user_id', user.id)],
        ...(await Promise.all(tokens.map(async (t) => [Number(t.used_quota), await logged('token_id', t.id)]))),
        ...(await Promise.all(channels.map(async (c) => [Number(c.used_quota), await logged('channel_id', c.id)]))),
      ];
    },
    (rows) => rows.every(([recorded, charged]) => recorded === charged),
    5000,
  );
  for (const [recorded, charged] of books) expect(recorded).toBe(charged);
  expect(books[0]?.[0]).toBeGreaterThan(0);
}
