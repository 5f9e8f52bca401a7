import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { scrapeMetrics } from '../support/metrics.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { eventually, sleep } from '../support/wait.ts';

// Passive health with two gateways on one database and one Redis (in-process state when the tests
// have no Redis: the two gateways then share one namespace in this process). A failing upstream
// opens a circuit on one pod that the other honours; a half-open circuit lets one request by.
let a: Gateway;
let b: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let bad: MockOpenAI;
let good: MockOpenAI;
let apiKey: string;
let userKey: string;
let counter = 0;

beforeAll(async () => {
  bad = await startMockOpenAI();
  good = await startMockOpenAI();
  const database = await createTestDatabase();
  drop = database.drop;
  const env = gatewayEnv(database.options, testNamespace(), {
    CHANNEL_RECOVERY_COOLDOWN_SECONDS: '1',
    GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
    // Error logs carry admin_info.route too.
    ERROR_LOG_ENABLED: 'true',
  });
  a = await startTestGateway(env);
  b = await startTestGateway(env);
  root = await setupRoot(a.url);
  await setOptions({
    RetryTimes: '0',
    'circuit_setting.failure_threshold': '3',
    'circuit_setting.window_seconds': '60',
    // Long enough that a circuit stays open while a test looks at it; the half-open test shortens it.
    'circuit_setting.cooldown_seconds': '60',
    'circuit_setting.max_cooldown_seconds': '600',
  });
  apiKey = (await root.post('/api/token/', { name: 'circuits', unlimited_quota: true })).body.data.key;
  // A plain user's key: the route header is for administrators.
  const user = { username: 'plainuser', password: 'plain-password-1', display_name: 'plain' };
  expect((await root.post('/api/user/', user)).body.success).toBe(true);
  const plain = new DashboardClient(a.url);
  expect((await plain.login(user.username, user.password)).body.success).toBe(true);
  const id: number = (await plain.get('/api/user/self')).body.data.id;
  expect((await root.put('/api/user/', { id, quota: 100_000_000 })).body.success).toBe(true);
  userKey = (await plain.post('/api/token/', { name: 'plain', unlimited_quota: true })).body.data.key;
});

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await drop?.();
  await bad?.close();
  await good?.close();
});

beforeEach(() => {
  bad.behaviour = {};
  good.behaviour = {};
});

/** Open circuits of a channel as a gateway's gauge reports them (its view of the shared state). */
async function openCircuits(gateway: Gateway, channel: number): Promise<number> {
  const text = await scrapeMetrics(gateway);
  // Every series also carries the node label the gateway adds.
  const line = text
    .split('\n')
    .find((l) => l.startsWith('tollgate_circuits_open{') && l.includes(`channel="${channel}"`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** Waits until both pods see the channel's circuit open (the verdict of the last failure is written after the answer). */
async function waitOpen(channel: number) {
  for (const gateway of [a, b]) {
    expect(
      await eventually(
        () => openCircuits(gateway, channel),
        (open) => open > 0,
        5000,
      ),
    ).toBe(1);
  }
}

/** Sets options on a, and waits until b has them too. */
async function setOptions(values: Record<string, string>) {
  await a.options.setMany(values);
  for (const [key, value] of Object.entries(values)) {
    await eventually(
      async () => b.options.get(key),
      (seen) => seen === value,
      5000,
    );
  }
}

/** A model of its own, served by a preferred channel on `bad` (priority 10) and a stand-by on `good`. */
async function pair() {
  const model = `circuit-model-${++counter}`;
  await setOptions({ ModelRatio: JSON.stringify({ ...a.options.getJson('ModelRatio'), [model]: 1 }) });
  const create = async (name: string, url: string, priority: number) => {
    const created = await root.post('/api/channel/', {
      name,
      type: 1,
      key: 'sk-good',
      base_url: url,
      models: model,
      group: 'default',
      priority,
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
    return created.body.data.id as number;
  };
  const preferred = await create(`preferred-${counter}`, bad.url, 10);
  const standby = await create(`standby-${counter}`, good.url, 0);
  for (const gateway of [a, b]) {
    const status = await eventually(
      async () => (await chat(gateway, model)).status,
      (answered) => answered === 200,
      10_000,
    );
    expect(status).toBe(200);
  }
  return { model, preferred, standby };
}

function chat(gateway: Gateway, model: string, headers: Record<string, string> = {}, key = apiKey) {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
}

const sentTo = (mock: MockOpenAI, model: string) => mock.requests.filter((r) => r.body?.model === model).length;

describe('circuits across pods', () => {
  it('opens on failures seen by one pod and spares the other pod the failing channel', async () => {
    const { model, preferred, standby } = await pair();
    bad.behaviour = { failWith: { status: 500, message: 'upstream broke', times: 1_000_000 } };
    // A failed request carries the header too.
    const failed = await chat(a, model, { 'x-tollgate-debug': 'route' });
    expect(failed.status).toBe(500);
    expect(failed.headers.get('x-tollgate-route')).toBe(
      `channel=${preferred}; group=default; priority=10; pick=only; retry=0`,
    );
    for (let i = 0; i < 2; i++) expect((await chat(a, model)).status).toBe(500);
    // Pod b never saw a failure: it learns of the open circuit and goes to the stand-by.
    await waitOpen(preferred);
    const before = sentTo(bad, model);
    const onB = await chat(b, model, { 'x-tollgate-debug': 'route' });
    expect(onB.status).toBe(200);
    const header = onB.headers.get('x-tollgate-route') ?? '';
    expect(header).toContain(`channel=${standby}`);
    expect(header).toContain(`circuits_skipped=${preferred}`);
    expect(sentTo(bad, model)).toBe(before);
    // The consume log's admin detail says the same.
    const log = await eventually(
      () =>
        a.store.db
          .selectFrom('logs')
          .select(['other', 'channel_id'])
          .where('model_name', '=', model)
          .where('type', '=', 2)
          .where('channel_id', '=', standby)
          .orderBy('id', 'desc')
          .executeTakeFirst(),
      (row) => row !== undefined && JSON.parse(row.other).admin_info?.route?.circuits_skipped?.length > 0,
      5000,
    );
    expect(JSON.parse(log?.other ?? '{}').admin_info.route).toMatchObject({
      channel: standby,
      group: 'default',
      priority: 0,
      how: 'only',
      retry: 0,
      circuits_skipped: [preferred],
    });
    // The error logs of the failures that opened it say how their channel was chosen.
    const errorLog = await eventually(
      () =>
        a.store.db
          .selectFrom('logs')
          .select(['other'])
          .where('model_name', '=', model)
          .where('type', '=', 5)
          .where('channel_id', '=', preferred)
          .executeTakeFirst(),
      (row) => row !== undefined,
      5000,
    );
    expect(JSON.parse(errorLog?.other ?? '{}').admin_info.route).toMatchObject({
      channel: preferred,
      priority: 10,
      how: 'only',
      retry: 0,
      circuits_skipped: [],
    });
    // No header unless an administrator asks for it; a plain user's request never gets it.
    expect((await chat(b, model)).headers.get('x-tollgate-route')).toBeNull();
    const plain = await chat(b, model, { 'x-tollgate-debug': 'route' }, userKey);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('x-tollgate-route')).toBeNull();
    await setOptions({ 'circuit_setting.route_header': 'true' });
    expect((await chat(b, model, {}, userKey)).headers.get('x-tollgate-route')).toContain(`channel=${standby}`);
    await setOptions({ 'circuit_setting.route_header': 'false' });
    bad.behaviour = {};
  });

  it('lets exactly one request probe a half-open circuit across pods, and closes it on success', async () => {
    await setOptions({ 'circuit_setting.cooldown_seconds': '2' });
    const { model, preferred } = await pair();
    bad.behaviour = { failWith: { status: 503, message: 'overloaded', times: 1_000_000 } };
    for (let i = 0; i < 3; i++) expect((await chat(b, model)).status).toBe(503);
    await waitOpen(preferred);
    // Cooldown (2 s) over: twelve requests at once on both pods; one of them is the probe.
    await sleep(2200);
    let before = sentTo(bad, model);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => chat(i % 2 ? a : b, model)));
    expect(sentTo(bad, model) - before).toBe(1);
    expect(answers.filter((answer) => answer.status === 503)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(11);
    // The failed probe reopened it for twice as long (4 s): at 2.2 s nothing reaches the bad upstream yet.
    await sleep(2200);
    before = sentTo(bad, model);
    for (let i = 0; i < 4; i++) expect((await chat(a, model)).status).toBe(200);
    expect(sentTo(bad, model)).toBe(before);
    // The upstream is well again: the next probe closes the circuit and both pods use the channel again.
    bad.behaviour = {};
    const probe = await eventually(
      async () => {
        await chat(a, model);
        return sentTo(bad, model) - before;
      },
      (sent) => sent > 0,
      5000,
    );
    expect(probe).toBe(1);
    await eventually(
      async () => (await chat(b, model, { 'x-tollgate-debug': 'route' })).headers.get('x-tollgate-route') ?? '',
      (route) => route.includes(`channel=${preferred}`),
      2000,
    );
    before = sentTo(bad, model);
    for (let i = 0; i < 4; i++) expect((await chat(i % 2 ? a : b, model)).status).toBe(200);
    expect(sentTo(bad, model) - before).toBe(4);
    const metrics = (await scrapeMetrics(a)) + (await scrapeMetrics(b));
    for (const [from, to] of [
      ['closed', 'open'],
      ['open', 'half_open'],
      ['half_open', 'open'],
      ['half_open', 'closed'],
    ])
      expect(metrics).toMatch(
        new RegExp(`tollgate_circuit_transitions_total\\{channel="${preferred}",from="${from}",to="${to}"`),
      );
    await setOptions({ 'circuit_setting.cooldown_seconds': '60' });
  });

  it('falls back to the least recently opened channel when every candidate is open', async () => {
    const { model, preferred, standby } = await pair();
    bad.behaviour = { failWith: { status: 500, times: 1_000_000 } };
    for (let i = 0; i < 3; i++) expect((await chat(a, model)).status).toBe(500);
    await waitOpen(preferred);
    good.behaviour = { failWith: { status: 500, times: 3 } };
    for (let i = 0; i < 3; i++) expect((await chat(a, model)).status).toBe(500);
    await waitOpen(standby);
    bad.behaviour = {};
    // Both open: rather than fail, the one that opened first (the preferred) takes the request as a probe.
    const answer = await chat(a, model, { 'x-tollgate-debug': 'route' });
    expect(answer.status).toBe(200);
    const route = answer.headers.get('x-tollgate-route') ?? '';
    expect(route).toContain(`channel=${preferred}`);
    expect(route).toContain('pick=circuit_fallback');
    expect(route).toContain('probe=1');
    // Its success closed the preferred's circuit: the next request goes there the normal way.
    await eventually(
      async () => (await chat(b, model, { 'x-tollgate-debug': 'route' })).headers.get('x-tollgate-route') ?? '',
      (next) => next.includes(`channel=${preferred}`) && next.includes('pick=only'),
      3000,
    );
    bad.behaviour = {};
    good.behaviour = {};
  });

  it('does not open circuits while circuit_setting.enabled is off', async () => {
    await setOptions({ 'circuit_setting.enabled': 'false' });
    const { model } = await pair();
    bad.behaviour = { failWith: { status: 500, times: 1_000_000 } };
    const before = sentTo(bad, model);
    for (let i = 0; i < 6; i++) expect((await chat(i % 2 ? a : b, model)).status).toBe(500);
    expect(sentTo(bad, model) - before).toBe(6);
    bad.behaviour = {};
    await setOptions({ 'circuit_setting.enabled': 'true' });
  });
});

describe('recovery of a multi-key channel', () => {
  it('re-enables the keys one by one once each passes its own test', async () => {
    await setOptions({
      AutomaticDisableChannelEnabled: 'true',
      AutomaticEnableChannelEnabled: 'true',
      AutomaticDisableStatusCodes: '401',
    });
    const model = `multi-key-${++counter}`;
    await setOptions({ ModelRatio: JSON.stringify({ ...a.options.getJson('ModelRatio'), [model]: 1 }) });
    const created = await root.post('/api/channel/', {
      name: 'multi',
      type: 1,
      key: 'sk-multi-1\nsk-multi-2',
      base_url: good.url,
      models: model,
      group: 'default',
    });
    expect(created.body.success).toBe(true);
    const id: number = created.body.data.id;
    const row = async () => (await root.get(`/api/channel/${id}`)).body.data;
    good.behaviour = { refuseKeys: ['sk-multi-1', 'sk-multi-2'] };
    await eventually(
      async () => {
        await chat(a, model);
        return (await row()).status;
      },
      (status) => status === 3,
      10_000,
    );
    expect((await row()).channel_info.multi_key_status_list).toEqual({ '0': 3, '1': 3 });
    // The second key works again: it alone comes back, and the channel with it.
    good.behaviour = { refuseKeys: ['sk-multi-1'] };
    const back = await eventually(row, (r) => r.status === 1, 15_000);
    expect(back.channel_info.multi_key_status_list).toEqual({ '0': 3 });
    await eventually(
      async () => (await chat(b, model)).status,
      (status) => status === 200,
      3000,
    );
    // Then the first key too, on its own re-test.
    good.behaviour = {};
    const whole = await eventually(
      row,
      (r) => Object.keys(r.channel_info.multi_key_status_list ?? {}).length === 0,
      15_000,
    );
    expect(whole.status).toBe(1);
    await setOptions({ AutomaticDisableChannelEnabled: 'false', AutomaticEnableChannelEnabled: 'false' });
  });
});
