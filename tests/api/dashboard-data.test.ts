import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { addQuotaData } from '../../gateway/src/store/repositories/quota-data.ts';
import { clientsFrom, type DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';

// The dashboard's consumption by user (/api/data/users) and model flow (/api/data/flow[/self]).
let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let alice: DashboardClient;
let bob: DashboardClient;
const { user } = clientsFrom(() => gateway.url, '10.62.0');
const db = () => gateway.store.db;
const T0 = 1_700_002_800; // an hour boundary
const HOUR = 3600;

interface Seed {
  user_id: number;
  username: string;
  type: number;
  created_at: number;
  token_id: number;
  model_name: string;
  channel_id: number;
  group: string;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
}
let seeds: Seed[] = [];
let aliceToken = 0;

const qs = (params: object) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

/** Sums of the seeds, computed here independently of the gateway's SQL. */
function sumBy(rows: Seed[], key: (s: Seed) => string) {
  const sums = new Map<string, { count: number; quota: number; token_used: number }>();
  for (const s of rows) {
    const k = key(s);
    const sum = sums.get(k) ?? { count: 0, quota: 0, token_used: 0 };
    sum.count++;
    sum.quota += s.quota;
    sum.token_used += s.prompt_tokens + s.completion_tokens;
    sums.set(k, sum);
  }
  return sums;
}

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { TRUST_PROXY: 'true', GLOBAL_API_RATE_LIMIT: '100000' }),
  );
  root = await setupRoot(gateway.url);
  alice = await user('alice');
  bob = await user('bob');
  await db()
    .insertInto('channels')
    .values({ id: 7, type: 1, name: 'Seven', key_encrypted: 'x', created_time: T0 })
    .execute();
  const token = await db()
    .insertInto('tokens')
    .values({ user_id: alice.userId!, key_hmac: 'h1', key_encrypted: 'e1', name: 'laptop', created_time: T0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  aliceToken = token.id;

  const owners = [
    { id: alice.userId!, name: 'alice' },
    { id: bob.userId!, name: 'bob' },
  ];
  seeds = Array.from({ length: 40 }, (_, i) => {
    const owner = owners[i % 2]!;
    return {
      user_id: owner.id,
      username: owner.name,
      // consume logs count; error and refund logs do not
      type: [2, 2, 2, 5, 6][i % 5]!,
      created_at: T0 + i * 600,
      token_id: owner.id === alice.userId ? [aliceToken, 999][i % 3 === 0 ? 1 : 0]! : 0,
      model_name: ['gpt-4o', 'claude-3'][Math.floor(i / 4) % 2]!,
      channel_id: [7, 0][Math.floor(i / 3) % 2]!,
      group: ['default', 'vip'][Math.floor(i / 5) % 2]!,
      quota: (i + 1) * 100,
      prompt_tokens: i,
      completion_tokens: 2 * i,
    };
  });
  await db()
    .insertInto('logs')
    .values(seeds.map((s) => ({ ...s, content: '', other: '{}' })))
    .execute();
  for (const s of seeds.filter((x) => x.type === 2)) {
    await addQuotaData(db(), {
      userId: s.user_id,
      username: s.username,
      modelName: s.model_name,
      at: s.created_at,
      quota: s.quota,
      tokens: s.prompt_tokens + s.completion_tokens,
    });
  }
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
});

describe('consumption by user (/api/data/users)', () => {
  it('sums every model of a user per hour, within the range', async () => {
    const range = { start_timestamp: T0 + HOUR, end_timestamp: T0 + 3 * HOUR };
    const answer = await root.get(`/api/data/users?${qs(range)}`);
    expect(answer.body.success).toBe(true);
    const inRange = seeds.filter(
      (s) =>
        s.type === 2 &&
        s.created_at - (s.created_at % HOUR) >= range.start_timestamp &&
        s.created_at - (s.created_at % HOUR) <= range.end_timestamp,
    );
    const expected = sumBy(inRange, (s) => `${s.username}@${s.created_at - (s.created_at % HOUR)}`);
    const got = new Map(
      (answer.body.data as any[]).map((r) => [
        `${r.username}@${r.created_at}`,
        { count: r.count, quota: r.quota, token_used: r.token_used },
      ]),
    );
    expect(got).toEqual(expected);
    expect(got.size).toBeGreaterThan(2);
  });

  it('is for administrators, and needs a range', async () => {
    expect(
      refusalOf(await alice.get(`/api/data/users?${qs({ start_timestamp: 0, end_timestamp: T0 })}`)),
    ).toMatchObject({
      status: 200,
      success: false,
    });
    const missing = await root.get('/api/data/users?start_timestamp=1');
    expect([missing.status, missing.body.success]).toEqual([200, false]);
  });
});

describe('model flow (/api/data/flow)', () => {
  it("sums every user's consume logs by user, group, model and channel, largest first, with channel names", async () => {
    const range = { start_timestamp: T0, end_timestamp: T0 + 40 * 600 };
    const rows = (await root.get(`/api/data/flow?${qs(range)}`)).body.data as any[];
    const expected = sumBy(
      seeds.filter((s) => s.type === 2),
      (s) => `${s.user_id}|${s.username}|${s.group}|${s.model_name}|${s.channel_id}`,
    );
    const got = new Map(
      rows.map((r) => [
        `${r.user_id}|${r.username}|${r.use_group}|${r.model_name}|${r.channel_id}`,
        { count: r.count, quota: r.quota, token_used: r.token_used },
      ]),
    );
    expect(got).toEqual(expected);
    expect(rows.map((r) => r.quota)).toEqual([...rows.map((r) => r.quota)].sort((a, b) => b - a));
    expect(rows.find((r) => r.channel_id === 7).channel_name).toBe('Seven');
    expect(rows.find((r) => r.channel_id === 0).channel_name).toBe('');

    const bobs = (await root.get(`/api/data/flow?${qs({ ...range, username: 'bob' })}`)).body.data as any[];
    expect(new Set(bobs.map((r) => r.username))).toEqual(new Set(['bob']));
    expect(bobs.reduce((a, r) => a + r.quota, 0)).toBe(
      seeds.filter((s) => s.type === 2 && s.username === 'bob').reduce((a, s) => a + s.quota, 0),
    );
  });

  it('shows a user only their own flow, by token, at most 30 days at a time', async () => {
    const range = { start_timestamp: T0, end_timestamp: T0 + 40 * 600 };
    const rows = (await alice.get(`/api/data/flow/self?${qs(range)}`)).body.data as any[];
    const expected = sumBy(
      seeds.filter((s) => s.type === 2 && s.user_id === alice.userId),
      (s) => `${s.token_id}|${s.group}|${s.model_name}`,
    );
    const got = new Map(
      rows.map((r) => [
        `${r.token_id}|${r.use_group}|${r.model_name}`,
        { count: r.count, quota: r.quota, token_used: r.token_used },
      ]),
    );
    expect(got).toEqual(expected);
    for (const r of rows) expect(r).not.toHaveProperty('username');
    expect(rows.find((r) => r.token_id === aliceToken).token_name).toBe('laptop');
    // A deleted token keeps its id and has no name.
    expect(rows.find((r) => r.token_id === 999).token_name).toBe('');

    const tooLong = await alice.get(
      `/api/data/flow/self?${qs({ start_timestamp: T0, end_timestamp: T0 + 31 * 86400 })}`,
    );
    expect(refusalOf(tooLong)).toEqual({ status: 200, success: false, code: 'DATA_RANGE_TOO_LONG' });
    expect(refusalOf(await alice.get(`/api/data/flow?${qs(range)}`))).toMatchObject({ status: 200, success: false });
  });
});
