import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../gateway/src/store/index.ts';
import { sweepExpiredLeases } from '../../gateway/src/store/repositories/quota-leases.ts';
import { setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { type GatewayProcess, gatewayEnv, hasRedis, spawnGateway, testNamespace } from '../support/gateway.ts';
import { type MockSuno, startMockSuno } from '../support/mock-suno.ts';
import { eventually } from '../support/wait.ts';

/**
 * A task charge is one transaction with its task row (relay/tasks/charge.ts): the moment the client
 * has its task id, the database holds the charge, its consume log and the used quotas. So a pod
 * killed with SIGKILL right after a submission (its usage queue and ledger flushes lost) leaves
 * books that still balance once the task fails and is refunded on another pod.
 */

const QUOTA_PER_UNIT = 500_000;
/** suno_music at 0.1 USD per call, group ratio 1. */
const MUSIC = 0.1 * QUOTA_PER_UNIT;
const TOKEN_QUOTA = 5_000_000;

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let mock: MockSuno;
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

async function submitMusic(gateway: GatewayProcess, prompt: string): Promise<string> {
  const response = await fetch(`${gateway.url}/suno/submit/music`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt }),
  });
  const body = (await response.json()) as { code: string; data: string };
  expect(body.code, JSON.stringify(body)).toBe('success');
  return body.data;
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
  const channel = await one(`select used_quota from channels where name = 'suno'`);
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
    database = await createTestDatabase();
    cleanups.push(database.drop);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    cleanups.push(() => db.end());
  }, 60_000);

  it('a submission is on the books when it is answered; SIGKILL then a failure refunds exactly that', async () => {
    // This pod never polls: the task stays SUBMITTED until the next pod sees it.
    const first = await launch(3_600_000);
    const root = await setupRoot(first.url);
    const channel = await root.post('/api/channel/', {
      name: 'suno',
      type: 36,
      key: mock.key,
      base_url: mock.url,
      models: 'suno_music',
    });
    expect(channel.body.success, JSON.stringify(channel.body)).toBe(true);
    const price = await root.put('/api/option/', { key: 'ModelPrice', value: JSON.stringify({ suno_music: 0.1 }) });
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
      (models) => models.includes('suno_music'),
      5000,
    );
    const before = await books();
    initial = { wallet: before.wallet, token: before.token };

    mock.behaviour.failNext = true;
    const doomed = await submitMusic(first, 'doomed');
    // Killed at once: whatever the pod still held in memory (usage queue, unflushed lease spending) is gone.
    await first.stop('SIGKILL');

    const task = await one(`select quota, status, user_id, token_id, channel_id from tasks where task_id = $1`, [
      doomed,
    ]);
    expect({ quota: Number(task.quota), status: task.status }).toEqual({ quota: MUSIC, status: 'SUBMITTED' });
    const log = await one(`select * from logs where type = 2 and other::json->>'task_id' = $1`, [doomed]);
    expect(log).toMatchObject({ model_name: 'suno_music', token_name: 'durable', channel_name: 'suno' });
    expect(Number(log.quota)).toBe(MUSIC);
    expect(JSON.parse(log.other)).toMatchObject({ task_id: doomed, per_call: true, model_price: 0.1 });
    const bucket = await one(
      `select sum(quota) as quota, sum(count) as n from quota_data where model_name = 'suno_music'`,
    );
    expect({ quota: Number(bucket.quota), n: Number(bucket.n) }).toEqual({ quota: MUSIC, n: 1 });
    expect(await books()).toEqual({
      wallet: initial.wallet - MUSIC,
      userUsed: before.userUsed + MUSIC,
      requests: before.requests + 1,
      token: initial.token - MUSIC,
      tokenUsed: before.tokenUsed + MUSIC,
      channelUsed: MUSIC,
      charged: MUSIC,
      refunded: 0,
    });

    await sweepLeasesOfDeadPods();
    expect((await books()).wallet).toBe(initial.wallet - MUSIC);

    // Another pod polls the task to its failure and refunds what the first one charged, no more.
    const second = await launch(150);
    await eventually(
      () => one(`select status from tasks where task_id = $1`, [doomed]),
      (row) => row?.status === 'FAILURE',
      10_000,
    );
    const refund = await one(`select quota from logs where type = 6 and other::json->>'task_id' = $1`, [doomed]);
    expect(Number(refund.quota)).toBe(MUSIC);
    expect(await books()).toMatchObject({
      wallet: initial.wallet,
      userUsed: before.userUsed,
      token: initial.token,
      tokenUsed: before.tokenUsed,
      channelUsed: 0,
      charged: MUSIC,
      refunded: MUSIC,
    });

    // A task that succeeds, its pod killed right after too: charged once, and kept.
    const kept = await submitMusic(second, 'kept');
    await second.stop('SIGKILL');
    await sweepLeasesOfDeadPods();
    const after = await books();
    const net = after.charged - after.refunded;
    expect(net).toBe(MUSIC);
    expect(after.userUsed - before.userUsed).toBe(net);
    expect(after.tokenUsed - before.tokenUsed).toBe(net);
    expect(after.channelUsed).toBe(net);
    expect(after.wallet + net).toBe(initial.wallet);
    expect(after.token + net).toBe(initial.token);
    expect((await one(`select count(*)::int as n from quota_leases`)).n).toBe(0);
    const tasks = await one(`select sum(quota) as s, count(*)::int as n from tasks where task_id in ($1, $2)`, [
      doomed,
      kept,
    ]);
    expect({ n: tasks.n, s: Number(tasks.s) }).toEqual({ n: 2, s: 2 * MUSIC });
  }, 90_000);
});
