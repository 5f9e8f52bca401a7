import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';

// Read-your-writes for channels: once an administrator's create or update through /api has answered, the
// same pod routes by it — no waiting for the cluster bus. To prove it does not lean on the bus, this pod's
// channel announcements are dropped (as a slow or lost message would be); only the periodic resync (60 s)
// would otherwise bring the change.
let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let first: MockOpenAI;
let second: MockOpenAI;
let key: string;

beforeAll(async () => {
  [first, second] = await Promise.all([startMockOpenAI(), startMockOpenAI()]);
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  const bus = gateway.cluster.bus;
  const publish = bus.publish.bind(bus);
  bus.publish = (channel, message) => (channel === 'channels' ? Promise.resolve() : publish(channel, message));
  root = await setupRoot(gateway.url);
  key = (await root.post('/api/token/', { name: 'ryw', unlimited_quota: true })).body.data.key;
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await Promise.all([first?.close(), second?.close()]);
});

async function chat(model: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: response.status, body: await response.json() };
}

describe('channel read-your-writes', () => {
  it('routes by a channel the moment its create or update has answered, on the same pod', async () => {
    const created = await root.post('/api/channel/', {
      name: 'fresh',
      type: 1,
      key: 'sk-first',
      base_url: first.url,
      models: 'gpt-4o-mini',
      group: 'default',
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
    const answered = await chat('gpt-4o-mini');
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(first.requests.at(-1)?.headers.authorization).toBe('Bearer sk-first');

    const listed = await root.get('/api/channel/?p=1&page_size=10');
    const id = (listed.body.data.items as Array<{ id: number; name: string }>).find((c) => c.name === 'fresh')!.id;
    // A new upstream and key: the very next request goes there with it.
    const moved = await root.put('/api/channel/', { id, base_url: second.url, key: 'sk-second' });
    expect(moved.body.success, JSON.stringify(moved.body)).toBe(true);
    const before = first.requests.length;
    expect((await chat('gpt-4o-mini')).status).toBe(200);
    expect(second.requests.at(-1)?.headers.authorization).toBe('Bearer sk-second');
    expect(first.requests.length).toBe(before);

    // A model added is served at once; one removed is no longer.
    const remodelled = await root.put('/api/channel/', { id, models: 'gpt-4.1-nano' });
    expect(remodelled.body.success, JSON.stringify(remodelled.body)).toBe(true);
    expect((await chat('gpt-4.1-nano')).status).toBe(200);
    const gone = await chat('gpt-4o-mini');
    expect(gone.status).toBe(503);
    expect(gone.body.error.code).toBe('model_not_found');

    // Disabled: refused at once.
    const disabled = await root.put('/api/channel/', { id, status: 2 });
    expect(disabled.body.success, JSON.stringify(disabled.body)).toBe(true);
    expect((await chat('gpt-4.1-nano')).status).toBe(503);
  });
});
