import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { type SmtpInbox, startSmtpInbox } from '../support/smtp.ts';
import { eventually, sleep } from '../support/wait.ts';

// Two gateways on one database and one Redis: what one decides about a channel, the other must
// learn through the bus. Recovery re-tests run every second here (CHANNEL_RECOVERY_COOLDOWN_SECONDS).
let a: Gateway;
let b: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let upstream: MockOpenAI;
let smtp: SmtpInbox;
let apiKey: string;
let counter = 0;

beforeAll(async () => {
  upstream = await startMockOpenAI();
  smtp = await startSmtpInbox();
  const database = await createTestDatabase();
  drop = database.drop;
  const namespace = testNamespace();
  const env = gatewayEnv(database.options, namespace, {
    CHANNEL_RECOVERY_COOLDOWN_SECONDS: '1',
    // The tests poll the admin API while waiting for the recovery job; the per-IP limit is not what they test.
    GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
  });
  a = await startTestGateway(env);
  b = await startTestGateway(env);
  root = await setupRoot(a.url);
  await a.options.setMany({
    ModelRatio: JSON.stringify({ 'gpt-4o-mini': 0.075 }),
    ...smtp.options,
  });
  expect(
    (await root.put('/api/user/setting', { notify_type: 'email', notification_email: 'ops@example.test' })).body
      .success,
  ).toBe(true);
  const token = await root.post('/api/token/', { name: 'health', unlimited_quota: true });
  apiKey = token.body.data.key;
});

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await drop?.();
  await upstream?.close();
  await smtp?.close();
});

beforeEach(async () => {
  upstream.behaviour = {};
  await a.options.setMany({
    AutomaticDisableChannelEnabled: 'true',
    AutomaticEnableChannelEnabled: 'false',
    AutomaticDisableStatusCodes: '401',
  });
});

/** A channel serving a model of its own, so tests never route to each other's channels. */
async function channel(fields: Record<string, unknown> = {}) {
  const model = `model-${++counter}`;
  await a.options.set('ModelRatio', JSON.stringify({ ...a.options.getJson('ModelRatio'), [model]: 1 }));
  const created = await root.post('/api/channel/', {
    name: `ch-${counter}`,
    type: 1,
    key: 'sk-good',
    base_url: upstream.url,
    models: model,
    group: 'default',
    ...fields,
  });
  expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  const id: number = created.body.data.id;
  // Both gateways must route to it before a test starts: each learns of a new channel on its own, so b
  // serving it says nothing of a (a busy CI machine once had a answer 503 right after b answered 200).
  // (A channel given models of its own does not serve `model`: nothing to wait for.)
  for (const gateway of fields.models === undefined ? [a, b] : []) {
    const status = await eventually(
      async () => (await chat(gateway, model)).status,
      (answered) => answered === 200,
      10_000,
    );
    expect(status, `${gateway === a ? 'a' : 'b'} routes ${model}`).toBe(200);
  }
  return { id, model };
}

function chat(gateway: Gateway, model: string) {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
}

const row = async (id: number) => (await root.get(`/api/channel/${id}`)).body.data;

describe('channel tests', () => {
  it('times a good test, records it on the channel, and leaves a free log', async () => {
    const { id, model } = await channel();
    const answer = await root.get(`/api/channel/test/${id}`);
    expect(answer.body).toMatchObject({ success: true, message: '' });
    expect(answer.body.time).toBeGreaterThan(0);
    expect(upstream.requests.at(-1)?.body).toMatchObject({ model, messages: [{ role: 'user', content: 'hi' }] });
    const after = await row(id);
    expect(after.response_time).toBeGreaterThanOrEqual(0);
    expect(after.test_time).toBeGreaterThan(0);
    const log = await eventually(
      () =>
        a.store.db
          .selectFrom('logs')
          .selectAll()
          .where('channel_id', '=', id)
          .where('token_name', '=', '模型测试')
          .executeTakeFirst(),
      (found) => found !== undefined,
      3000,
    );
    expect(log).toMatchObject({ quota: 0, type: 2, user_id: 1, model_name: model });
  });

  it('tests another model, endpoint and stream when asked, and refuses unknown endpoints', async () => {
    const { id } = await channel({ models: 'text-embedding-3-small,gpt-4o-mini' });
    const embedding = await root.get(`/api/channel/test/${id}?model=text-embedding-3-small`);
    expect(embedding.body.success).toBe(true);
    expect(upstream.requests.at(-1)?.path).toBe('/v1/embeddings');
    const streamed = await root.get(`/api/channel/test/${id}?model=gpt-4o-mini&stream=true`);
    expect(streamed.body.success).toBe(true);
    expect(upstream.requests.at(-1)?.body).toMatchObject({ stream: true });
    const unknown = await root.get(`/api/channel/test/${id}?endpoint_type=fax`);
    expect(unknown.status).toBe(200);
    expect(unknown.body.code).toBe('CHANNEL_TEST_ENDPOINT_INVALID');
  });

  it("sends the channel's param and header overrides, prepared as the relay prepares a client's request", async () => {
    const { id, model } = await channel({
      param_override: JSON.stringify({
        temperature: 0.25,
        operations: [
          {
            mode: 'set',
            path: 'metadata.path',
            value: 'chat',
            conditions: [{ path: 'request_path', mode: 'full', value: '/v1/chat/completions' }],
          },
          {
            mode: 'set',
            path: 'metadata.test',
            value: 'yes',
            conditions: [{ path: 'is_channel_test', mode: 'full', value: true }],
          },
          { mode: 'set_header', path: 'X-From-Param', value: 'param' },
        ],
      }),
      header_override: JSON.stringify({ 'X-Tenant': 'acme', 'X-Key': 'k-{api_key}' }),
    });
    // The helper's relayed request, then the test's: the same overrides reach the upstream.
    const relayed = upstream.requests.at(-1);
    const answer = await root.get(`/api/channel/test/${id}`);
    expect(answer.body).toMatchObject({ success: true });
    const tested = upstream.requests.at(-1);
    expect(tested).not.toBe(relayed);
    for (const sent of [relayed, tested]) {
      expect(sent?.body).toMatchObject({ model, temperature: 0.25, metadata: { path: 'chat' } });
      expect(sent?.headers).toMatchObject({ 'x-tenant': 'acme', 'x-key': 'k-sk-good', 'x-from-param': 'param' });
    }
    // Conditions can tell a test from a client's request.
    expect(tested?.body.metadata).toEqual({ path: 'chat', test: 'yes' });
    expect(relayed?.body.metadata).toEqual({ path: 'chat' });
  });

  it("reads a failed test's status through the channel's status_code_mapping, as the relay does", async () => {
    // 429 is not an auto-disable status here; mapped to 401 it is, so the channel is disabled only
    // if the test applied the mapping.
    const { id } = await channel({ status_code_mapping: JSON.stringify({ '429': '401' }) });
    upstream.behaviour = { failWith: { status: 429, message: 'slow down', times: 1 } };
    const answer = await root.get(`/api/channel/test/${id}`);
    expect(answer.body).toMatchObject({ success: false, message: 'slow down' });
    expect((await row(id)).status).toBe(3);
  });

  it('fails a test whose param_override cannot be applied, as the relay fails the request', async () => {
    await a.options.set('AutomaticDisableChannelEnabled', 'false');
    const { id, model } = await channel();
    const broken = JSON.stringify({ operations: [{ mode: 'explode', path: 'messages' }] });
    expect((await root.put('/api/channel/', { id, param_override: broken })).body.success).toBe(true);
    await expect.poll(async () => (await chat(b, model)).status).toBe(500);
    const answer = await root.get(`/api/channel/test/${id}`);
    expect(answer.body).toMatchObject({ success: false, error_code: 'channel:param_override_invalid' });
  });

  it('reports a failing upstream without disabling when auto-disable is off', async () => {
    await a.options.set('AutomaticDisableChannelEnabled', 'false');
    const { id } = await channel();
    upstream.behaviour = { failWith: { status: 401, message: 'Incorrect API key provided', times: 1 } };
    const answer = await root.get(`/api/channel/test/${id}`);
    expect(answer.body).toMatchObject({ success: false, message: 'Incorrect API key provided' });
    expect((await row(id)).status).toBe(1);
  });

  it('refuses channel types that are task APIs, and normal users', async () => {
    // A Midjourney (2) channel takes tasks on /mj, not chat: it has no channel test, and a chat request
    // for its model is refused as a format it cannot serve, without reaching its upstream.
    const { id, model } = await channel();
    expect((await root.put('/api/channel/', { id, type: 2, tag: 'tasks' })).body.success).toBe(true);
    await expect
      .poll(async () => (await root.get(`/api/channel/test/${id}`)).body.code)
      .toBe('CHANNEL_TEST_UNSUPPORTED');
    const answer = await root.get(`/api/channel/test/${id}`);
    expect(answer.status).toBe(200);
    expect(answer.body.message).toContain('type 2 (Midjourney)');
    await expect.poll(async () => (await chat(b, model)).status).toBe(400);
    const sent = upstream.requests.length;
    const refused = await chat(b, model);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('format_unsupported');
    expect(upstream.requests.length).toBe(sent);
    const stranger = new DashboardClient(a.url);
    expect((await stranger.get(`/api/channel/test/${id}`)).status).toBe(401);
  });

  it('tests every channel not disabled by hand', async () => {
    const tested = await channel();
    const manual = await channel();
    expect((await root.put('/api/channel/', { id: manual.id, status: 2 })).body.success).toBe(true);
    const started = await root.get('/api/channel/test');
    expect(started.body.success).toBe(true);
    const after = await eventually(
      () => row(tested.id),
      (r) => r.test_time > 0,
      5000,
    );
    expect(after.test_time).toBeGreaterThan(0);
    await sleep(200);
    expect((await row(manual.id)).test_time).toBe(0);
  });
});

describe('auto-disable', () => {
  it('disables a channel on a listed status, on every pod within a second, and tells root', async () => {
    const { id, model } = await channel();
    upstream.behaviour = { failWith: { status: 401, message: 'Incorrect API key provided', times: 100 } };
    expect((await chat(a, model)).status).toBe(401);
    const disabled = await eventually(
      () => row(id),
      (r) => r.status === 3,
      2000,
    );
    expect(JSON.parse(disabled.other_info)).toMatchObject({ status_reason: expect.stringContaining('401') });
    // Pod B never saw the failure: it learns through the bus.
    const started = Date.now();
    const onB = await eventually(
      async () => (await chat(b, model)).status,
      (status) => status !== 200 && status !== 401,
      1000,
    );
    expect(onB).toBe(503);
    expect(Date.now() - started).toBeLessThan(1000);
    await eventually(
      async () => smtp.inbox.filter((m) => m.to.includes('ops@example.test') && m.subject.includes(`#${id}`)).length,
      (n) => n === 1,
      3000,
    );
  });

  it('disables on a keyword in the message, but never a channel with auto_ban off', async () => {
    const keyword = await channel();
    upstream.behaviour = { failWith: { status: 429, message: 'You exceeded your current quota, sorry', times: 1 } };
    expect((await chat(a, keyword.model)).status).toBe(429);
    await eventually(
      async () => (await row(keyword.id)).status,
      (status) => status === 3,
      2000,
    );

    const exempt = await channel({ auto_ban: 0 });
    upstream.behaviour = { failWith: { status: 401, message: 'Incorrect API key provided', times: 1 } };
    expect((await chat(a, exempt.model)).status).toBe(401);
    await sleep(300);
    expect((await row(exempt.id)).status).toBe(1);
  });

  it('disables only the failing key of a multi-key channel, then the channel when none is left', async () => {
    const { id, model } = await channel({ key: 'sk-first\nsk-second' });
    upstream.behaviour = { refuseKeys: ['sk-first'] };
    // Random key choice: ask until the bad key has been tried once.
    await eventually(
      async () => {
        await chat(a, model);
        return (await row(id)).channel_info?.multi_key_status_list ?? {};
      },
      (list) => list['0'] === 3,
      3000,
    );
    expect((await row(id)).status).toBe(1);
    // The remaining key serves every request.
    for (let i = 0; i < 5; i++) expect((await chat(b, model)).status).toBe(200);
    upstream.behaviour = { refuseKeys: ['sk-first', 'sk-second'] };
    expect((await chat(a, model)).status).toBe(401);
    await eventually(
      async () => (await row(id)).status,
      (status) => status === 3,
      2000,
    );
  });
});

describe('recovery', () => {
  it('re-tests a disabled channel after the cooldown and enables it once the upstream is well', async () => {
    await a.options.set('AutomaticEnableChannelEnabled', 'true');
    const { id, model } = await channel();
    upstream.behaviour = { failWith: { status: 401, message: 'Incorrect API key provided', times: 1_000_000 } };
    expect((await chat(a, model)).status).toBe(401);
    await eventually(
      async () => (await row(id)).status,
      (status) => status === 3,
      2000,
    );
    // Still failing: the re-tests keep it disabled.
    await sleep(2500);
    expect((await row(id)).status).toBe(3);
    upstream.behaviour = {};
    const status = await eventually(
      async () => (await row(id)).status,
      (s) => s === 1,
      10_000,
    );
    expect(status).toBe(1);
    expect(
      await eventually(
        async () => (await chat(b, model)).status,
        (s) => s === 200,
        1000,
      ),
    ).toBe(200);
  });

  it('leaves a disabled channel alone while automatic re-enabling is off', async () => {
    // A key of its own: re-tests of other tests' channels cannot use up the failure.
    const { id, model } = await channel({ key: 'sk-revoked' });
    upstream.behaviour = { refuseKeys: ['sk-revoked'] };
    expect((await chat(a, model)).status).toBe(401);
    await eventually(
      async () => (await row(id)).status,
      (status) => status === 3,
      2000,
    );
    upstream.behaviour = {};
    await sleep(2500);
    expect((await row(id)).status).toBe(3);
  });
});
