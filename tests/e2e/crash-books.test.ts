import pg from 'pg';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { type GatewayProcess, gatewayEnv, hasRedis, spawnGateway, testNamespace } from '../support/gateway.ts';
import { startMockOpenAI } from '../support/mock-openai.ts';
import { eventually } from '../support/wait.ts';

/**
 * Exactly-once accounting through crashes (issue 18, "Quota through crashes" in the README): two gateway
 * processes on one Postgres and Redis serve relay load; each is killed with SIGKILL in the middle of it,
 * one after the other (the second keeps serving after the first died, and its sweeper returns the first's
 * leases). A third gateway starts and its sweeper returns the second's. Then the books balance to the unit: the consume logs sum to
 * the used quota of the user, the token and the channel, and quota left plus quota used is the initial
 * quota, for the wallet and the token alike.
 */

const MODEL = 'gpt-4o-mini';
/** Reserves (500 PreConsumedQuota + 200 max_tokens) × 2.5 = 1,750, settles (100 + 150 × 2) × 2.5 = 1,000. */
const RATIO = { model: 2.5, completion: 2, usage: { prompt_tokens: 100, completion_tokens: 150 }, maxTokens: 200 };
const WALLET = 200_000_000;
const TOKEN_QUOTA = 100_000_000;
/** Short leases, so the dead pods' slices come back within seconds (their defaults are 60, 30 and 10 s). */
const LEASES = {
  QUOTA_LEASE_TTL_SECONDS: '3',
  QUOTA_LEASE_SWEEP_INTERVAL_SECONDS: '1',
  QUOTA_LEASE_SWEEP_GRACE_SECONDS: '0',
};
const WORKERS = 24;
const PHASE_MS = 4_000;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

interface Answer {
  gateway: GatewayProcess;
  ok: boolean;
  status?: number;
  error?: string;
}

/** Keeps `WORKERS` requests in flight, each against a gateway `pick` chooses, until `stop` is aborted. */
async function keepLoading(
  pick: (i: number) => GatewayProcess,
  key: string,
  stop: AbortSignal,
  answers: Answer[],
): Promise<void> {
  const agent = new Agent({ connections: WORKERS * 2, keepAliveTimeout: 30_000 });
  cleanups.push(() => agent.close());
  let sent = 0;
  const worker = async () => {
    while (!stop.aborted) {
      const i = sent++;
      const gateway = pick(i);
      const stream = i % 3 === 0;
      const answer: Answer = { gateway, ok: false };
      try {
        const response = await request(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: MODEL,
            messages: [{ role: 'user', content: `hello ${i}` }],
            stream,
            max_tokens: RATIO.maxTokens,
          }),
          signal: AbortSignal.timeout(30_000),
        });
        answer.status = response.statusCode;
        const body = await response.body.text();
        answer.ok = response.statusCode === 200 && (!stream || body.trimEnd().endsWith('data: [DONE]'));
      } catch (error) {
        // A killed gateway drops its connections: expected for requests in flight on it.
        answer.error = String((error as { code?: string }).code ?? (error as Error).message);
      }
      answers.push(answer);
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
}

const alive = (gateway: GatewayProcess) => gateway.child.exitCode === null && gateway.child.signalCode === null;

describe.skipIf(!hasPostgres() || !hasRedis())('books through kill -9 of gateway processes', () => {
  it('balances to the unit after each of two gateways is killed under load and the leases are swept', async () => {
    const upstream = await startMockOpenAI();
    cleanups.push(() => upstream.close());
    // Streams take a few chunk delays, so requests are in flight at any moment.
    upstream.behaviour = { chunkDelayMs: 5, usage: RATIO.usage };
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    cleanups.push(() => db.end());
    const env = gatewayEnv(database.options, testNamespace(), { DATABASE_POOL_MAX: '10', ...LEASES });
    const spawn = async () => {
      const gateway = await spawnGateway(env);
      cleanups.push(async () => {
        if (alive(gateway)) await gateway.stop('SIGKILL');
      });
      return gateway;
    };
    const [a, b] = await Promise.all([spawn(), spawn()]);

    const root = await setupRoot(a.url);
    const channel = await root.post('/api/channel/', {
      name: 'mock',
      type: 1,
      key: 'sk-up',
      base_url: upstream.url,
      models: MODEL,
    });
    expect(channel.body.success).toBe(true);
    for (const [key, value] of Object.entries({
      ModelRatio: { [MODEL]: RATIO.model },
      CompletionRatio: { [MODEL]: RATIO.completion },
    })) {
      expect((await root.put('/api/option/', { key, value: JSON.stringify(value) })).body.success).toBe(true);
    }
    expect((await root.post('/api/user/', { username: 'spender', password: 'password-1' })).body.success).toBe(true);
    const { rows: users } = await db.query<{ id: number }>(`select id from users where username = 'spender'`);
    const userId = users[0]!.id;
    expect((await root.put('/api/user/', { id: userId, quota: WALLET })).body.success).toBe(true);
    const owner = new DashboardClient(a.url);
    expect((await owner.login('spender', 'password-1')).body.success).toBe(true);
    const token = await owner.post('/api/token/', { name: 'crash', remain_quota: TOKEN_QUOTA, unlimited_quota: false });
    expect(token.body.success).toBe(true);
    const key = String(token.body.data.key);
    const { rows: ids } = await db.query<{ token_id: number; channel_id: number }>(
      `select t.id as token_id, (select id from channels limit 1) as channel_id from tokens t where t.name = 'crash'`,
    );
    const { token_id: tokenId, channel_id: channelId } = ids[0]!;

    /**
     * Balances shown while b holds leases include what the leases hold: after 10 requests (their usage
     * written), every view says exactly the initial quota minus what was spent, never less.
     */
    const expectShownBalances = async () => {
      // Signed in first: the views below must be read while b's leases are surely still there.
      const userView = new DashboardClient(b.url);
      expect((await userView.login('spender', 'password-1')).body.success).toBe(true);
      for (let i = 0; i < 10; i++) {
        const answer = await fetch(`${b.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 200 }),
        });
        expect(answer.status).toBe(200);
      }
      const used = await eventually(
        async () => Number((await db.query('select used_quota from users where id = $1', [userId])).rows[0].used_quota),
        (n) => n === 10_000,
        10_000,
      );
      expect(used).toBe(10_000);
      // b's leases (given back after 3 s idle) are there before and after the views are read.
      const leases = async () =>
        (await db.query<{ id: string; account_type: string }>('select id, account_type from quota_leases order by id'))
          .rows;
      const before = await leases();
      expect(before.map((r) => r.account_type).sort()).toEqual(['token', 'user']);
      const self = (await userView.get('/api/user/self')).body.data;
      const tokens = (await userView.get('/api/token/')).body.data.items as Array<{ id: number; remain_quota: number }>;
      const restToken = (await userView.get(`/rest/token/${tokenId}`)).body;
      const billing = (await (
        await fetch(`${b.url}/v1/dashboard/billing/subscription`, { headers: { authorization: `Bearer ${key}` } })
      ).json()) as { hard_limit_usd: number };
      const admin = (await root.get(`/api/user/${userId}`)).body.data;
      const adminList = (await root.get('/api/user/?p=1&size=100')).body.data.items as Array<{
        id: number;
        quota: number;
      }>;
      const restUser = (await root.get(`/rest/user/${userId}`)).body;
      expect(await leases()).toEqual(before);
      expect({
        self: self.quota,
        token: tokens.find((t) => t.id === tokenId)?.remain_quota,
        restToken: restToken.remain_quota,
        billingUsd: billing.hard_limit_usd,
        admin: admin.quota,
        adminList: adminList.find((u) => u.id === userId)?.quota,
        restUser: restUser.quota,
      }).toEqual({
        self: WALLET - used,
        token: TOKEN_QUOTA - used,
        restToken: TOKEN_QUOTA - used,
        // remain + used of the token, in USD (500,000 quota per USD).
        billingUsd: TOKEN_QUOTA / 500_000,
        admin: WALLET - used,
        adminList: WALLET - used,
        restUser: WALLET - used,
      });
    };
    for (const gateway of [a, b]) {
      const models = await eventually(
        async () =>
          (await (await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
            data?: unknown[];
          },
        (m) => m.data?.length === 1,
        10_000,
      );
      expect(models.data).toHaveLength(1);
    }

    await expectShownBalances();

    // Load on both; kill a mid-load; b serves on alone; then kill b mid-load too.
    const answers: Answer[] = [];
    const stop = new AbortController();
    const serving = keepLoading((i) => (alive(a) && i % 2 === 0 ? a : b), key, stop.signal, answers);
    const servedBy = (gateway: GatewayProcess) => answers.filter((x) => x.gateway === gateway && x.ok).length;
    // Each phase lasts several usage flushes (1 s) and lease flushes (1 s with a 3 s TTL).
    const phase = async (served: () => number) => {
      const until = Date.now() + PHASE_MS;
      await eventually(
        async () => served(),
        (n) => n >= 200 && Date.now() >= until,
        60_000,
      );
    };
    await phase(() => servedBy(a) + servedBy(b));
    const leasesOf = async (gateway: GatewayProcess) =>
      Number(
        (
          await db.query('select count(*)::int as n from quota_leases where holder like $1', [
            `%:${gateway.child.pid}:%`,
          ])
        ).rows[0].n,
      );
    const aHeld = await leasesOf(a);
    await a.stop('SIGKILL');
    const bBefore = servedBy(b);
    await phase(() => servedBy(b) - bBefore);
    // b, serving on, sweeps a's leases once they expire.
    expect(aHeld).toBeGreaterThan(0);
    expect(
      await eventually(
        () => leasesOf(a),
        (n) => n === 0,
        30_000,
      ),
    ).toBe(0);
    await b.stop('SIGKILL');
    stop.abort();
    await serving;
    expect(servedBy(a)).toBeGreaterThan(0);
    // b kept serving after a died.
    expect(servedBy(b) - bBefore).toBeGreaterThanOrEqual(200);
    const failures = answers.filter((x) => !x.ok && x.error === undefined);
    expect({ served: servedBy(a) + servedBy(b), failures: failures.map((x) => x.status) }).toMatchObject({
      failures: [],
    });

    const leasesOfDeadPods = Number((await db.query('select count(*)::int as n from quota_leases')).rows[0].n);
    const logsBefore = Number((await db.query('select count(*)::int as n from logs where type = 2')).rows[0].n);
    // A third gateway's sweeper returns the dead pods' leases (on the database clock, TTL 3 s, grace 0).
    const c = await spawn();
    const left = await eventually(
      async () => Number((await db.query('select count(*)::int as n from quota_leases')).rows[0].n),
      (n) => n === 0,
      30_000,
    );
    expect(left).toBe(0);
    await c.stop('SIGTERM');

    const one = async (text: string, values: unknown[]) => (await db.query(text, values)).rows[0];
    const user = await one('select quota, used_quota from users where id = $1', [userId]);
    const tok = await one('select remain_quota, used_quota from tokens where id = $1', [tokenId]);
    const chan = await one('select used_quota from channels where id = $1', [channelId]);
    const logs = await one(
      `select count(*)::int as n, coalesce(sum(quota), 0)::bigint as quota from logs where type = 2 and token_id = $1`,
      [tokenId],
    );
    const logged = Number(logs.quota);
    // The test spent something worth checking, and the dead pods really held leases. Requests served in
    // the last moments of a killed pod lose their log and their charge together (nothing is billed twice).
    const served = servedBy(a) + servedBy(b);
    expect(Number(logs.n)).toBeGreaterThanOrEqual(100);
    expect(Number(logs.n)).toBeLessThanOrEqual(served);
    expect(Number(logs.n)).toBe(logsBefore);
    expect(leasesOfDeadPods).toBeGreaterThan(0);
    expect(logged).toBe(Number(logs.n) * 1_000);
    expect({
      userUsed: Number(user.used_quota),
      tokenUsed: Number(tok.used_quota),
      channelUsed: Number(chan.used_quota),
      walletLeftPlusUsed: Number(user.quota) + Number(user.used_quota),
      tokenLeftPlusUsed: Number(tok.remain_quota) + Number(tok.used_quota),
    }).toEqual({
      userUsed: logged,
      tokenUsed: logged,
      channelUsed: logged,
      walletLeftPlusUsed: WALLET,
      tokenLeftPlusUsed: TOKEN_QUOTA,
    });
  }, 240_000);
});
