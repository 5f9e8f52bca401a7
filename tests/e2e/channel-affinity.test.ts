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

// The must-hold case with real processes (tests/relay/channel-affinity.test.ts runs the rest of the
// behaviour in-process): two `node gateway/src/main.ts` sharing Postgres and Redis, four equal channels.
describe.skipIf(!hasPostgres() || !hasRedis())('channel affinity across two gateway processes', () => {
  it('sends 20 requests with one prompt_cache_key to one channel, alternating processes', async () => {
    const upstream: MockOpenAI = await startMockOpenAI();
    cleanups.push(() => upstream.close());
    const database = await createTestDatabase();
    cleanups.push(database.drop);
    const env = gatewayEnv(database.options, testNamespace());
    const [a, b] = await Promise.all([spawnGateway(env), spawnGateway(env)]);
    running.push(a!, b!);

    const root = await setupRoot(a!.url);
    for (const n of [1, 2, 3, 4]) {
      const channel = { name: `c${n}`, type: 1, key: `key-${n}`, base_url: upstream.url, models: 'gpt-4o-mini' };
      expect((await root.post('/api/channel/', channel)).body.success).toBe(true);
    }
    const price = { key: 'ModelRatio', value: JSON.stringify({ 'gpt-4o-mini': 0.075 }) };
    expect((await root.put('/api/option/', price)).body.success).toBe(true);
    const key = (await root.post('/api/token/', { name: 'sticky', unlimited_quota: true })).body.data.key as string;

    const chat = (url: string, cacheKey: string) =>
      fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'hi' }],
          prompt_cache_key: cacheKey,
        }),
      });
    // Both processes know the channels before the count starts.
    for (const gateway of [a!, b!]) {
      const answer = await eventually(
        async () => (await chat(gateway.url, `warm-up-${gateway.url}`)).status,
        (status) => status === 200,
        5000,
      );
      expect(answer).toBe(200);
    }

    const served = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const before = upstream.requests.length;
      const answer = await chat((i % 2 === 0 ? a : b)!.url, 'one-conversation');
      expect(answer.status).toBe(200);
      const request = upstream.requests.slice(before).at(-1);
      served.add(String(request?.headers.authorization));
    }
    expect(served.size).toBe(1);

    // Different keys are spread over the channels.
    const spread = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const before = upstream.requests.length;
      expect((await chat(a!.url, `conversation-${i}`)).status).toBe(200);
      spread.add(String(upstream.requests.slice(before).at(-1)?.headers.authorization));
    }
    expect(spread.size).toBeGreaterThan(1);
  });
});
