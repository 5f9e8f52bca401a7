import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { type GatewayProcess, gatewayEnv, hasRedis, spawnGateway, testNamespace } from '../support/gateway.ts';
import { type MockSuno, startMockSuno } from '../support/mock-suno.ts';
import { eventually } from '../support/wait.ts';

/**
 * Suno through one gateway process (reference §9.2; the Midjourney e2e proves the one-pod polling):
 * submissions billed once on acceptance under a public task id, tasks polled to their end, failures and
 * timeouts refunded once, and the books balanced to the unit after the gateway stopped.
 */

const GROUP_RATIO = 2;
const QUOTA_PER_UNIT = 500_000;
/** Default per-call prices (USD): suno_music 0.1, suno_lyrics 0.01; × QuotaPerUnit × group ratio. */
const MUSIC = 0.1 * QUOTA_PER_UNIT * GROUP_RATIO;
const LYRICS = 0.01 * QUOTA_PER_UNIT * GROUP_RATIO;
const TOKEN_QUOTA = 5_000_000;

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

let gateway: GatewayProcess;
let mock: MockSuno;
let db: pg.Client;
let key: string;
let otherKey: string;
let poorKey: string;
let initial: { wallet: number; token: number };

async function suno(path: string, body?: unknown, as = key) {
  const response = await fetch(`${gateway.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${as}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

const settled = (id: string, status: string) =>
  eventually(
    async () => (await suno(`/suno/fetch/${id}`)).body.data,
    (task) => task?.status === status,
    10_000,
  );

async function logsOfTask(type: number, id: string) {
  const { rows } = await db.query('select * from logs where type = $1 and other like $2', [
    type,
    `%"task_id":"${id}"%`,
  ]);
  return rows.map((row) => ({ ...row, quota: Number(row.quota) })) as Array<Record<string, any>>;
}

describe.skipIf(!hasPostgres() || !hasRedis())('Suno tasks', () => {
  beforeAll(async () => {
    mock = await startMockSuno('suno-secret');
    cleanups.push(() => mock.close());
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    cleanups.push(() => db.end());
    gateway = await spawnGateway(
      gatewayEnv(database.options, testNamespace(), { TASK_POLL_INTERVAL_MS: '150', TASK_TIMEOUT_SECONDS: '3' }),
    );
    cleanups.push(async () => {
      if (gateway.child.exitCode === null && gateway.child.signalCode === null) await gateway.stop('SIGKILL');
    });
    const root = await setupRoot(gateway.url);
    const created = await root.post('/api/channel/', {
      name: 'suno',
      type: 36,
      key: mock.key,
      base_url: mock.url,
      models: 'suno_music,suno_lyrics,chirp-v4',
      model_mapping: JSON.stringify({ 'chirp-v4': 'chirp-v4-5' }),
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
    const ratio = await root.put('/api/option/', {
      key: 'GroupRatio',
      value: JSON.stringify({ default: GROUP_RATIO, vip: 1, svip: 1 }),
    });
    expect(ratio.body.success).toBe(true);
    const price = await root.put('/api/option/', {
      key: 'ModelPrice',
      value: JSON.stringify({ suno_music: 0.1, suno_lyrics: 0.01, 'chirp-v4': 0.1 }),
    });
    expect(price.body.success).toBe(true);
    const token = await root.post('/api/token/', { name: 'suno', remain_quota: TOKEN_QUOTA, unlimited_quota: false });
    expect(token.body.success).toBe(true);
    key = String(token.body.data.key);
    const poor = await root.post('/api/token/', { name: 'poor', remain_quota: 10, unlimited_quota: false });
    poorKey = String(poor.body.data.key);
    expect((await root.post('/api/user/', { username: 'other', password: 'password-1' })).body.success).toBe(true);
    const other = new DashboardClient(gateway.url);
    expect((await other.login('other', 'password-1')).body.success).toBe(true);
    otherKey = String((await other.post('/api/token/', { name: 'other', unlimited_quota: true })).body.data.key);
    await eventually(
      async () => {
        const answer = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
        return ((await answer.json()) as { data?: Array<{ id: string }> }).data?.map((m) => m.id) ?? [];
      },
      (models) => models.includes('suno_music') && models.includes('chirp-v4'),
      5000,
    );
    const { rows } = await db.query(
      `select u.quota as wallet, t.remain_quota as token from tokens t join users u on u.id = t.user_id where t.name = 'suno'`,
    );
    initial = { wallet: Number(rows[0].wallet), token: Number(rows[0].token) };
  }, 60_000);

  it('makes music: submitted under a public id, polled to SUCCESS with its clips, charged once', async () => {
    const submitted = await suno('/suno/submit/music', {
      prompt: '[Verse] lights over the harbour',
      tags: 'synthwave',
      title: 'Harbour',
      mv: 'chirp-v4',
      notify_hook: 'https://example.invalid/hook',
    });
    expect(submitted).toMatchObject({ status: 200, body: { code: 'success', message: '' } });
    const id = String(submitted.body.data);
    expect(id).toMatch(/^task_[\w-]{22}$/);
    const sent = mock.requests.find((r) => r.path === '/suno/submit/music')!;
    expect(sent.headers.authorization).toBe('Bearer suno-secret');
    expect(sent.body).toEqual({
      prompt: '[Verse] lights over the harbour',
      tags: 'synthwave',
      title: 'Harbour',
      mv: 'chirp-v4',
    });
    const [upstreamId] = [...mock.tasks.keys()];
    expect(mock.tasks.has(id)).toBe(false);

    const done = await settled(id, 'SUCCESS');
    expect(done).toMatchObject({ task_id: id, action: 'MUSIC', progress: '100%', fail_reason: '' });
    expect(done.finish_time).toBeGreaterThanOrEqual(done.submit_time);
    expect(done.data).toHaveLength(2);
    expect(done.data[0]).toMatchObject({
      id: `${upstreamId}-clip-1`,
      title: 'Harbour (1)',
      audio_url: expect.stringMatching(/\/cdn\/.+-clip-1\.mp3$/),
      image_url: expect.stringMatching(/\/cdn\/.+-clip-1\.jpeg$/),
    });
    // Polled in batches of the channel's ids, with the channel key.
    const polls = mock.requests.filter((r) => r.path === '/suno/fetch');
    expect(polls.length).toBeGreaterThanOrEqual(4);
    expect(polls[0]).toMatchObject({ method: 'POST', body: { ids: [upstreamId] } });

    const batch = await suno('/suno/fetch', { ids: [id, 'task_nope'] });
    expect(batch.body).toMatchObject({ code: 'success', data: [{ task_id: id, status: 'SUCCESS' }] });
    // Another user's key never sees the task.
    expect(await suno(`/suno/fetch/${id}`, undefined, otherKey)).toMatchObject({
      status: 404,
      body: { code: 'task_not_exist', data: null },
    });
    expect((await suno('/suno/fetch', { ids: [id] }, otherKey)).body).toEqual({
      code: 'success',
      message: '',
      data: [],
    });

    const [log] = await eventually(
      () => logsOfTask(2, id),
      (rows) => rows.length > 0,
      5000,
    );
    expect(log).toMatchObject({ quota: MUSIC, model_name: 'suno_music', token_name: 'suno' });
  });

  it('writes lyrics, and sends a mapped model as the upstream model version', async () => {
    const lyrics = await suno('/suno/submit/lyrics', { prompt: 'a song about rain' });
    const id = String(lyrics.body.data);
    const done = await settled(id, 'SUCCESS');
    expect(done).toMatchObject({ action: 'LYRICS', data: { text: '[Verse]\na song about rain', status: 'complete' } });

    const mapped = await suno('/suno/submit/music', { model: 'chirp-v4', gpt_description_prompt: 'calm piano' });
    expect(mapped.body.code).toBe('success');
    expect(mock.requests.at(-1)?.body).toEqual({ gpt_description_prompt: 'calm piano', mv: 'chirp-v4-5' });
    await settled(String(mapped.body.data), 'SUCCESS');
    const [lyricsLog] = await eventually(
      () => logsOfTask(2, id),
      (rows) => rows.length > 0,
      5000,
    );
    expect(lyricsLog).toMatchObject({ quota: LYRICS, model_name: 'suno_lyrics' });
    const [mappedLog] = await eventually(
      () => logsOfTask(2, String(mapped.body.data)),
      (rows) => rows.length > 0,
      5000,
    );
    expect(mappedLog).toMatchObject({ quota: MUSIC, model_name: 'chirp-v4' });
  });

  it('charges nothing when the upstream refuses, and refuses bad input with a stable code', async () => {
    mock.behaviour.refuseNext = true;
    const refused = await suno('/suno/submit/music', { prompt: 'no credits' });
    expect(refused).toMatchObject({
      status: 500,
      body: { code: 'error', message: 'suno account has no credits left', data: null },
    });
    expect(await suno('/suno/submit/lyrics', {})).toMatchObject({ status: 400, body: { code: 'error' } });
    expect(await suno('/suno/submit/video', { prompt: 'x' })).toMatchObject({
      status: 400,
      body: { code: 'invalid_action' },
    });
    expect(await suno('/suno/fetch', { ids: 'task_1' })).toMatchObject({
      status: 400,
      body: { code: 'invalid_request' },
    });
    expect((await suno('/suno/fetch/task_1', undefined, 'sk-wrong')).status).toBe(401);
    expect(await suno('/suno/submit/lyrics', { prompt: 'no money' }, poorKey)).toMatchObject({
      status: 403,
      body: { code: 'quota_not_enough', data: null },
    });
    // Nothing reached the books: no task row, and (checked at the end) no charge.
    const { rows } = await db.query(`select count(*)::int as n from tasks where status = 'FAILURE'`);
    expect(rows[0].n).toBe(0);
    expect(mock.requests.filter((r) => r.body?.prompt === 'no money')).toEqual([]);
  });

  it('refunds a task that fails upstream, once, with a refund log naming it', async () => {
    mock.behaviour.failNext = true;
    const id = String((await suno('/suno/submit/music', { prompt: 'doomed' })).body.data);
    const failed = await settled(id, 'FAILURE');
    expect(failed.fail_reason).toBe('Unable to generate: lyrics flagged');
    const refunds = await eventually(
      () => logsOfTask(6, id),
      (rows) => rows.length > 0,
      5000,
    );
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ quota: MUSIC, model_name: 'suno_music', token_name: 'suno' });
    expect(JSON.parse(refunds[0]!.other)).toEqual({
      task_id: id,
      reason: 'Unable to generate: lyrics flagged',
      platform: 'suno',
    });
  });

  it('fails and refunds a task the upstream never finishes, after TASK_TIMEOUT_SECONDS', async () => {
    mock.behaviour.stuckNext = true;
    const id = String((await suno('/suno/submit/music', { prompt: 'forever' })).body.data);
    expect((await settled(id, 'IN_PROGRESS')).progress).toBe('10%');
    const failed = await settled(id, 'FAILURE');
    expect(failed.fail_reason).toBe('upstream timeout');
    const refunds = await eventually(
      () => logsOfTask(6, id),
      (rows) => rows.length > 0,
      5000,
    );
    expect(refunds).toHaveLength(1);
    expect(refunds[0]!.quota).toBe(MUSIC);
  });

  it('billed every task once and balanced the books', async () => {
    expect(await gateway.stop()).toBe(0);
    const q = async (text: string) => (await db.query(text)).rows[0] as Record<string, any>;
    const perTask = await db.query(
      `select other::json->>'task_id' as task, count(*)::int as n from logs where type = 2 group by 1`,
    );
    expect(perTask.rows.length).toBe(5);
    for (const row of perTask.rows) expect(row.n).toBe(1);
    const charged = Number((await q('select coalesce(sum(quota),0) as s from logs where type = 2')).s);
    const refunded = Number((await q('select coalesce(sum(quota),0) as s from logs where type = 6')).s);
    expect(charged).toBe(4 * MUSIC + LYRICS);
    expect(refunded).toBe(2 * MUSIC);
    const token = await q(`select remain_quota, used_quota from tokens where name = 'suno'`);
    expect(Number((await q(`select used_quota from tokens where name = 'poor'`)).used_quota)).toBe(0);
    const user = await q(
      `select u.quota, u.used_quota from users u join tokens t on t.user_id = u.id where t.name = 'suno'`,
    );
    const channels = await q('select sum(used_quota) as used from channels');
    const net = charged - refunded;
    expect(Number(token.used_quota)).toBe(net);
    expect(Number(user.used_quota)).toBe(net);
    expect(Number(channels.used)).toBe(net);
    expect(Number(token.remain_quota) + net).toBe(initial.token);
    expect(Number(user.quota) + net).toBe(initial.wallet);
    const tasks = await q(`select sum(quota) as s, count(*)::int as n from tasks where platform = 'suno'`);
    expect({ n: tasks.n, s: Number(tasks.s) }).toEqual({ n: 5, s: charged });
  });
});
