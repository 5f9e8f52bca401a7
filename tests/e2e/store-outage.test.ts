/**
 * The data plane outlives its dependencies (issue 18, deliverable 6): two gateways reach Postgres and
 * Redis through TCP proxies the test cuts. Under relay load with known keys, Postgres is cut for 60 s and
 * Redis for 20 s: at least 99 % of the relays succeed, /api and /rest answer a fast 503 with Retry-After,
 * the probes stay ready, and once the stores are back every served request has its consume log and its
 * charge, the books balancing to the unit for the user, the token and the channel.
 */
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { gatewayEnv, hasRedis, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { endpointOf, startTcpProxy } from '../support/tcp-proxy.ts';
import { eventually, sleep } from '../support/wait.ts';

const MODEL = 'outage-model';
const POSTGRES_CUT_MS = 60_000;
const REDIS_CUT_MS = 20_000;
const USER_QUOTA = 100_000_000;
const TOKEN_QUOTA = 50_000_000;
/** Paced load: 4 workers, one request each per 100 ms at most, so 20 per second per gateway. */
const WORKERS = 4;
const INTERVAL_MS = 100;
/** Prompt tokens the upstream reports per call before the cut (no completion: the charge is linear in it). */
const PROMPT_TOKENS = 300;
/** Requests per gateway the paced load sends during the Postgres cut, at most. */
const CUT_REQUESTS_PER_GATEWAY = (POSTGRES_CUT_MS / INTERVAL_MS) * (WORKERS / 2);
/** The lease slice (QuotaLedger's default) and so the outage credit per account per pod. */
const SLICE = 500_000;

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

interface Tally {
  ok: number;
  failed: number;
  statuses: Map<number, number>;
}

/** Relay load on both gateways with known keys until `stop` is set; every answer is tallied. */
function relayLoad(gateways: Gateway[], keys: string[]) {
  const tally: Tally = { ok: 0, failed: 0, statuses: new Map() };
  let stopped = false;
  const chat = async (base: string, key: string) => {
    let status = 0;
    try {
      const response = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hello there' }], max_tokens: 20 }),
        signal: AbortSignal.timeout(20_000),
      });
      status = response.status;
      await response.arrayBuffer();
    } catch {
      status = 0;
    }
    if (status === 200) tally.ok++;
    else tally.failed++;
    tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
  };
  const started = performance.now();
  const workers = Array.from({ length: WORKERS }, async (_, worker) => {
    for (let i = 0; !stopped; i++) {
      await chat(gateways[(worker + i) % gateways.length]!.url, keys[(worker + i) % keys.length]!);
      await sleep(Math.max(0, started + (i + 1) * INTERVAL_MS - performance.now()));
    }
  });
  return {
    tally,
    snapshot: () => ({ ok: tally.ok, failed: tally.failed }),
    async stop() {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

const since = (before: { ok: number; failed: number }, now: { ok: number; failed: number }) => ({
  ok: now.ok - before.ok,
  failed: now.failed - before.failed,
});

/** The pod's tollgate_ledger_debt_quota gauge. */
async function debtQuota(metricsUrl: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  return Number(/^tollgate_ledger_debt_quota(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
}

async function timed<T>(call: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await call();
  return { value, ms: performance.now() - started };
}

describe.skipIf(!hasPostgres() || !hasRedis())(
  'Postgres and Redis outages under relay load',
  { timeout: 240_000 },
  () => {
    it('keeps relaying known keys, answers a fast 503 elsewhere, and loses no charge', async () => {
      const database = await createTestDatabase();
      cleanups.push(database.drop);
      const redisUrl = inject('redisUrl')!;
      const pgProxy = await startTcpProxy(endpointOf(database.url!, 5432));
      const redisProxy = await startTcpProxy(endpointOf(redisUrl, 6379));
      cleanups.push(
        () => pgProxy.close(),
        () => redisProxy.close(),
      );
      const upstream: MockOpenAI = await startMockOpenAI();
      upstream.behaviour = { usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: 0 } };
      cleanups.push(() => upstream.close());
      const namespace = testNamespace();
      const env = gatewayEnv({ databaseUrl: pgProxy.urlFor(database.url!) }, namespace, {
        REDIS_URL: redisProxy.urlFor(redisUrl),
      });
      const gateways: Gateway[] = [];
      for (let i = 0; i < 2; i++) {
        const gateway = await startTestGateway(env);
        gateways.push(gateway);
        cleanups.push(() => gateway.stop());
      }
      const [a, b] = gateways as [Gateway, Gateway];
      const books = new pg.Client({ connectionString: database.url });
      await books.connect();
      cleanups.push(() => books.end());

      // A channel, a user with a known balance, a limited and an unlimited key of theirs.
      const root = await setupRoot(a.url);
      await a.options.setMany({ ModelRatio: JSON.stringify({ [MODEL]: 1 }) });
      const channel = await root.post('/api/channel/', {
        name: 'outage',
        type: 1,
        key: 'sk-upstream',
        base_url: upstream.url,
        models: MODEL,
        group: 'default',
      });
      expect(channel.body.success, JSON.stringify(channel.body)).toBe(true);
      const limited = await root.post('/api/token/', {
        name: 'limited',
        remain_quota: TOKEN_QUOTA,
        unlimited_quota: false,
      });
      const unlimited = await root.post('/api/token/', { name: 'unlimited', unlimited_quota: true });
      const keys = [limited.body.data.key as string, unlimited.body.data.key as string];
      await books.query('update users set quota = $1 where id = $2', [USER_QUOTA, root.userId]);
      const { rows: tokenRows } = await books.query<{ id: number }>(
        "select id from tokens where name = 'limited' and deleted_at is null",
      );
      const tokenId = tokenRows[0]!.id;
      // Both gateways route the channel before the load starts.
      for (const gateway of gateways) {
        await eventually(
          async () =>
            (await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${keys[0]}` } })).json(),
          (body: any) => (body.data ?? []).some((m: { id: string }) => m.id === MODEL),
          15_000,
        );
      }

      const load = relayLoad(gateways, keys);
      cleanups.push(() => load.stop());
      await eventually(
        async () => load.tally.ok,
        (ok) => ok >= 60,
        20_000,
      );
      expect(load.tally.failed, JSON.stringify([...load.tally.statuses])).toBe(0);

      // During the cut each call costs enough that the smallest wallet lease runs dry: the pod spends past it
      // on outage credit (half a slice more), while no pod spends more than its lease plus one slice.
      await eventually(
        async () => Number((await books.query('select count(*) as n from logs where type = 2')).rows[0].n),
        (n) => n > 0,
        10_000,
      );
      const { rows: charged } = await books.query<{ quota: number }>('select quota from logs where type = 2 limit 1');
      const perPromptToken = Number(charged[0]!.quota) / PROMPT_TOKENS;
      const { rows: walletLeases } = await books.query<{ amount: number }>(
        "select amount from quota_leases where account_type = 'user'",
      );
      expect(walletLeases).toHaveLength(2);
      const smallest = Math.min(...walletLeases.map((lease) => Number(lease.amount)));
      const cutCharge = Math.ceil((smallest + SLICE / 2) / CUT_REQUESTS_PER_GATEWAY);
      upstream.behaviour = { usage: { prompt_tokens: Math.ceil(cutCharge / perPromptToken), completion_tokens: 0 } };

      // Postgres gone for 60 s.
      const beforePg = load.snapshot();
      pgProxy.cut();
      await sleep(2_000);
      const api = await timed(() => root.get('/api/token/?p=0&size=10'));
      expect(api.value.status).toBe(503);
      expect(api.value.body).toMatchObject({ success: false, code: 'store_unavailable', retry_after: 5 });
      expect(api.value.headers.get('retry-after')).toBe('5');
      expect(api.ms).toBeLessThan(1_500);
      const consoleClient = new DashboardClient(b.url);
      consoleClient.cookie = root.cookie;
      consoleClient.userId = root.userId;
      const rest = await timed(() => consoleClient.get('/rest/token'));
      expect(rest.value.status).toBe(503);
      expect(rest.value.headers.get('retry-after')).toBe('5');
      expect(rest.ms).toBeLessThan(1_500);
      // A key no gateway has seen cannot be checked: the relay says so in the client's format.
      const unknown = await fetch(`${a.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk-never-seen-before', 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(unknown.status).toBe(503);
      expect(unknown.headers.get('retry-after')).toBe('5');
      expect(((await unknown.json()) as { error: unknown }).error).toMatchObject({ code: 'store_unavailable' });
      const claude = await fetch(`${b.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': 'sk-never-seen-either', 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(claude.status).toBe(503);
      expect(await claude.json()).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
      const gemini = await fetch(`${b.url}/v1beta/models/${MODEL}:generateContent?key=never-seen-gemini`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
      });
      expect(gemini.status).toBe(503);
      expect(await gemini.json()).toMatchObject({ error: { code: 503 } });
      for (const gateway of gateways) expect((await fetch(`${gateway.url}/readyz`)).status).toBe(200);
      await sleep(POSTGRES_CUT_MS - 2_000 - api.ms - rest.ms);
      // Spending past a lease is outage credit, owed until the database is back (how much depends on
      // where each lease stood when the cut came).
      const debt = await Promise.all(gateways.map((gateway) => debtQuota(gateway.metricsUrl)));
      for (const quota of debt) expect(quota).toBeLessThanOrEqual(2 * SLICE);
      expect(debt[0]! + debt[1]!, `debt at the end of the cut ${debt}`).toBeGreaterThan(0);
      const duringPg = since(beforePg, load.snapshot());
      pgProxy.restore();
      expect(duringPg.ok, JSON.stringify([...load.tally.statuses])).toBeGreaterThan(1_000);
      expect(
        duringPg.ok / (duringPg.ok + duringPg.failed),
        `statuses ${JSON.stringify([...load.tally.statuses])}, debt at the end of the cut ${debt}`,
      ).toBeGreaterThanOrEqual(0.99);
      expect(
        (
          await eventually(
            () => root.get('/api/token/?p=0&size=10'),
            (r) => r.status === 200,
            15_000,
          )
        ).status,
      ).toBe(200);

      // Redis gone for 20 s.
      const beforeRedis = load.snapshot();
      redisProxy.cut();
      await sleep(2_000);
      // /api keeps working on Postgres (its per-IP limit lets requests through).
      const apiDuringRedis = await timed(() => root.get('/api/token/?p=0&size=10'));
      expect(apiDuringRedis.value.body.success, JSON.stringify(apiDuringRedis.value.body)).toBe(true);
      expect(apiDuringRedis.ms).toBeLessThan(3_000);
      await sleep(REDIS_CUT_MS - 2_000 - apiDuringRedis.ms);
      const duringRedis = since(beforeRedis, load.snapshot());
      redisProxy.restore();
      expect(duringRedis.ok).toBeGreaterThan(300);
      expect(duringRedis.ok / (duringRedis.ok + duringRedis.failed)).toBeGreaterThanOrEqual(0.99);
      await sleep(2_000);
      await load.stop();
      const served = load.tally.ok;
      console.log(
        `outage: Postgres cut ${duringPg.ok} ok / ${duringPg.failed} failed, Redis cut ${duringRedis.ok} ok / ${duringRedis.failed} failed, ${served} served in all`,
      );
      expect(load.tally.ok / (load.tally.ok + load.tally.failed)).toBeGreaterThanOrEqual(0.99);

      // Once the database is back, the debt is written by each pod's own sync, not just by its stop.
      const settled = await eventually(
        () => Promise.all(gateways.map((gateway) => debtQuota(gateway.metricsUrl))),
        (debts) => debts.every((quota) => quota === 0),
        15_000,
      );
      expect(settled).toEqual([0, 0]);
      // Graceful stops: every lease given back, every usage record written.
      for (const gateway of gateways) await gateway.stop();
      const one = async <T>(text: string, values: unknown[] = []) => (await books.query(text, values)).rows[0] as T;
      const logs = await one<{ n: string; quota: string }>(
        'select count(*) as n, coalesce(sum(quota), 0) as quota from logs where type = 2',
      );
      const spent = Number(logs.quota);
      expect(Number(logs.n)).toBe(served);
      expect(spent).toBeGreaterThan(0);
      const user = await one<{ quota: number; used_quota: number }>(
        'select quota, used_quota from users where id = $1',
        [root.userId],
      );
      expect({ balance: Number(user.quota), used: Number(user.used_quota) }).toEqual({
        balance: USER_QUOTA - spent,
        used: spent,
      });
      const token = await one<{ remain_quota: number; used_quota: number }>(
        'select remain_quota, used_quota from tokens where id = $1',
        [tokenId],
      );
      const tokenSpent = Number(
        (
          await one<{ quota: string }>(
            'select coalesce(sum(quota), 0) as quota from logs where type = 2 and token_id = $1',
            [tokenId],
          )
        ).quota,
      );
      expect({ remain: Number(token.remain_quota), used: Number(token.used_quota) }).toEqual({
        remain: TOKEN_QUOTA - tokenSpent,
        used: tokenSpent,
      });
      const channelUsed = await one<{ used_quota: number }>('select used_quota from channels where id = $1', [
        channel.body.data?.id ?? (await one<{ id: number }>("select id from channels where name = 'outage'")).id,
      ]);
      expect(Number(channelUsed.used_quota)).toBe(spent);
      expect(await one<{ n: string }>('select count(*) as n from quota_leases')).toEqual({ n: '0' });
    });
  },
);
