import { request as httpRequest } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, refusalOf, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { eventually, sleep } from '../support/wait.ts';

// Upstream detection (GET /api/channel/test_upstream/:id): which groups and kinds of client reached a
// channel through the relay, observed from real traffic written by the usage recorder.

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let member: DashboardClient;
let upstream: MockOpenAI;
/** Keys of two tokens of root's: one in root's own group (default), one in vip. */
let defaultKey: string;
let vipKey: string;
let counter = 0;

const db = () => gateway.store.db;
const seconds = () => Math.floor(Date.now() / 1000);

/** A channel of its own model in default and vip, ready in the routing index; answers its id and model. */
async function channel(): Promise<{ id: number; model: string }> {
  const model = `upstream-model-${++counter}`;
  await gateway.options.set('ModelRatio', JSON.stringify({ ...gateway.options.getJson('ModelRatio'), [model]: 1 }));
  const created = await root.post('/api/channel/', {
    name: `upstream-${counter}`,
    type: 1,
    key: 'sk-upstream',
    base_url: upstream.url,
    models: model,
    group: 'default,vip',
  });
  expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  const id: number = created.body.data.id;
  expect(
    await eventually(
      () => chat(defaultKey, model, 'warm-up/1'),
      (status) => status === 200,
      3000,
    ),
  ).toBe(200);
  // The warm-up request is traffic too: wait for it, then start every test from an empty slate.
  await eventually(observed(id), (n) => n === 1, 5000);
  await db().deleteFrom('channel_observations').where('channel_id', '=', id).execute();
  return { id, model };
}

/** A chat request through the relay with the given User-Agent (none at all when undefined); answers the status. */
function chat(key: string, model: string, userAgent: string | undefined): Promise<number> {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] });
  const headers: Record<string, string> = {
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  };
  if (userAgent !== undefined) headers['user-agent'] = userAgent;
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** How many requests the channel's observations count so far (read straight from the table). */
function observed(channelId: number) {
  return async () => {
    const rows = await db()
      .selectFrom('channel_observations')
      .select('count')
      .where('channel_id', '=', channelId)
      .execute();
    return rows.reduce((sum, r) => sum + r.count, 0);
  };
}

/** Waits for the next whole second, so that what follows is seen strictly later than what came before. */
async function nextSecond(): Promise<void> {
  const now = seconds();
  while (seconds() === now) await sleep(20);
}

beforeAll(async () => {
  upstream = await startMockOpenAI();
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(
    gatewayEnv(database.options, testNamespace(), { GLOBAL_API_RATE_LIMIT_ENABLE: 'false' }),
  );
  root = await setupRoot(gateway.url);
  member = new DashboardClient(gateway.url);
  expect((await member.post('/api/user/register', { username: 'member', password: 'password-1' })).body.success).toBe(
    true,
  );
  expect((await member.login('member', 'password-1')).body.success).toBe(true);
  const own = await root.post('/api/token/', { name: 'own-group', unlimited_quota: true });
  expect(own.body.success, JSON.stringify(own.body)).toBe(true);
  defaultKey = own.body.data.key;
  const vip = await root.post('/api/token/', { name: 'vip-group', unlimited_quota: true, group: 'vip' });
  expect(vip.body.success, JSON.stringify(vip.body)).toBe(true);
  vipKey = vip.body.data.key;
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await upstream?.close();
});

describe('GET /api/channel/test_upstream/:id', () => {
  it('shows the groups and client types that reached the channel: counts, first and last seen, sorted', async () => {
    const { id, model } = await channel();
    const started = seconds();
    // The default group first: two curl calls, the official OpenAI SDK, an OpenAI Python UA, no UA at all.
    expect(await chat(defaultKey, model, 'curl/8.5.0')).toBe(200);
    expect(await chat(defaultKey, model, 'curl/8.5.0')).toBe(200);
    expect(await chat(defaultKey, model, 'OpenAI/Python 1.109.1')).toBe(200);
    expect(await chat(defaultKey, model, undefined)).toBe(200);
    const sdk = new OpenAI({ apiKey: defaultKey, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    await sdk.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    await sdk.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    await sdk.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    await eventually(observed(id), (n) => n === 7, 5000);
    const defaultDone = seconds();
    // Then vip, strictly later: it must come first although "vip" sorts after "default".
    await nextSecond();
    const vipStarted = seconds();
    expect(await chat(vipKey, model, 'claude-cli/1.0.83 (external, cli)')).toBe(200);
    expect(await chat(vipKey, model, 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0')).toBe(200);
    expect(await chat(vipKey, model, 'claude-cli/1.0.83 (external, cli)')).toBe(200);
    await eventually(observed(id), (n) => n === 10, 5000);
    const finished = seconds();

    const answer = await root.get(`/api/channel/test_upstream/${id}`);
    expect(answer.status).toBe(200);
    expect(answer.body.success).toBe(true);
    const groups = answer.body.data.groups;
    expect(groups.map((g: any) => g.group)).toEqual(['vip', 'default']);
    const [vip, own] = groups;
    expect(vip.client_types.map((t: any) => [t.client_type, t.count])).toEqual([
      ['claude-code', 2],
      ['browser', 1],
    ]);
    // By count, most used first; equal counts by name.
    expect(own.client_types.map((t: any) => [t.client_type, t.count])).toEqual([
      ['openai-node', 3],
      ['curl', 2],
      ['openai-python', 1],
      ['unknown', 1],
    ]);
    for (const type of own.client_types) {
      expect(Object.keys(type).sort()).toEqual(['client_type', 'count', 'first_seen', 'last_seen']);
      expect(type.first_seen).toBeGreaterThanOrEqual(started);
      expect(type.last_seen).toBeGreaterThanOrEqual(type.first_seen);
      expect(type.last_seen).toBeLessThanOrEqual(defaultDone);
    }
    for (const type of vip.client_types) {
      expect(type.first_seen).toBeGreaterThanOrEqual(vipStarted);
      expect(type.last_seen).toBeLessThanOrEqual(finished);
    }
    // A group spans its client types.
    for (const group of groups) {
      expect(Object.keys(group).sort()).toEqual(['client_types', 'first_seen', 'group', 'last_seen']);
      expect(group.first_seen).toBe(Math.min(...group.client_types.map((t: any) => t.first_seen)));
      expect(group.last_seen).toBe(Math.max(...group.client_types.map((t: any) => t.last_seen)));
    }
    expect(vip.last_seen).toBeGreaterThan(own.last_seen);

    // More traffic adds to the counts and moves last_seen; first_seen stays.
    await nextSecond();
    expect(await chat(defaultKey, model, 'curl/8.6.0')).toBe(200);
    await eventually(observed(id), (n) => n === 11, 5000);
    const again = (await root.get(`/api/channel/test_upstream/${id}`)).body.data.groups;
    expect(again.map((g: any) => g.group)).toEqual(['default', 'vip']);
    const curl = again[0].client_types.find((t: any) => t.client_type === 'curl');
    const curlBefore = own.client_types.find((t: any) => t.client_type === 'curl');
    expect(curl).toMatchObject({ count: 3, first_seen: curlBefore.first_seen });
    expect(curl.last_seen).toBeGreaterThan(curlBefore.last_seen);
  });

  it('does not count channel tests: they are not traffic from a client', async () => {
    const { id, model } = await channel();
    expect(await chat(defaultKey, model, 'curl/8.5.0')).toBe(200);
    await eventually(observed(id), (n) => n === 1, 5000);
    const testLogs = () =>
      db()
        .selectFrom('logs')
        .select('id')
        .where('channel_id', '=', id)
        .where('token_name', '=', '模型测试')
        .execute()
        .then((rows) => rows.length);
    const tested = await root.get(`/api/channel/test/${id}`);
    expect(tested.body.success, JSON.stringify(tested.body)).toBe(true);
    // The test's own log is written in the same kind of batch: once it is there, nothing else is coming.
    expect(await eventually(testLogs, (n) => n === 1, 5000)).toBe(1);
    expect(await observed(id)()).toBe(1);
    const answer = await root.get(`/api/channel/test_upstream/${id}`);
    expect(answer.body.data.groups).toEqual([
      expect.objectContaining({ group: 'default', client_types: [expect.objectContaining({ client_type: 'curl' })] }),
    ]);
  });

  it('answers no groups for a channel nothing has reached yet', async () => {
    const { id } = await channel();
    const answer = await root.get(`/api/channel/test_upstream/${id}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: true, data: { groups: [] } });
  });

  it('answers CHANNEL_NOT_FOUND for an unknown channel', async () => {
    const answer = await root.get('/api/channel/test_upstream/987654');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: false, code: 'CHANNEL_NOT_FOUND' });
  });

  it('refuses a normal user (in the envelope) and a caller who is not signed in (401)', async () => {
    const { id } = await channel();
    const refused = await member.get(`/api/channel/test_upstream/${id}`);
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ success: false, code: 'FORBIDDEN' });
    expect((await new DashboardClient(gateway.url).get(`/api/channel/test_upstream/${id}`)).status).toBe(401);
  });

  it('deleting a channel deletes its observations, one at a time or as disabled channels', async () => {
    const one = await channel();
    const other = await channel();
    const kept = await channel();
    for (const { model } of [one, other, kept]) expect(await chat(vipKey, model, 'curl/8.5.0')).toBe(200);
    for (const { id } of [one, other, kept]) await eventually(observed(id), (n) => n === 1, 5000);

    expect((await root.delete(`/api/channel/${one.id}`)).body.success).toBe(true);
    expect(await observed(one.id)()).toBe(0);
    expect(refusalOf(await root.get(`/api/channel/test_upstream/${one.id}`))).toMatchObject({
      status: 200,
      success: false,
    });

    expect((await root.put('/api/channel/', { id: other.id, status: 2 })).body.success).toBe(true);
    const removed = await root.delete('/api/channel/disabled');
    expect(removed.body, JSON.stringify(removed.body)).toMatchObject({ success: true, data: 1 });
    expect(await observed(other.id)()).toBe(0);

    // The rest are untouched.
    expect(await observed(kept.id)()).toBe(1);
    const answer = await root.get(`/api/channel/test_upstream/${kept.id}`);
    expect(answer.body.data.groups).toEqual([
      expect.objectContaining({ group: 'vip', client_types: [expect.objectContaining({ client_type: 'curl' })] }),
    ]);
  });
});
