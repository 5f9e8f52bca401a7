import { afterAll, describe, expect, it } from 'vitest';
import { setupRoot } from '../support/client.ts';
import { createTestDatabase, hasPostgres } from '../support/database.ts';
import { type GatewayProcess, gatewayEnv, hasRedis, spawnGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { eventually } from '../support/wait.ts';

const running: GatewayProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const p of running) if (p.child.exitCode === null) await p.stop();
  for (const cleanup of cleanups) await cleanup();
});

describe.skipIf(!hasPostgres() || !hasRedis())('the model request limit across two gateway processes', () => {
  it('lets N requests a minute through in total, and answers the rest 429 in OpenAI shape', async () => {
    const upstream: MockOpenAI = await startMockOpenAI();
    cleanups.push(() => upstream.close());
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    const env = gatewayEnv(database.options, testNamespace());
    const [a, b] = await Promise.all([spawnGateway(env), spawnGateway(env)]);
    running.push(a!, b!);

    const root = await setupRoot(a!.url);
    expect(
      (
        await root.post('/api/channel/', {
          name: 'mock',
          type: 1,
          key: 'sk-up',
          base_url: upstream.url,
          models: 'gpt-4o-mini',
        })
      ).body.success,
    ).toBe(true);
    for (const [key, value] of Object.entries({
      ModelRatio: JSON.stringify({ 'gpt-4o-mini': 0.075 }),
      ModelRequestRateLimitCount: '5',
      ModelRequestRateLimitSuccessCount: '1000',
      ModelRequestRateLimitDurationMinutes: '1',
      ModelRequestRateLimitEnabled: 'true',
    })) {
      expect((await root.put('/api/option/', { key, value })).body.success).toBe(true);
    }
    const key = (await root.post('/api/token/', { name: 'limited', unlimited_quota: true })).body.data.key as string;

    const chat = (url: string) =>
      fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
    // Both processes know the channel and the limit before the count starts.
    for (const gateway of [a!, b!]) {
      const models = await eventually(
        async () =>
          (await (await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
            data: unknown[];
          },
        (m) => m.data?.length === 1,
        3000,
      );
      expect(models.data).toHaveLength(1);
    }

    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => chat(i % 2 === 0 ? a!.url : b!.url)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
    const refused = answers.find((r) => r.status === 429)!;
    expect(((await refused.json()) as { error: { code: string; type: string } }).error).toMatchObject({
      code: 'rate_limited',
      type: 'new_api_error',
    });
    expect(upstream.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(5);

    expect(await a!.stop()).toBe(0);
    expect(await b!.stop()).toBe(0);
  });
});
