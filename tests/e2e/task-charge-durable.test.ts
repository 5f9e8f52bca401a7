import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../gateway/src/store/index.ts';
import { sweepExpiredLeases } from '../../gateway/src/store/repositories/quota-leases.ts';
import { setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { type GatewayProcess, gatewayEnv, hasRedis, spawnGateway, testNamespace } from '../support/gateway.ts';
import { type MockMidjourney, startMockMidjourney } from '../support/mock-midjourney.ts';
import { type MockSora, startMockSora } from '../support/mock-sora.ts';
import { type MockSuno, startMockSuno } from '../support/mock-suno.ts';
import { eventually } from '../support/wait.ts';

/**
 * A task charge is one transaction with its task row (relay/tasks/charge.ts): the moment the client
 * has its task id, the database holds the charge, its consume log and the used quotas. So a pod
 * killed with SIGKILL right after submissions on every platform (its usage queue and ledger flushes
 * lost) leaves books that still balance once the tasks fail and are refunded on another pod.
 */

const QUOTA_PER_UNIT = 500_000;
/** Group ratio 1: suno_music at 0.1 USD per call, mj_imagine at 0.05, sora-2 at 0.3 per second (4 s, size ratio 1). */
const MUSIC = 0.1 * QUOTA_PER_UNIT;
const IMAGINE = 0.05 * QUOTA_PER_UNIT;
const VIDEO = 0.3 * QUOTA_PER_UNIT * 4;
const TOKEN_QUOTA = 5_000_000;

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let mock: MockSuno;
let mj: MockMidjourney;
let sora: MockSora;
let db: pg.Client;
let key: string;
let initial: { wallet: number; token: number };

const env = (pollMs: number) =>
  gatewayEnv(database.options, testNamespace(), { TASK_POLL_INTERVAL_MS: String(pollMs), TASK_TIMEOUT_SECONDS: '60' });

async function launch(pollMs: number): Promise<GatewayProcess> {
  const gateway = await spawnGateway(env(pollMs));
  cleanups.push(async () => {
    if (gateway.child.exitCode === null && gateway.child.signalCode === null) await gateway.stop('SIGKILL');
  });
  return gateway;
}

async function post(gateway: GatewayProcess, path: string, body: unknown): Promise<Record<string, any>> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, any>;
}

/** Each submission answers the id its consume and refund logs carry. */
async function submitMusic(gateway: GatewayProcess, prompt: string): Promise<string> {
  const body = await post(gateway, '/suno/submit/music', { prompt });
  expect(body.code, JSON.stringify(body)).toBe('success');
  return String(body.data);
}

async function submitImagine(gateway: GatewayProcess, prompt: string): Promise<string> {
  const body = await post(gateway, '/mj/submit/imagine', { prompt });
  expect(body.code, JSON.stringify(body)).toBe(1);
  return String(body.result);
}

async function submitVideo(gateway: GatewayProcess, prompt: string): Promise<string> {
  const body = await post(gateway, '/v1/videos', { model: 'sora-2', prompt, seconds: '4', size: '1280x720' });
  expect(body.object, JSON.stringify(body)).toBe('video');
  return String(body.id);
}

/** The status of a task by the id its logs carry, whichever table holds it. */
async function statusOf(id: string): Promise<string | undefined> {
  const row = await one(
    `select status from tasks where task_id = $1 union all select status from midjourneys where mj_id = $1`,
    [id],
  );
  return row?.status;
}

const one = async (text: string, values: unknown[] = []) =>
  (await db.query(text, values)).rows[0] as Record<string, any>;

/** The wallet and token as the database knows them: balances of record plus what leases hold of them. */
async function books() {
  const user = await one(
    `select u.id, u.quota, u.used_quota, u.request_count,
       coalesce((select sum(amount) from quota_leases where account_type = 'user' and account_id = u.id), 0) as leased
     from users u join tokens t on t.user_id = u.id where t.name = 'durable'`,
  );
  const token = await one(
    `select t.remain_quota, t.used_quota,
       coalesce((select sum(amount) from quota_leases where account_type = 'token' and account_id = t.id), 0) as leased
     from tokens t where t.name = 'durable'`,
  );
  const channel = await one(`select sum(used_quota) as used_quota from channels`);
  const logs = await one(
    `select coalesce(sum(quota) filter (where type = 2), 0) as charged,
       coalesce(sum(quota) filter (where type = 6), 0) as refunded from logs`,
  );
  return {
    wallet: Number(user.quota) + Number(user.leased),
    userUsed: Number(user.used_quota),
    requests: Number(user.request_count),
    token: Number(token.remain_quota) + Number(token.leased),
    tokenUsed: Number(token.used_quota),
    channelUsed: Number(channel.used_quota),
    charged: Number(logs.charged),
    refunded: Number(logs.refunded),
  };
}

/** The killed pod's leases lapse after their TTL (a minute); the sweeper then returns them as last written. */
async function sweepLeasesOfDeadPods() {
  const store = await openStore(database.options);
  try {
    await sweepExpiredLeases(store.db, -3600);
  } finally {
    await store.close();
  }
}

describe.skipIf(!hasPostgres() || !hasRedis())('task charges survive a killed pod', () => {
  beforeAll(async () => {
    mock = await startMockSuno('suno-secret');
    cleanups.push(() => mock.close());
    mj = await startMockMidjourney('mj-secret');
    cleanups.push(() => mj.close());
    sora = await startMockSora('sora-secret');
    cleanups.push(() => sora.close());
    database = await createTestDatabase();
    cleanups.push(database.drop);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    cleanups.push(() => db.end());
  }, 60_000);

  it('submissions are on the books when answered; SIGKILL then failures refund exactly that', async () => {
    // This pod never polls: the tasks stay as submitted until the next pod sees them.
    const first = await launch(3_600_000);
    const root = await setupRoot(first.url);
    for (const channel of [
      { name: 'suno', type: 36, key: mock.key, base_url: mock.url, models: 'suno_music' },
      { name: 'mj', type: 2, key: mj.secret, base_url: mj.url, models: 'mj_imagine' },
      { name: 'sora', type: 55, key: sora.key, base_url: sora.url, models: 'sora-2' },
    ]) {
      const created = await root.post('/api/channel/', channel);
      expect(created.body.success, JSON.stringify(created.body)).toBe(true);
    }
    const prices = { suno_music: 0.1, mj_imagine: 0.05, 'sora-2': 0.3 };
    const price = await root.put('/api/option/', { key: 'ModelPrice', value: JSON.stringify(prices) });
    expect(price.body.success).toBe(true);
    const token = await root.post('/api/token/', {
      name: 'durable',
      remain_quota: TOKEN_QUOTA,
      unlimited_quota: false,
    });
    key = String(token.body.data.key);
    await eventually(
      async () => {
        const answer = await fetch(`${first.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
        return ((await answer.json()) as { data?: Array<{ id: string }> }).data?.map((m) => m.id) ?? [];
      },
      (models) => ['suno_music', 'mj_imagine', 'sora-2'].every((m) => models.includes(m)),
      5000,
    );
    const before = await books();
    initial = { wallet: before.wallet, token: before.token };

    mock.behaviour.failNext = true;
    mj.behaviour.failNext = true;
    sora.behaviour.failNext = true;
    const doomed = {
      music: await submitMusic(first, 'doomed'),
      imagine: await submitImagine(first, 'doomed'),
      video: await submitVideo(first, 'doomed'),
    };
    // Killed at once: whatever the pod still held in memory (usage queue, unflushed lease spending) is gone.
    await first.stop('SIGKILL');

    const total = MUSIC + IMAGINE + VIDEO;
    const tasks = await one(
      `select (select sum(quota) from tasks where task_id in ($1, $2)) as tasks,
         (select sum(quota) from midjourneys where mj_id = $3) as mj`,
      [doomed.music, doomed.video, doomed.imagine],
    );
    expect({ tasks: Number(tasks.tasks), mj: Number(tasks.mj) }).toEqual({ tasks: MUSIC + VIDEO, mj: IMAGINE });
    for (const [model, id, quota, channel] of [
      ['suno_music', doomed.music, MUSIC, 'suno'],
      ['mj_imagine', doomed.imagine, IMAGINE, 'mj'],
      ['sora-2', doomed.video, VIDEO, 'sora'],
    ] as const) {
      const log = await one(`select * from logs where type = 2 and other::json->>'task_id' = $1`, [id]);
      expect(log, model).toMatchObject({ model_name: model, token_name: 'durable', channel_name: channel });
      expect(Number(log.quota)).toBe(quota);
      expect(JSON.parse(log.other)).toMatchObject({ task_id: id, per_call: true, model_price: prices[model] });
    }
    const bucket = await one(`select sum(quota) as quota, sum(count) as n from quota_data`);
    expect({ quota: Number(bucket.quota), n: Number(bucket.n) }).toEqual({ quota: total, n: 3 });
    expect(await books()).toEqual({
      wallet: initial.wallet - total,
      userUsed: before.userUsed + total,
      requests: before.requests + 3,
      token: initial.token - total,
      tokenUsed: before.tokenUsed + total,
      channelUsed: total,
      charged: total,
      refunded: 0,
    });

    await sweepLeasesOfDeadPods();
    expect((await books()).wallet).toBe(initial.wallet - total);

    // Another pod polls the tasks to their failure and refunds what the first one charged, no more.
    const second = await launch(150);
    for (const id of Object.values(doomed)) {
      await eventually(
        () => statusOf(id),
        (status) => status === 'FAILURE',
        15_000,
      );
    }
    for (const [id, quota] of [
      [doomed.music, MUSIC],
      [doomed.imagine, IMAGINE],
      [doomed.video, VIDEO],
    ] as const) {
      const refund = await one(`select quota from logs where type = 6 and other::json->>'task_id' = $1`, [id]);
      expect(Number(refund.quota)).toBe(quota);
    }
    expect(await books()).toMatchObject({
      wallet: initial.wallet,
      userUsed: before.userUsed,
      token: initial.token,
      tokenUsed: before.tokenUsed,
      channelUsed: 0,
      charged: total,
      refunded: total,
    });

    // Tasks that succeed, their pod killed right after too: charged once each, and kept.
    await submitMusic(second, 'kept');
    await submitImagine(second, 'kept');
    await submitVideo(second, 'kept');
    await second.stop('SIGKILL');
    await sweepLeasesOfDeadPods();
    const after = await books();
    const net = after.charged - after.refunded;
    expect(net).toBe(total);
    expect(after.userUsed - before.userUsed).toBe(net);
    expect(after.tokenUsed - before.tokenUsed).toBe(net);
    expect(after.channelUsed).toBe(net);
    expect(after.wallet + net).toBe(initial.wallet);
    expect(after.token + net).toBe(initial.token);
    expect((await one(`select count(*)::int as n from quota_leases`)).n).toBe(0);
    const rows = await one(
      `select (select sum(quota) from tasks) + (select sum(quota) from midjourneys) as quota,
         (select count(*) from tasks) + (select count(*) from midjourneys) as n`,
    );
    expect({ n: Number(rows.n), quota: Number(rows.quota) }).toEqual({ n: 6, quota: 2 * total });
  }, 120_000);
});
