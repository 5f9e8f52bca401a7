import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { billed } from '../support/usage.ts';

// DataExportInterval (default 5 minutes): the usage dashboard's hourly buckets are added up in memory
// and written that often; a graceful shutdown writes what is held. Consume logs and quota counters are
// written as before, at once. DataExportEnabled off: no bucket at all.

let upstream: MockOpenAI;
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let env: Record<string, string>;
let key: string;

const chat = (gateway: Gateway) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'dash-model', messages: [{ role: 'user', content: 'hi' }] }),
  }).then(async (answer) => {
    expect(answer.status).toBe(200);
    await answer.arrayBuffer();
  });

const buckets = (gateway: Gateway) =>
  gateway.store.db.selectFrom('quota_data').select(['model_name', 'quota', 'token_used', 'count']).execute();

async function signedIn(gateway: Gateway): Promise<DashboardClient> {
  const root = new DashboardClient(gateway.url);
  expect((await root.login('root', 'root-password')).body.success).toBe(true);
  return root;
}

const dashboard = (root: DashboardClient) =>
  root.get(`/api/data/self?start_timestamp=0&end_timestamp=${Math.floor(Date.now() / 1000) + 3600}`);

beforeAll(async () => {
  upstream = await startMockOpenAI();
  upstream.behaviour = { usage: { prompt_tokens: 30, completion_tokens: 12 } };
  database = await createTestDatabase();
  env = gatewayEnv(database.options, testNamespace());
  const gateway = await startTestGateway(env);
  try {
    const root = await setupRoot(gateway.url);
    const created = await root.post('/api/channel/', {
      name: 'dash',
      type: 1,
      key: 'sk-upstream',
      base_url: upstream.url,
      models: 'dash-model',
      group: 'default',
    });
    expect(created.body.success).toBe(true);
    await gateway.options.setMany({ ModelRatio: JSON.stringify({ 'dash-model': 2 }) });
    key = (await root.post('/api/token/', { name: 'dash', unlimited_quota: true })).body.data.key;
  } finally {
    await gateway.stop();
  }
});

afterAll(async () => {
  await database?.drop();
  await upstream?.close();
});

describe('the usage dashboard buckets (DataExportInterval)', () => {
  it('are held while the interval runs, the books written at once, and written exactly on shutdown', async () => {
    const gateway = await startTestGateway(env);
    let quota = 0;
    try {
      const root = await signedIn(gateway);
      const first = await billed(gateway, () => chat(gateway));
      const second = await billed(gateway, () => chat(gateway));
      quota = first.quota + second.quota;
      // (30 + 12) × 2 per call, as the consume logs say.
      expect(quota).toBe(2 * (30 + 12) * 2);
      const users = await gateway.store.db
        .selectFrom('users')
        .select('used_quota')
        .where('username', '=', 'root')
        .execute();
      expect(users[0]?.used_quota).toBe(quota);
      expect(await buckets(gateway)).toEqual([]);
      // The dashboard answers meanwhile, without the held buckets.
      expect((await dashboard(root)).body).toMatchObject({ success: true, data: [] });
    } finally {
      await gateway.stop();
    }
    const after = await startTestGateway(env);
    try {
      expect(await buckets(after)).toEqual([{ model_name: 'dash-model', quota, token_used: 84, count: 2 }]);
      const answer = await dashboard(await signedIn(after));
      expect(answer.body.data).toMatchObject([{ model_name: 'dash-model', quota, token_used: 84, count: 2 }]);
    } finally {
      await after.store.db.deleteFrom('quota_data').execute();
      await after.stop();
    }
  });

  it('DataExportEnabled off: no bucket, not even on shutdown', async () => {
    const gateway = await startTestGateway(env);
    try {
      await gateway.options.setMany({ DataExportEnabled: 'false' });
      await billed(gateway, () => chat(gateway));
    } finally {
      await gateway.stop();
    }
    const after = await startTestGateway(env);
    try {
      expect(await buckets(after)).toEqual([]);
    } finally {
      await after.options.setMany({ DataExportEnabled: 'true' });
      await after.stop();
    }
  });
});
