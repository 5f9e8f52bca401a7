import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { type GatewayProcess, gatewayEnv, hasRedis, spawnGateway, testNamespace } from '../support/gateway.ts';
import { type MockMidjourney, startMockMidjourney } from '../support/mock-midjourney.ts';
import { type MockSuno, startMockSuno } from '../support/mock-suno.ts';
import { eventually } from '../support/wait.ts';

/**
 * Midjourney and Suno on multi-key channels: each key is its own upstream account that knows only the
 * tasks submitted with it (as the mocks do). Submissions spread over the keys by the channel's multi-key
 * mode, every task is polled with its own key to SUCCESS, a follow-up goes to its original's key, and the
 * books balance to the unit.
 */

const QUOTA_PER_UNIT = 500_000;
/** Default per-call prices (USD) × QuotaPerUnit, group ratio 1. */
const IMAGINE = 0.1 * QUOTA_PER_UNIT;
const UPSCALE = 0.05 * QUOTA_PER_UNIT;
const MUSIC = 0.1 * QUOTA_PER_UNIT;
const TOKEN_QUOTA = 5_000_000;
const MJ_KEYS = ['mj-account-a', 'mj-account-b'];
const SUNO_KEYS = ['suno-account-a', 'suno-account-b'];

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

let gateway: GatewayProcess;
let mjMock: MockMidjourney;
let sunoMock: MockSuno;
let db: pg.Client;
let key: string;
let initial: { wallet: number; token: number };

async function call(path: string, body?: unknown) {
  const response = await fetch(`${gateway.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

const mjDone = (id: string) =>
  eventually(
    async () => (await call(`/mj/task/${id}/fetch`)).body,
    (task) => task.status === 'SUCCESS',
    10_000,
  );

const sunoDone = (id: string) =>
  eventually(
    async () => (await call(`/suno/fetch/${id}`)).body.data,
    (task) => task?.status === 'SUCCESS',
    10_000,
  );

describe.skipIf(!hasPostgres() || !hasRedis())('task platforms on multi-key channels', () => {
  beforeAll(async () => {
    mjMock = await startMockMidjourney(MJ_KEYS);
    cleanups.push(() => mjMock.close());
    sunoMock = await startMockSuno(SUNO_KEYS);
    cleanups.push(() => sunoMock.close());
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    cleanups.push(() => db.end());
    gateway = await spawnGateway(gatewayEnv(database.options, testNamespace(), { TASK_POLL_INTERVAL_MS: '150' }));
    cleanups.push(async () => {
      if (gateway.child.exitCode === null && gateway.child.signalCode === null) await gateway.stop('SIGKILL');
    });
    const root = await setupRoot(gateway.url);
    for (const channel of [
      { name: 'mj', type: 2, key: MJ_KEYS.join('\n'), base_url: mjMock.url, models: 'mj_imagine,mj_upscale' },
      { name: 'suno', type: 36, key: SUNO_KEYS.join('\n'), base_url: sunoMock.url, models: 'suno_music' },
    ]) {
      // Polling mode: the keys in turn, so that both are used by a handful of submissions.
      const created = await root.post('/api/channel/', { ...channel, multi_key_mode: 'polling' });
      expect(created.body.success, JSON.stringify(created.body)).toBe(true);
    }
    const token = await root.post('/api/token/', { name: 'keys', remain_quota: TOKEN_QUOTA, unlimited_quota: false });
    expect(token.body.success).toBe(true);
    key = String(token.body.data.key);
    await eventually(
      async () => {
        const answer = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
        return ((await answer.json()) as { data?: Array<{ id: string }> }).data?.map((m) => m.id) ?? [];
      },
      (models) => models.includes('mj_imagine') && models.includes('suno_music'),
      5000,
    );
    const { rows } = await db.query(
      `select u.quota as wallet, t.remain_quota as token from tokens t join users u on u.id = t.user_id where t.name = 'keys'`,
    );
    initial = { wallet: Number(rows[0].wallet), token: Number(rows[0].token) };
  }, 60_000);

  it('spreads drawings over both keys, polls each with its own, and upscales on the original’s key', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const submitted = await call('/mj/submit/imagine', { prompt: `harbour ${i}` });
      expect(submitted.body).toMatchObject({ code: 1 });
      ids.push(String(submitted.body.result));
    }
    const account = (id: string) => mjMock.tasks.get(id)?.account;
    expect(ids.map(account)).toEqual([MJ_KEYS[0], MJ_KEYS[1], MJ_KEYS[0], MJ_KEYS[1]]);
    const done = await Promise.all(ids.map(mjDone));
    expect(done.map((task) => task.id)).toEqual(ids);
    // Every poll asked an account about its own tasks only.
    const lists = mjMock.requests.filter((r) => r.path === '/mj/task/list-by-condition');
    for (const list of lists) {
      for (const id of list.body.ids) expect(account(id)).toBe(list.headers['mj-api-secret']);
    }
    expect(new Set(lists.map((r) => r.headers['mj-api-secret']))).toEqual(new Set(MJ_KEYS));

    // The key cursor now points at the first key; the second key's drawing is upscaled on the second key.
    for (const original of [done[1], done[2]]) {
      const u1 = (original.buttons as Array<{ label: string; customId: string }>).find((b) => b.label === 'U1')!;
      const upscale = await call('/mj/submit/action', { taskId: original.id, customId: u1.customId });
      expect(upscale.body, JSON.stringify(upscale.body)).toMatchObject({ code: 1 });
      const upscaleId = String(upscale.body.result);
      expect(account(upscaleId)).toBe(account(original.id));
      expect((await mjDone(upscaleId)).action).toBe('UPSCALE');
    }
    // The seed is asked of the account that drew the task.
    expect((await call(`/mj/task/${ids[1]}/image-seed`)).body).toMatchObject({ code: 1, result: '3141592' });
    const seed = mjMock.requests.find((r) => r.path === `/mj/task/${ids[1]}/image-seed`)!;
    expect(seed.headers['mj-api-secret']).toBe(MJ_KEYS[1]);
    // Each drawing keeps the index of its key; the upscales their original's.
    const { rows } = await db.query('select key_index from midjourneys order by id');
    expect(rows.map((r) => r.key_index)).toEqual([0, 1, 0, 1, 1, 0]);
  });

  it('spreads music over both keys and polls each task with the key that submitted it', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const submitted = await call('/suno/submit/music', { prompt: `rain ${i}`, tags: 'lofi' });
      expect(submitted.body).toMatchObject({ code: 'success' });
      ids.push(String(submitted.body.data));
    }
    const accounts = [...sunoMock.tasks.values()].map((task) => task.account);
    expect(accounts).toEqual([SUNO_KEYS[0], SUNO_KEYS[1], SUNO_KEYS[0], SUNO_KEYS[1]]);
    const done = await Promise.all(ids.map(sunoDone));
    expect(done.every((task) => Array.isArray(task.data) && task.data.length === 2)).toBe(true);
    const byId = new Map([...sunoMock.tasks.values()].map((task) => [task.task_id, task.account]));
    const polls = sunoMock.requests.filter((r) => r.path === '/suno/fetch');
    for (const poll of polls) {
      for (const id of poll.body.ids) expect(`Bearer ${byId.get(id)}`).toBe(poll.headers.authorization);
    }
    expect(new Set(polls.map((r) => r.headers.authorization))).toEqual(new Set(SUNO_KEYS.map((k) => `Bearer ${k}`)));
  });

  it('charged every task once and balanced the books', async () => {
    expect(await gateway.stop()).toBe(0);
    const q = async (text: string) => (await db.query(text)).rows[0] as Record<string, any>;
    const perTask = await db.query(
      `select other::json->>'task_id' as task, count(*)::int as n from logs where type = 2 group by 1`,
    );
    expect(perTask.rows.length).toBe(10);
    for (const row of perTask.rows) expect(row.n).toBe(1);
    const charged = Number((await q('select coalesce(sum(quota),0) as s from logs where type = 2')).s);
    expect(charged).toBe(4 * IMAGINE + 2 * UPSCALE + 4 * MUSIC);
    expect(Number((await q('select count(*)::int as n from logs where type = 6')).n)).toBe(0);
    const token = await q(`select remain_quota, used_quota from tokens where name = 'keys'`);
    const user = await q(
      `select u.quota, u.used_quota from users u join tokens t on t.user_id = u.id where t.name = 'keys'`,
    );
    const channels = await q('select sum(used_quota) as used from channels');
    expect(Number(token.used_quota)).toBe(charged);
    expect(Number(user.used_quota)).toBe(charged);
    expect(Number(channels.used)).toBe(charged);
    expect(Number(token.remain_quota) + charged).toBe(initial.token);
    expect(Number(user.quota) + charged).toBe(initial.wallet);
    expect(Number((await q('select count(*)::int as n from quota_leases')).n)).toBe(0);
  });
});
