import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findOptionDefinition } from '../../gateway/src/domain/options/definitions.ts';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { parseSamples, scrapeMetrics } from '../support/metrics.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { eventually, sleep } from '../support/wait.ts';

// Channel affinity (reference §4.2) across two gateways sharing Postgres and Redis (or, without a test
// Redis, one in-process cluster namespace): four equal channels serve the model, and a request's
// prompt_cache_key decides which one serves it. Which channel served is read from the upstream key.
const MODEL = 'gpt-4o-mini';
const KEYS = ['key-1', 'key-2', 'key-3', 'key-4'];
const DEFAULT_RULES = findOptionDefinition('channel_affinity_setting.rules')?.default ?? '[]';

let a: Gateway;
let b: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let upstream: MockOpenAI;
let clients: [OpenAI, OpenAI];
const channelOfKey: Record<string, number> = {};
let run = 0;

beforeAll(async () => {
  upstream = await startMockOpenAI();
  const database = await createTestDatabase();
  drop = database.drop;
  const env = gatewayEnv(database.options, testNamespace(), { GLOBAL_API_RATE_LIMIT_ENABLE: 'false' });
  a = await startTestGateway(env);
  b = await startTestGateway(env);
  root = await setupRoot(a.url);
  await a.options.setMany({ ModelRatio: JSON.stringify({ [MODEL]: 0.075 }) });
  for (const key of KEYS) {
    const created = await root.post('/api/channel/', {
      name: key,
      type: 1,
      key,
      base_url: upstream.url,
      models: MODEL,
      group: 'default',
    });
    expect(created.body.success).toBe(true);
  }
  for (const row of await a.store.db.selectFrom('channels').select(['id', 'name']).execute()) {
    channelOfKey[row.name] = row.id;
  }
  const token = await root.post('/api/token/', { name: 'affinity', unlimited_quota: true });
  const apiKey = token.body.data.key as string;
  clients = [a, b].map((g) => new OpenAI({ apiKey, baseURL: `${g.url}/v1`, maxRetries: 0 })) as [OpenAI, OpenAI];
  for (const client of clients) {
    await eventually(
      async () => (await client.models.list()).data.length,
      (n) => n === 1,
      3000,
    );
  }
});

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await drop?.();
  await upstream?.close();
});

beforeEach(async () => {
  run++;
  upstream.behaviour = {};
  upstream.requests.length = 0;
  await setOptions({
    'channel_affinity_setting.enabled': 'true',
    'channel_affinity_setting.switch_on_success': 'true',
    'channel_affinity_setting.default_ttl_seconds': '3600',
    RetryTimes: '0',
  });
});

/** Sets options on gateway a and waits until b has them too. */
async function setOptions(values: Record<string, string>): Promise<void> {
  await a.options.setMany(values);
  await eventually(
    async () => Object.entries(values).every(([key, value]) => b.options.get(key) === value),
    (same) => same,
    2000,
  );
}

/** A chat request with a prompt_cache_key, on gateway a or b; answers the upstream key that served it. */
async function ask(cacheKey: string | undefined, on: 0 | 1): Promise<string> {
  const before = upstream.requests.length;
  await clients[on].chat.completions.create({
    model: MODEL,
    messages: [{ role: 'user', content: 'hi' }],
    ...(cacheKey === undefined ? {} : { prompt_cache_key: cacheKey }),
  });
  const served = upstream.requests.slice(before).at(-1);
  return String(served?.headers.authorization).replace('Bearer ', '');
}

/** The affinity counters of both gateways, summed: lookups by result, and switches. */
async function counters(): Promise<Record<string, number>> {
  const totals: Record<string, number> = {};
  for (const gateway of [a, b]) {
    const text = await scrapeMetrics(gateway);
    for (const s of parseSamples(text, 'tollgate_channel_affinity_lookups_total')) {
      totals[s.labels.result!] = (totals[s.labels.result!] ?? 0) + s.value;
    }
    for (const s of parseSamples(text, 'tollgate_channel_affinity_switches_total')) {
      totals.switch = (totals.switch ?? 0) + s.value;
    }
  }
  return totals;
}

describe('channel affinity across two gateways', () => {
  it('sends 20 requests with one prompt_cache_key to one channel, whichever gateway takes them', async () => {
    const before = await counters();
    const served: string[] = [];
    for (let i = 0; i < 20; i++) served.push(await ask(`conversation-${run}`, (i % 2) as 0 | 1));
    expect(new Set(served).size).toBe(1);
    const after = await counters();
    // The hit rate is computable from the counters: 19 hits of 20 lookups.
    expect((after.hit ?? 0) - (before.hit ?? 0)).toBe(19);
    expect((after.miss ?? 0) - (before.miss ?? 0)).toBe(1);
  });

  it('spreads different keys over the channels, each key staying on its own', async () => {
    const first: Record<string, string> = {};
    for (let i = 0; i < 20; i++) first[`k${i}`] = await ask(`spread-${run}-${i}`, 0);
    expect(new Set(Object.values(first)).size).toBeGreaterThan(1);
    for (let i = 0; i < 20; i++) expect(await ask(`spread-${run}-${i}`, 1)).toBe(first[`k${i}`]);
  });

  it('is not sticky when turned off, and looks nothing up', async () => {
    await setOptions({ 'channel_affinity_setting.enabled': 'false' });
    const before = await counters();
    const served = new Set<string>();
    for (let i = 0; i < 20; i++) served.add(await ask(`off-${run}`, (i % 2) as 0 | 1));
    expect(served.size).toBeGreaterThan(1);
    expect(await counters()).toEqual(before);
  });

  it('forgets a key once its time to live has passed', async () => {
    await setOptions({ 'channel_affinity_setting.default_ttl_seconds': '1' });
    await ask(`short-${run}`, 0);
    const held = await root.get('/api/option/channel_affinity_cache');
    expect(held.body.data.by_rule_name['chat prompt cache key']).toBeGreaterThanOrEqual(1);
    await sleep(1200);
    const before = await counters();
    await ask(`short-${run}`, 1);
    const after = await counters();
    expect((after.miss ?? 0) - (before.miss ?? 0)).toBe(1);
    expect((after.hit ?? 0) - (before.hit ?? 0)).toBe(0);
  });

  it('never uses a disabled channel, even the one remembered, and moves the key to the new one', async () => {
    const key = `disabled-${run}`;
    const remembered = await ask(key, 0);
    const id = channelOfKey[remembered];
    expect((await root.put('/api/channel/', { id, status: 2 })).body.success).toBe(true);
    try {
      // Both gateways follow the change through the bus before the next request.
      await sleep(500);
      const next = await ask(key, 1);
      expect(next).not.toBe(remembered);
      expect(await ask(key, 0)).toBe(next);
    } finally {
      await root.put('/api/channel/', { id, status: 1 });
      await sleep(500);
    }
  });

  it('switches a key to the channel that served after its own failed (switch_on_success)', async () => {
    await setOptions({ RetryTimes: '3' });
    const key = `switch-${run}`;
    const remembered = await ask(key, 0);
    upstream.behaviour = { failWith: { status: 500, times: 1 } };
    const before = await counters();
    const next = await ask(key, 1);
    expect(next).not.toBe(remembered);
    expect(await ask(key, 0)).toBe(next);
    const after = await counters();
    expect((after.switch ?? 0) - (before.switch ?? 0)).toBe(1);
  });

  it('fails over no further when the rule says skip_retry_on_failure', async () => {
    await setOptions({
      RetryTimes: '3',
      'channel_affinity_setting.rules': JSON.stringify([
        {
          name: 'sticky',
          path: '/v1/chat/completions',
          model_pattern: '*',
          key_source: 'body:prompt_cache_key',
          skip_retry_on_failure: true,
        },
      ]),
    });
    try {
      const key = `skip-${run}`;
      await ask(key, 0);
      upstream.behaviour = { failWith: { status: 500, times: 1 } };
      const before = upstream.requests.length;
      await expect(ask(key, 1)).rejects.toMatchObject({ status: 500 });
      expect(upstream.requests.length - before).toBe(1);
    } finally {
      await setOptions({ 'channel_affinity_setting.rules': DEFAULT_RULES });
    }
  });
});

describe('the affinity cache routes', () => {
  it('show statistics, per-key usage, and clear by rule or entirely (root)', async () => {
    const key = `routes-${run}`;
    await ask(key, 0);
    // Its consume log (logs are written in batches, an earlier test's may come after the call's start).
    const info = await eventually(
      async () => {
        const rows = await a.store.db.selectFrom('logs').select('other').where('type', '=', 2).execute();
        return rows
          .map((row) => JSON.parse(row.other || '{}').admin_info?.channel_affinity)
          .find((affinity) => affinity?.key_hint === key);
      },
      (found) => found !== undefined,
      5000,
    );
    expect(info).toMatchObject({ rule_name: 'chat prompt cache key', using_group: 'default', hit: false });

    // The statistics are written once the answer has been billed: read until they are there.
    const usage = await eventually(
      () =>
        root.get(
          `/api/log/channel_affinity_usage_cache?rule_name=${encodeURIComponent(info.rule_name)}&using_group=default&key_fp=${info.key_fp}`,
        ),
      (answer) => answer.body.data?.total > 0,
      2000,
    );
    expect(usage.body).toMatchObject({
      success: true,
      data: { rule_name: info.rule_name, key_fp: info.key_fp, total: 1 },
    });
    expect((await root.get('/api/log/channel_affinity_usage_cache')).body).toMatchObject({ success: false });

    const stats = await root.get('/api/option/channel_affinity_cache');
    expect(stats.body.data).toMatchObject({ enabled: true, cache_capacity: 100000 });
    expect(stats.body.data.total).toBeGreaterThanOrEqual(1);

    expect((await root.delete('/api/option/channel_affinity_cache')).body).toMatchObject({
      success: false,
      code: 'affinity_clear_target_required',
    });
    expect((await root.delete('/api/option/channel_affinity_cache?rule_name=nope')).body).toMatchObject({
      success: false,
      code: 'affinity_rule_unknown',
    });
    const byRule = await root.delete(
      `/api/option/channel_affinity_cache?rule_name=${encodeURIComponent(info.rule_name)}`,
    );
    expect(byRule.body.data.deleted).toBeGreaterThanOrEqual(1);
    await root.delete('/api/option/channel_affinity_cache?all=true');
    await ask(key, 1);
    const cleared = await root.delete('/api/option/channel_affinity_cache?all=true');
    expect(cleared.body).toMatchObject({ success: true, data: { deleted: 1 } });
    expect((await root.get('/api/option/channel_affinity_cache')).body.data.total).toBe(0);
  });

  it('refuses rules it cannot honour when they are saved', async () => {
    const answer = await root.put('/api/option/', {
      key: 'channel_affinity_setting.rules',
      value: JSON.stringify([{ name: 'x', model_regex: ['^gpt'], key_sources: [{ type: 'context_int', key: 'id' }] }]),
    });
    expect(answer.body).toMatchObject({ success: false, code: 'OPTION_INVALID_RULES' });
    expect(answer.body.message).toContain('context_int');
  });
});
