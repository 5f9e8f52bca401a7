import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { type GatewayProcess, gatewayEnv, hasRedis, spawnGateway, testNamespace } from '../support/gateway.ts';
import { type MockMidjourney, startMockMidjourney } from '../support/mock-midjourney.ts';
import { eventually } from '../support/wait.ts';

/**
 * Midjourney through two gateway processes on one database and one Redis (reference §9.1): submissions
 * billed once on acceptance, tasks polled by one pod at a time, failures and timeouts refunded once, and
 * the books balanced to the unit after both stopped.
 */

const GROUP_RATIO = 2;
const QUOTA_PER_UNIT = 500_000;
/** Default per-call prices (USD): mj_imagine 0.1, mj_upscale 0.05; × QuotaPerUnit × group ratio. */
const IMAGINE = 0.1 * QUOTA_PER_UNIT * GROUP_RATIO;
const UPSCALE = 0.05 * QUOTA_PER_UNIT * GROUP_RATIO;
const UPLOAD = 0.05 * QUOTA_PER_UNIT * GROUP_RATIO;
const TOKEN_QUOTA = 5_000_000;

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

interface Cluster {
  gateways: [GatewayProcess, GatewayProcess];
  mocks: [MockMidjourney, MockMidjourney];
  db: pg.Client;
  root: DashboardClient;
  key: string;
  otherKey: string;
  poorKey: string;
  hooks: Array<Record<string, any>>;
  hookUrl: string;
  initial: { wallet: number; token: number };
}

let c: Cluster;

async function startCluster(): Promise<Cluster> {
  const mocks = [await startMockMidjourney('secret-a'), await startMockMidjourney('secret-b')] as [
    MockMidjourney,
    MockMidjourney,
  ];
  for (const mock of mocks) cleanups.push(() => mock.close());
  const hooks: Array<Record<string, any>> = [];
  const hookServer = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => {
      raw += chunk.toString();
    });
    req.on('end', () => {
      hooks.push(JSON.parse(raw) as Record<string, any>);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => hookServer.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => hookServer.close(() => resolve())));
  const hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/hook`;

  const database = await createTestDatabase();
  cleanups.push(database.drop);
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  cleanups.push(() => db.end());
  const env = gatewayEnv(database.options, testNamespace(), {
    TASK_POLL_INTERVAL_MS: '150',
    MJ_TASK_TIMEOUT_SECONDS: '4',
  });
  const gateways = (await Promise.all([spawnGateway(env), spawnGateway(env)])) as [GatewayProcess, GatewayProcess];
  for (const gateway of gateways) {
    cleanups.push(async () => {
      if (gateway.child.exitCode === null && gateway.child.signalCode === null) await gateway.stop('SIGKILL');
    });
  }
  const [a] = gateways;
  const root = await setupRoot(a.url);
  for (const [index, mock] of mocks.entries()) {
    const created = await root.post('/api/channel/', {
      name: `mj-${index}`,
      type: 2,
      key: mock.secret,
      base_url: mock.url,
      models: 'mj_imagine,mj_upscale,mj_variation,mj_reroll,mj_upload',
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  }
  for (const [key, value] of Object.entries({
    GroupRatio: JSON.stringify({ default: GROUP_RATIO, vip: 1, svip: 1 }),
    ServerAddress: a.url,
    MjNotifyEnabled: 'true',
    MjModeClearEnabled: 'true',
    // The hook server and the mocks' images are on 127.0.0.1 with random ports: fetch_setting must say so.
    'fetch_setting.allow_private_ip': 'true',
    'fetch_setting.allowed_ports': '[]',
  })) {
    expect((await root.put('/api/option/', { key, value })).body.success).toBe(true);
  }
  const token = await root.post('/api/token/', { name: 'mj', remain_quota: TOKEN_QUOTA, unlimited_quota: false });
  expect(token.body.success).toBe(true);
  const poor = await root.post('/api/token/', { name: 'poor', remain_quota: 10, unlimited_quota: false });
  expect(poor.body.success).toBe(true);

  expect((await root.post('/api/user/', { username: 'other', password: 'password-1' })).body.success).toBe(true);
  const other = new DashboardClient(a.url);
  expect((await other.login('other', 'password-1')).body.success).toBe(true);
  const otherToken = await other.post('/api/token/', { name: 'other', unlimited_quota: true });
  expect(otherToken.body.success).toBe(true);

  const key = String(token.body.data.key);
  // Both processes route mj_imagine and see the options before anything is submitted.
  for (const gateway of gateways) {
    await eventually(
      async () => {
        const answer = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
        return ((await answer.json()) as { data?: Array<{ id: string }> }).data?.map((m) => m.id) ?? [];
      },
      (models) => models.includes('mj_imagine'),
      5000,
    );
  }
  const { rows } = await db.query(
    `select u.quota as wallet, t.remain_quota as token from tokens t join users u on u.id = t.user_id where t.name = 'mj'`,
  );
  return {
    gateways,
    mocks,
    db,
    root,
    key,
    otherKey: String(otherToken.body.data.key),
    poorKey: String(poor.body.data.key),
    hooks,
    hookUrl,
    initial: { wallet: Number(rows[0].wallet), token: Number(rows[0].token) },
  };
}

async function mj(url: string, key: string, path: string, body?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'mj-api-secret': key, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

const fetchTask = (url: string, id: string, key = c.key) => mj(url, key, `/mj/task/${id}/fetch`);

async function settledTask(id: string, status: string) {
  return eventually(
    async () => (await fetchTask(c.gateways[1].url, id)).body,
    (task) => task.status === status,
    10_000,
  );
}

const holder = (id: string) => c.mocks.findIndex((mock) => mock.tasks.has(id));

async function logsOfTask(type: number, id: string) {
  const { rows } = await c.db.query('select * from logs where type = $1 and other like $2', [
    type,
    `%"task_id":"${id}"%`,
  ]);
  return rows.map((row) => ({ ...row, quota: Number(row.quota) })) as Array<Record<string, any>>;
}

describe.skipIf(!hasPostgres() || !hasRedis())('Midjourney tasks across two gateway processes', () => {
  beforeAll(async () => {
    c = await startCluster();
  }, 60_000);

  it('imagines, polls to SUCCESS, and upscales on the channel that drew the original', async () => {
    const [a, b] = c.gateways;
    const submitted = await mj(a.url, c.key, '/mj/submit/imagine', {
      prompt: 'a lighthouse --fast --v 6',
      notifyHook: c.hookUrl,
      accountFilter: { instanceId: '1' },
    });
    expect(submitted.status).toBe(200);
    expect(submitted.body).toMatchObject({ code: 1, description: '提交成功' });
    const id = String(submitted.body.result);
    const origin = holder(id);
    expect(origin).toBeGreaterThanOrEqual(0);
    const sent = c.mocks[origin]!.requests.find((r) => r.path === '/mj/submit/imagine')!;
    // Mode flags cleared, the account filter and the callback kept from the upstream.
    expect(sent.body).toEqual({ prompt: 'a lighthouse --v 6' });

    const done = await settledTask(id, 'SUCCESS');
    expect(done).toMatchObject({ id, action: 'IMAGINE', progress: '100%', prompt: 'a lighthouse --fast --v 6' });
    expect(done.imageUrl).toBe(`${a.url}/mj/image/${id}`);
    const image = await fetch(done.imageUrl);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect((await image.arrayBuffer()).byteLength).toBeGreaterThan(0);
    // Another user's key never sees the task.
    expect((await fetchTask(b.url, id, c.otherKey)).status).toBe(400);

    const u1 = (done.buttons as Array<{ label: string; customId: string }>).find((button) => button.label === 'U1')!;
    const upscale = await mj(b.url, c.key, '/mj-fast/mj/submit/action', { taskId: id, customId: u1.customId });
    expect(upscale.body).toMatchObject({ code: 1 });
    const upscaleId = String(upscale.body.result);
    expect(holder(upscaleId)).toBe(origin);
    expect(c.mocks[1 - origin]!.requests.filter((r) => r.path.startsWith('/mj/submit/'))).toHaveLength(0);
    expect((await settledTask(upscaleId, 'SUCCESS')).action).toBe('UPSCALE');

    // midjourney-proxy clients that send the key as a Bearer token are served alike.
    const listed = await fetch(`${a.url}/mj/task/list-by-condition`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${c.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ids: [id, upscaleId, 'nope'] }),
    });
    expect(((await listed.json()) as Array<{ id: string }>).map((t) => t.id).sort()).toEqual([id, upscaleId].sort());
    expect((await mj(a.url, c.key, `/mj/task/${id}/image-seed`)).body).toMatchObject({ code: 1, result: '3141592' });

    // Consume logs are written in batches: wait for the upscale's, which came last.
    const [upscaleLog] = await eventually(
      () => logsOfTask(2, upscaleId),
      (rows) => rows.length > 0,
      5000,
    );
    expect(upscaleLog).toMatchObject({ quota: UPSCALE, model_name: 'mj_upscale' });
    expect(await logsOfTask(2, id)).toMatchObject([{ quota: IMAGINE, model_name: 'mj_imagine', token_name: 'mj' }]);
    // The client's hook heard the task finish (the gateway calls it; the upstream never got it).
    await eventually(
      async () => c.hooks.filter((h) => h.id === id).map((h) => h.status),
      (statuses) => statuses.includes('SUCCESS'),
      5000,
    );
  });

  it('charges nothing when the upstream refuses, and answers 21/22 as submitted', async () => {
    const [a] = c.gateways;
    for (const mock of c.mocks) mock.behaviour.codes = [23];
    const full = await mj(a.url, c.key, '/mj/submit/imagine', { prompt: 'full queue' });
    expect(full.body).toMatchObject({ code: 23, description: '队列已满，请稍后尝试' });
    for (const mock of c.mocks) mock.behaviour.codes = [24];
    const banned = await mj(a.url, c.key, '/mj/submit/imagine', { prompt: 'banned' });
    expect(banned.body).toMatchObject({ code: 24, properties: { bannedWord: 'banned' } });
    for (const mock of c.mocks) mock.behaviour.codes = [22];
    const queued = await mj(a.url, c.key, '/mj/submit/imagine', { prompt: 'queued' });
    expect(queued.body).toMatchObject({ code: 1, description: '排队中，前面还有1个任务' });
    for (const mock of c.mocks) mock.behaviour.codes = [];
    await settledTask(String(queued.body.result), 'SUCCESS');

    const upload = await mj(a.url, c.key, '/mj-relax/mj/submit/upload-discord-images', {
      base64Array: ['data:image/png;base64,iVBORw0KGgo='],
    });
    expect(upload.body).toMatchObject({ code: 1, result: [expect.stringMatching(/\/attachments\/upload-0\.png$/)] });

    const poor = await mj(a.url, c.poorKey, '/mj/submit/imagine', { prompt: 'no money' });
    expect(poor).toMatchObject({ status: 400, body: { code: 4, description: 'quota_not_enough' } });
    // Refusals left no consume log (the upload, charged at once, is the one log without a task id).
    const { rows } = await c.db.query(
      `select count(*)::int as n from logs where type = 2 and other like '%"task_id":""%' and model_name <> 'mj_upload'`,
    );
    expect(rows[0].n).toBe(0);
  });

  it('refunds a task that fails upstream, once, with a refund log naming it', async () => {
    for (const mock of c.mocks) mock.behaviour.failNext = true;
    const submitted = await mj(c.gateways[0].url, c.key, '/mj/submit/imagine', { prompt: 'doomed' });
    const id = String(submitted.body.result);
    for (const mock of c.mocks) mock.behaviour.failNext = false;
    const failed = await settledTask(id, 'FAILURE');
    expect(failed.failReason).toBe('Banned prompt detected');
    // With MjActionCheckSuccessEnabled (the default) a failed drawing takes no follow-up.
    const upscale = await mj(c.gateways[1].url, c.key, '/mj/submit/change', {
      action: 'UPSCALE',
      index: 1,
      taskId: id,
    });
    expect(upscale).toMatchObject({ status: 400, body: { code: 4, description: 'task_status_not_success' } });
    const refunds = await eventually(
      () => logsOfTask(6, id),
      (rows) => rows.length > 0,
      5000,
    );
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ quota: IMAGINE, model_name: 'mj_imagine', token_name: 'mj' });
    expect(JSON.parse(refunds[0]!.other)).toMatchObject({ task_id: id, reason: 'Banned prompt detected' });
  });

  it('fails and refunds a task the upstream never finishes, after the timeout', async () => {
    for (const mock of c.mocks) mock.behaviour.stuckNext = true;
    const submitted = await mj(c.gateways[1].url, c.key, '/mj/submit/imagine', { prompt: 'forever' });
    const id = String(submitted.body.result);
    for (const mock of c.mocks) mock.behaviour.stuckNext = false;
    expect((await settledTask(id, 'IN_PROGRESS')).progress).toBe('10%');
    const failed = await settledTask(id, 'FAILURE');
    expect(failed.failReason).toBe('upstream timeout');
    const refunds = await eventually(
      () => logsOfTask(6, id),
      (rows) => rows.length > 0,
      5000,
    );
    expect(refunds).toHaveLength(1);
    expect(JSON.parse(refunds[0]!.other)).toMatchObject({ task_id: id, reason: 'upstream timeout' });
  });

  it('refuses the notifyHook and the image on 127.0.0.1 once private addresses are no longer allowed', async () => {
    const [a, b] = c.gateways;
    expect(
      (await c.root.put('/api/option/', { key: 'fetch_setting.allow_private_ip', value: 'false' })).body.success,
    ).toBe(true);
    // Both processes go by the new rule before the task can finish on either.
    for (const gateway of c.gateways) {
      const admin = Object.assign(new DashboardClient(gateway.url), { cookie: c.root.cookie, userId: c.root.userId });
      await eventually(
        async () => ((await admin.get('/api/option/')).body.data as Array<{ key: string; value: string }>) ?? [],
        (list) => list.some((o) => o.key === 'fetch_setting.allow_private_ip' && o.value === 'false'),
        5000,
      );
    }
    const submitted = await mj(a.url, c.key, '/mj/submit/imagine', {
      prompt: 'a quiet harbour',
      notifyHook: c.hookUrl,
    });
    const id = String(submitted.body.result);
    const done = await settledTask(id, 'SUCCESS');
    const refusals = async () =>
      c.gateways.flatMap((g) => g.logs).filter((l) => l.msg === 'midjourney notifyHook refused by fetch_setting');
    const [refused] = await eventually(refusals, (logs) => logs.some((l) => l.task === id), 5000);
    expect(refused).toMatchObject({ code: 'OUTBOUND_URL_REFUSED', reason: 'private_ip' });
    expect(c.hooks.filter((h) => h.id === id)).toHaveLength(0);

    const image = await fetch(done.imageUrl);
    expect(image.status).toBe(403);
    expect(await image.json()).toMatchObject({ code: 4, type: 'new_api_error' });
    expect((await fetch(`${b.url}/mj/image/${id}`)).status).toBe(403);
    expect(
      (await c.root.put('/api/option/', { key: 'fetch_setting.allow_private_ip', value: 'true' })).body.success,
    ).toBe(true);
  });

  it('polled from one pod at a time, billed every task once, and balanced the books', async () => {
    const lists = c.mocks.flatMap((mock) => mock.lists).sort((x, y) => x.start - y.start);
    expect(lists.length).toBeGreaterThan(5);
    for (let i = 1; i < lists.length; i++) expect(lists[i]!.start).toBeGreaterThanOrEqual(lists[i - 1]!.end);
    for (const gateway of c.gateways) expect(await gateway.stop()).toBe(0);

    const q = async (text: string) => (await c.db.query(text)).rows[0] as Record<string, any>;
    const perTask = await c.db.query(
      `select other::json->>'task_id' as task, count(*)::int as n from logs where type = 2 group by 1`,
    );
    expect(perTask.rows.length).toBe(7);
    for (const row of perTask.rows) expect(row.n).toBe(1);
    const charged = Number((await q('select coalesce(sum(quota),0) as s from logs where type = 2')).s);
    const refunded = Number((await q('select coalesce(sum(quota),0) as s from logs where type = 6')).s);
    expect(charged).toBe(5 * IMAGINE + UPSCALE + UPLOAD);
    expect(refunded).toBe(2 * IMAGINE);
    const token = await q(`select remain_quota, used_quota from tokens where name = 'mj'`);
    const user = await q(
      `select u.quota, u.used_quota from users u join tokens t on t.user_id = u.id where t.name = 'mj'`,
    );
    const channels = await q('select sum(used_quota) as used from channels');
    const net = charged - refunded;
    expect(Number(token.used_quota)).toBe(net);
    expect(Number(user.used_quota)).toBe(net);
    expect(Number(channels.used)).toBe(net);
    expect(Number(token.remain_quota) + net).toBe(c.initial.token);
    expect(Number(user.quota) + net).toBe(c.initial.wallet);
    expect(Number((await q('select count(*)::int as n from quota_leases')).n)).toBe(0);
  });
});
