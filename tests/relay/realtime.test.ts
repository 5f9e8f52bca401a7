import { connect } from 'node:net';
import OpenAI, { AzureOpenAI } from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { openStore } from '../../gateway/src/store/index.ts';
import { DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { parseSamples, scrapeMetrics } from '../support/metrics.ts';
import { type MockRealtime, type RealtimeUsage, realtimeUsage, startMockRealtime } from '../support/mock-realtime.ts';
import { eventually, waitFor } from '../support/wait.ts';

// The official client's Realtime support and a plain WebSocket client, through the gateway to a mock
// Realtime service on an OpenAI channel and an Azure one. Every bill is worked out by the formula of
// reference §5.4 (audio path) and compared, to the unit, with the consume log and the wallet.
const GROUP = 0.8;
const RATIO = { model: 2.5, completion: 4, audio: 8, audioCompletion: 2, cache: 0.5 };
const UPSTREAM_KEY = 'sk-realtime-upstream';
const AZURE_KEY = 'azure-realtime-key';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let upstream: MockRealtime;
let rootKey: string;
let wsBase: string;
let databaseUrl: string | undefined;

/** The quota of one response: (textIn + cached × cache + audioIn × audio + textOut × completion + audioOut × audio × audioCompletion) × model × group. */
function quotaOf(usage: RealtimeUsage): number {
  const input = usage.input_token_details;
  const cached = input.cached_tokens;
  const cachedAudio = input.cached_tokens_details?.audio_tokens ?? 0;
  const audioIn = input.audio_tokens - cachedAudio;
  const textIn = usage.input_tokens - cached - audioIn;
  const out = usage.output_token_details;
  const weighted =
    textIn +
    cached * RATIO.cache +
    audioIn * RATIO.audio +
    out.text_tokens * RATIO.completion +
    out.audio_tokens * RATIO.audio * RATIO.audioCompletion;
  return Math.round(weighted * RATIO.model * GROUP);
}

beforeAll(async () => {
  upstream = await startMockRealtime([UPSTREAM_KEY, AZURE_KEY]);
  const database = await createTestDatabase();
  drop = database.drop;
  databaseUrl = database.url;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  wsBase = gateway.url.replace(/^http/, 'ws');
  root = await setupRoot(gateway.url);
  const channels = [
    { name: 'openai-rt', type: 1, key: UPSTREAM_KEY, base_url: upstream.url, models: 'gpt-realtime' },
    {
      name: 'azure-rt',
      type: 3,
      key: AZURE_KEY,
      base_url: upstream.url,
      other: '2025-04-01-preview',
      models: 'gpt-4o-realtime-preview',
    },
    {
      name: 'azure-v1-rt',
      type: 3,
      key: AZURE_KEY,
      base_url: upstream.url,
      other: 'v1',
      models: 'gpt-realtime-mini',
      header_override: JSON.stringify({ 'X-Route': 'tollgate-{api_key}' }),
    },
    { name: 'broken-rt', type: 1, key: 'sk-wrong', base_url: upstream.url, models: 'gpt-realtime-broken' },
    { name: 'claude-only', type: 14, key: 'sk-ant', base_url: upstream.url, models: 'claude-realtime' },
  ];
  for (const channel of channels) {
    expect((await root.post('/api/channel/', { ...channel, group: 'default' })).body.success).toBe(true);
  }
  const models = ['gpt-realtime', 'gpt-4o-realtime-preview', 'gpt-realtime-mini', 'gpt-realtime-broken'];
  const each = (value: number) => JSON.stringify(Object.fromEntries(models.map((m) => [m, value])));
  await gateway.options.setMany({
    GroupRatio: JSON.stringify({ default: GROUP }),
    ModelRatio: JSON.stringify({ ...JSON.parse(each(RATIO.model)), 'claude-realtime': 1 }),
    CompletionRatio: each(RATIO.completion),
    AudioRatio: each(RATIO.audio),
    AudioCompletionRatio: each(RATIO.audioCompletion),
    CacheRatio: each(RATIO.cache),
  });
  const token = await root.post('/api/token/', { name: 'realtime', unlimited_quota: true });
  rootKey = token.body.data.key;
  const lister = new OpenAI({ apiKey: rootKey, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  await eventually(
    async () => (await lister.models.list()).data.length,
    (n) => n === 5,
    3000,
  );
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await upstream?.close();
});

/**
 * The official client, pointed at the gateway. It dials wss:// only; the test gateway serves plain
 * HTTP, so the client's socket is a TCP connection to it, as behind a TLS-terminating ingress.
 */
function officialClient(apiKey: string, model: string): OpenAIRealtimeWS {
  const port = Number(new URL(gateway.url).port);
  const client = new OpenAI({ apiKey, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  return new OpenAIRealtimeWS(
    { model, options: { createConnection: () => connect({ port, host: '127.0.0.1' }) } as never },
    client,
  );
}

/** Collects every server event of a client until its socket closes. */
function recorder(rt: OpenAIRealtimeWS) {
  const events: any[] = [];
  const errors: any[] = [];
  rt.on('event', (event) => events.push(event));
  rt.on('error', (error) => errors.push(error));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    rt.socket.on('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })),
  );
  const next = (type: string, after = 0) => waitFor(() => events.filter((e) => e.type === type).length > after, 5000);
  return { events, errors, closed, next };
}

/** The consume logs of a user, newest last. */
async function consumeLogs(username: string) {
  return gateway.store.db
    .selectFrom('logs')
    .selectAll()
    .where('type', '=', 2)
    .where('username', '=', username)
    .orderBy('id', 'asc')
    .execute();
}

async function channelIds(): Promise<Record<string, number>> {
  const rows = await gateway.store.db.selectFrom('channels').select(['id', 'name']).execute();
  return Object.fromEntries(rows.map((row) => [row.name, row.id]));
}

async function usedQuota(username: string): Promise<number> {
  const row = await gateway.store.db
    .selectFrom('users')
    .select('used_quota')
    .where('username', '=', username)
    .executeTakeFirstOrThrow();
  return row.used_quota;
}

/** The wallets given to the users of walletUser: checked against what they were charged once the gateway stops. */
const wallets = new Map<string, number>();

/** A normal user with `quota` in the wallet and an unlimited token. */
async function walletUser(name: string, quota: number): Promise<string> {
  wallets.set(name, quota);
  const user = new DashboardClient(gateway.url);
  expect((await user.post('/api/user/register', { username: name, password: 'password-1' })).body.success).toBe(true);
  await user.login(name, 'password-1');
  expect((await root.put('/api/user/', { id: user.userId, username: name, quota })).body.success).toBe(true);
  const token = await user.post('/api/token/', { name: 'rt', unlimited_quota: true });
  return token.body.data.key;
}

describe('the mock Realtime service', () => {
  it('speaks what the official client expects, and refuses a wrong key in HTTP', async () => {
    const port = Number(new URL(upstream.url).port);
    const open = (apiKey: string) =>
      new OpenAIRealtimeWS(
        { model: 'gpt-realtime', options: { createConnection: () => connect({ port, host: '127.0.0.1' }) } as never },
        new OpenAI({ apiKey, baseURL: `${upstream.url}/v1` }),
      );
    const usage = realtimeUsage({ textIn: 5, audioIn: 0, textOut: 3, audioOut: 0 });
    upstream.usages.push(usage);
    const rt = open(UPSTREAM_KEY);
    const seen = recorder(rt);
    await seen.next('session.created');
    rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [] } });
    rt.send({ type: 'response.create', response: { output_modalities: ['text'] } });
    rt.send({ type: 'no.such.event' } as never);
    await seen.next('response.done');
    await seen.next('error');
    expect(seen.events.find((e) => e.type === 'response.done').response.usage).toEqual(usage);
    expect(seen.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['conversation.item.added', 'response.created', 'response.output_text.delta']),
    );
    rt.close();
    await seen.closed;

    const refused = open('sk-wrong');
    const failed = recorder(refused);
    await failed.closed;
    expect(String(failed.errors[0]?.message ?? failed.errors[0])).toContain('401');

    // The official client's Azure session dials Azure's GA v1 endpoint, as the gateway does on API version v1.
    const connections = upstream.connections.length;
    const azure = await OpenAIRealtimeWS.azure(
      new AzureOpenAI({ apiKey: AZURE_KEY, endpoint: upstream.url, apiVersion: '2025-04-01-preview' }),
      {
        deploymentName: 'gpt-realtime-mini',
        options: { createConnection: () => connect({ port, host: '127.0.0.1' }) } as never,
      },
    );
    const onAzure = recorder(azure);
    await onAzure.next('session.created');
    azure.close();
    await onAzure.closed;
    const dialled = upstream.connections[connections]!;
    expect([dialled.url, dialled.headers['api-key'], dialled.headers.authorization]).toEqual([
      '/openai/v1/realtime?model=gpt-realtime-mini',
      AZURE_KEY,
      undefined,
    ]);
  });
});

describe('the Realtime relay', () => {
  it('relays a session of the official client and bills both responses to the unit', async () => {
    const first = realtimeUsage({ textIn: 120, cachedText: 40, audioIn: 300, textOut: 30, audioOut: 200 });
    const second = realtimeUsage({ textIn: 80, audioIn: 0, textOut: 25, audioOut: 0 });
    upstream.usages.push(first, second);
    const before = await usedQuota('root');
    const logsBefore = (await consumeLogs('root')).length;
    const connections = upstream.connections.length;

    const rt = officialClient(rootKey, 'gpt-realtime');
    const seen = recorder(rt);
    await new Promise((resolve) => rt.socket.once('open', resolve));
    expect(rt.socket.protocol).toBe('');
    await seen.next('session.created');
    rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'Be brief.' } });
    await seen.next('session.updated');
    rt.send({
      type: 'conversation.item.create',
      item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Say hello.' }] },
    });
    rt.send({ type: 'response.create' });
    await seen.next('response.done');
    rt.send({ type: 'response.create', response: { output_modalities: ['text'] } });
    await seen.next('response.done', 1);
    rt.close();
    await seen.closed;

    // Relayed as the service sent it: GA event names, audio and text deltas, the usage untouched.
    const types = seen.events.map((e) => e.type);
    expect(types).toContain('response.output_audio.delta');
    expect(types).toContain('response.output_text.delta');
    expect(seen.events.filter((e) => e.type === 'response.done').map((e) => e.response.usage)).toEqual([first, second]);
    expect(seen.errors).toEqual([]);
    const dialled = upstream.connections[connections]!;
    expect(dialled.path).toBe('/v1/realtime');
    expect(dialled.query.model).toBe('gpt-realtime');
    expect(dialled.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(dialled.headers['openai-beta']).toBeUndefined();
    expect(dialled.events.map((e) => e.type)).toEqual([
      'session.update',
      'conversation.item.create',
      'response.create',
      'response.create',
    ]);

    // One consume log for the session, with its totals; the wallet charged exactly that.
    const expected = quotaOf(first) + quotaOf(second);
    const logs = await eventually(
      () => consumeLogs('root'),
      (rows) => rows.length > logsBefore,
      5000,
    );
    expect(logs).toHaveLength(logsBefore + 1);
    const log = logs.at(-1)!;
    expect(log.quota).toBe(expected);
    expect(log.model_name).toBe('gpt-realtime');
    expect(log.prompt_tokens).toBe(first.input_tokens + second.input_tokens);
    expect(log.completion_tokens).toBe(first.output_tokens + second.output_tokens);
    expect(log.is_stream).toBe(true);
    expect(JSON.parse(log.other)).toMatchObject({
      ws: true,
      audio_input: 300,
      audio_output: 200,
      audio_ratio: RATIO.audio,
      audio_completion_ratio: RATIO.audioCompletion,
      model_ratio: RATIO.model,
      group_ratio: GROUP,
      request_path: '/v1/realtime',
    });
    expect(
      await eventually(
        () => usedQuota('root'),
        (q) => q - before === expected,
        5000,
      ),
    ).toBe(before + expected);

    const samples = parseSamples(await scrapeMetrics(gateway), 'tollgate_relay_requests_total').filter(
      (s) => s.labels.format === 'openai-realtime' && s.labels.model === 'gpt-realtime',
    );
    expect(samples.find((s) => s.labels.error_type === 'none')?.value).toBeGreaterThanOrEqual(1);
  });

  it('bills each response of a model priced by an expression, and logs the tier and the summed cost', async () => {
    const expression = 'ai > 0 ? tier("voice", p * 4 + ai * 32 + c * 16 + ao * 64) : tier("text", p * 4 + c * 16)';
    await gateway.options.setMany({
      'billing_setting.billing_mode': JSON.stringify({ 'gpt-realtime': 'tiered_expr' }),
      'billing_setting.billing_expr': JSON.stringify({ 'gpt-realtime': expression }),
    });
    try {
      upstream.usages.push(
        realtimeUsage({ textIn: 120, audioIn: 300, textOut: 30, audioOut: 200 }),
        realtimeUsage({ textIn: 80, audioIn: 0, textOut: 25, audioOut: 0 }),
      );
      const logsBefore = (await consumeLogs('root')).length;
      const rt = officialClient(rootKey, 'gpt-realtime');
      const seen = recorder(rt);
      await seen.next('session.created');
      rt.send({ type: 'response.create' });
      await seen.next('response.done');
      rt.send({ type: 'response.create' });
      await seen.next('response.done', 1);
      rt.close();
      await seen.closed;
      // USD per 1M tokens: audio in and out named, so p and c are the text parts.
      const voice = 120 * 4 + 300 * 32 + 30 * 16 + 200 * 64;
      const text = 80 * 4 + 25 * 16;
      const quota = (cost: number) => Math.round((cost / 1e6) * 500_000 * GROUP);
      const logs = await eventually(
        () => consumeLogs('root'),
        (rows) => rows.length > logsBefore,
        5000,
      );
      const log = logs.at(-1)!;
      expect(log.quota).toBe(quota(voice) + quota(text));
      const other = JSON.parse(log.other);
      expect(other).toMatchObject({ billing_mode: 'tiered_expr', matched_tier: 'text', ws: true });
      expect(other.expr_cost_usd).toBeCloseTo((voice + text) / 1e6, 12);
    } finally {
      await gateway.options.setMany({ 'billing_setting.billing_mode': '{}', 'billing_setting.billing_expr': '{}' });
    }
  });

  it('closes a session whose quota runs out with an error event, and bills what was used', async () => {
    const first = realtimeUsage({ textIn: 100, audioIn: 50, textOut: 20, audioOut: 100 });
    const second = realtimeUsage({ textIn: 150, audioIn: 0, textOut: 40, audioOut: 100 });
    // Enough for the first response and half the second: the second overdraws, the third is refused.
    const wallet = quotaOf(first) + Math.floor(quotaOf(second) / 2);
    const key = await walletUser('rt-short', wallet);
    upstream.usages.push(first, second);
    const connections = upstream.connections.length;

    const rt = officialClient(key, 'gpt-realtime');
    const seen = recorder(rt);
    await seen.next('session.created');
    rt.send({ type: 'response.create' });
    await seen.next('response.done');
    rt.send({ type: 'response.create' });
    const closed = await seen.closed;

    expect(closed.code).toBe(1008);
    const error = seen.events.find((e) => e.type === 'error');
    expect(error).toMatchObject({
      type: 'error',
      event_id: expect.any(String),
      error: { type: 'insufficient_quota', code: 'insufficient_quota', message: expect.stringContaining('request id') },
    });
    expect(seen.events.filter((e) => e.type === 'response.done')).toHaveLength(2);
    expect(seen.events.at(-1)).toBe(error);
    await eventually(
      async () => upstream.connections[connections]?.closed,
      (c) => c !== undefined,
      5000,
    );

    const expected = quotaOf(first) + quotaOf(second);
    const logs = await eventually(
      () => consumeLogs('rt-short'),
      (rows) => rows.length > 0,
      5000,
    );
    expect(logs.map((l) => l.quota)).toEqual([expected]);
    // The books balance: the user's used quota is the sum of its consume logs.
    expect(
      await eventually(
        () => usedQuota('rt-short'),
        (q) => q === expected,
        5000,
      ),
    ).toBe(expected);

    const quotaClosed = parseSamples(await scrapeMetrics(gateway), 'tollgate_relay_requests_total').find(
      (s) => s.labels.format === 'openai-realtime' && s.labels.error_type === 'quota' && s.labels.status === '1xx',
    );
    expect(quotaClosed?.value).toBe(1);

    // A new session of the drained wallet is refused before the handshake.
    const refused = await refusal(`${wsBase}/v1/realtime?model=gpt-realtime`, { authorization: `Bearer ${key}` });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error).toMatchObject({ type: 'new_api_error' });
  });

  it('bills a response still in flight when the quota ran out, though nothing holds for it', async () => {
    const outOfBand = realtimeUsage({ textIn: 90, audioIn: 10, textOut: 12, audioOut: 40 });
    const inFlight = realtimeUsage({ textIn: 30, audioIn: 0, textOut: 4, audioOut: 0 });
    const key = await walletUser('rt-owed', Math.floor(quotaOf(outOfBand) / 2));
    const connections = upstream.connections.length;
    upstream.hold = true;
    upstream.usages.push(outOfBand, inFlight);
    try {
      const rt = officialClient(key, 'gpt-realtime');
      const seen = recorder(rt);
      await seen.next('session.created');
      rt.send({ type: 'response.create', response: { output_modalities: ['text'] } });
      await seen.next('response.output_text.delta');
      // An out-of-band response finishes beside it and overdraws the wallet: the session is refused more.
      rt.send({ type: 'response.create', response: { conversation: 'none', output_modalities: ['text'] } });
      expect((await seen.closed).code).toBe(1008);
      expect(seen.events.filter((e) => e.type === 'response.done')).toHaveLength(1);
      expect(seen.events.at(-1)).toMatchObject({ type: 'error', error: { code: 'insufficient_quota' } });

      // The response still in flight was cancelled, read to its end and charged on top.
      const dialled = upstream.connections[connections]!;
      await eventually(
        async () => dialled.closed,
        (c) => c !== undefined,
        5000,
      );
      expect(dialled.events.map((e) => e.type)).toEqual(['response.create', 'response.create', 'response.cancel']);
      const expected = quotaOf(outOfBand) + quotaOf(inFlight);
      const logs = await eventually(
        () => consumeLogs('rt-owed'),
        (rows) => rows.length > 0,
        5000,
      );
      expect(logs.map((l) => l.quota)).toEqual([expected]);
      expect(
        await eventually(
          () => usedQuota('rt-owed'),
          (q) => q === expected,
          5000,
        ),
      ).toBe(expected);
    } finally {
      upstream.hold = false;
    }
  });

  it('takes the key from the browser subprotocol list and relays beta events, text and binary frames', async () => {
    const connections = upstream.connections.length;
    const socket = new WebSocket(`${wsBase}/v1/realtime?model=gpt-4o-realtime-preview`, [
      'realtime',
      `openai-insecure-api-key.sk-${rootKey}`,
      'openai-beta.realtime-v1',
    ]);
    const events: any[] = [];
    const binary: Buffer[] = [];
    socket.on('message', (data: Buffer, isBinary) =>
      isBinary ? binary.push(data) : events.push(JSON.parse(String(data))),
    );
    await new Promise((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    expect(socket.protocol).toBe('realtime');
    await eventually(
      async () => events.length,
      (n) => n > 0,
      5000,
    );
    expect(events[0].type).toBe('session.created');

    // Azure: the deployment path, the api-key header, the beta protocol the client asked for.
    const dialled = upstream.connections[connections]!;
    expect(dialled.url).toBe('/openai/realtime?api-version=2025-04-01-preview&deployment=gpt-4o-realtime-preview');
    expect(dialled.headers['api-key']).toBe(AZURE_KEY);
    expect(dialled.headers.authorization).toBeUndefined();
    expect(dialled.headers['openai-beta']).toBe('realtime=v1');

    const bytes = Buffer.from([0, 1, 2, 250, 251, 252]);
    socket.send(bytes, { binary: true });
    upstream.push(Buffer.from([9, 8, 7]), true);
    socket.send(JSON.stringify({ type: 'response.create', response: { modalities: ['text'] } }));
    await eventually(async () => events.some((e) => e.type === 'response.done') && binary.length > 0, Boolean, 5000);
    expect(events.map((e) => e.type)).toContain('response.text.delta');
    expect(dialled.binary).toEqual([bytes]);
    expect(binary).toEqual([Buffer.from([9, 8, 7])]);
    // The client's close code and reason are passed on to the upstream.
    socket.close(4001, 'done here');
    await new Promise((resolve) => socket.once('close', resolve));
    expect(
      await eventually(
        async () => dialled.closed,
        (c) => c !== undefined,
        5000,
      ),
    ).toEqual({ code: 4001, reason: 'done here' });
  });

  it('dials Azure’s GA v1 endpoint for a channel on API version v1, with its header override', async () => {
    const connections = upstream.connections.length;
    const rt = officialClient(rootKey, 'gpt-realtime-mini');
    const seen = recorder(rt);
    await seen.next('session.created');
    rt.close();
    await seen.closed;
    const dialled = upstream.connections[connections]!;
    expect(dialled.url).toBe('/openai/v1/realtime?model=gpt-realtime-mini');
    expect(dialled.headers['api-key']).toBe(AZURE_KEY);
    expect(dialled.headers.authorization).toBeUndefined();
    expect(dialled.headers['x-route']).toBe(`tollgate-${AZURE_KEY}`);
  });

  it('tests a channel of a Realtime model by its handshake, not by a chat completion', async () => {
    const ids = await channelIds();
    const connections = upstream.connections.length;
    for (const name of ['openai-rt', 'azure-v1-rt']) {
      expect((await root.get(`/api/channel/test/${ids[name]}`)).body).toMatchObject({ success: true });
    }
    const dialled = upstream.connections.slice(connections);
    expect(dialled.map((c) => c.url)).toEqual([
      '/v1/realtime?model=gpt-realtime',
      '/openai/v1/realtime?model=gpt-realtime-mini',
    ]);
    expect(dialled[1]!.headers['x-route']).toBe(`tollgate-${AZURE_KEY}`);
    // Nothing was asked of the sessions: a test generates nothing.
    expect(dialled.flatMap((c) => c.events)).toEqual([]);
  });

  it('bills a response the upstream finishes after the client left: cancels it and reads it to its end', async () => {
    const usages = [
      realtimeUsage({ textIn: 60, audioIn: 40, textOut: 9, audioOut: 30 }),
      realtimeUsage({ textIn: 75, audioIn: 0, textOut: 3, audioOut: 0 }),
    ];
    const key = await walletUser('rt-left', 1_000_000);
    upstream.hold = true;
    upstream.usages.push(...usages);
    try {
      // Once while the response is streaming, once right after asking for it (not yet created upstream).
      for (const leave of ['after its first delta', 'right after asking']) {
        const connections = upstream.connections.length;
        const rt = officialClient(key, 'gpt-realtime');
        const seen = recorder(rt);
        await seen.next('session.created');
        rt.send({ type: 'response.create', response: { output_modalities: ['text'] } });
        if (leave === 'after its first delta') await seen.next('response.output_text.delta');
        rt.close();
        await seen.closed;
        expect(seen.events.some((e) => e.type === 'response.done')).toBe(false);

        // The gateway asked the upstream to stop, read the cancelled response's usage, then closed.
        const dialled = upstream.connections[connections]!;
        await eventually(
          async () => dialled.closed,
          (c) => c?.code === 1000,
          5000,
        );
        expect(dialled.events.map((e) => e.type)).toEqual(['response.create', 'response.cancel']);
      }
      const expected = quotaOf(usages[0]!) + quotaOf(usages[1]!);
      const logs = await eventually(
        () => consumeLogs('rt-left'),
        (rows) => rows.length === 2,
        5000,
      );
      expect(logs.map((l) => l.quota)).toEqual(usages.map(quotaOf));
      expect(logs.map((l) => l.prompt_tokens)).toEqual(usages.map((u) => u.input_tokens));
      // The books balance: the user's used quota is the sum of its consume logs.
      expect(
        await eventually(
          () => usedQuota('rt-left'),
          (q) => q === expected,
          5000,
        ),
      ).toBe(expected);
    } finally {
      upstream.hold = false;
    }
  });

  it('refuses a bad key with 401 and a model without a Realtime channel in OpenAI’s shape, before upgrading', async () => {
    const url = `${wsBase}/v1/realtime?model=gpt-realtime`;
    const badKey = await refusal(url, { authorization: 'Bearer sk-not-a-key' });
    expect(badKey.status).toBe(401);
    expect(JSON.parse(badKey.body)).toMatchObject({ error: { type: 'new_api_error' } });
    const badSubprotocol = await refusal(url, {}, ['realtime', 'openai-insecure-api-key.sk-nope']);
    expect(badSubprotocol.status).toBe(401);
    const refusedKeys = parseSamples(await scrapeMetrics(gateway), 'tollgate_relay_requests_total').find(
      (s) => s.labels.format === 'openai-realtime' && s.labels.error_type === 'auth',
    );
    expect(refusedKeys?.value).toBe(2);

    const noChannel = await refusal(`${wsBase}/v1/realtime?model=no-such-model`, {
      authorization: `Bearer ${rootKey}`,
    });
    expect(noChannel.status).toBe(503);
    expect(JSON.parse(noChannel.body).error).toMatchObject({ code: 'model_not_found' });
    const wrongType = await refusal(`${wsBase}/v1/realtime?model=claude-realtime`, {
      authorization: `Bearer ${rootKey}`,
    });
    expect(wrongType.status).toBe(400);
    expect(JSON.parse(wrongType.body).error).toMatchObject({ code: 'format_unsupported' });

    // A plain GET is told to upgrade.
    const plain = await fetch(`${gateway.url}/v1/realtime?model=gpt-realtime`, {
      headers: { authorization: `Bearer ${rootKey}` },
    });
    expect(plain.status).toBe(426);
  });

  it('sends an error event and closes when the upstream refuses the connection', async () => {
    const rt = officialClient(rootKey, 'gpt-realtime-broken');
    const seen = recorder(rt);
    const closed = await seen.closed;
    expect(closed.code).toBe(1011);
    expect(seen.events).toEqual([
      expect.objectContaining({
        type: 'error',
        error: expect.objectContaining({ type: 'server_error', code: 'upstream_unreachable' }),
      }),
    ]);
    expect(seen.events[0].error.message).toContain('Incorrect API key');

    // Nothing was billed for it, and root's books balance: used quota = the sum of its consume logs.
    const booked = async () => (await consumeLogs('root')).reduce((sum, log) => sum + log.quota, 0);
    const balanced = await eventually(
      async () => [await booked(), await usedQuota('root')],
      ([logs, used]) => logs === used,
      5000,
    );
    expect(balanced[0]).toBe(balanced[1]);
    expect(balanced[0]).toBeGreaterThan(0);

    // Its channel test fails with the upstream's own error.
    const tested = await root.get(`/api/channel/test/${(await channelIds())['broken-rt']}`);
    expect(tested.body).toMatchObject({ success: false, error_code: 'invalid_api_key' });
    expect(tested.body.message).toContain('Incorrect API key');
  });

  // Last: it stops the gateway.
  it('closes open sessions when the gateway stops, and bills and logs them first', async () => {
    const usage = realtimeUsage({ textIn: 10, audioIn: 20, textOut: 5, audioOut: 10 });
    upstream.usages.push(usage);
    const ofModel = (rows: Array<{ model_name: string }>) => rows.filter((r) => r.model_name === 'gpt-realtime');
    const logsBefore = ofModel(await consumeLogs('root')).length;
    const rt = officialClient(rootKey, 'gpt-realtime');
    const seen = recorder(rt);
    await seen.next('session.created');
    rt.send({ type: 'response.create' });
    await seen.next('response.done');
    await gateway.stop();
    expect((await seen.closed).code).toBe(1001);
    // The gateway's pool is closed: the log is read through a pool of the test's own (Postgres only).
    if (!databaseUrl) return;
    const store = await openStore({ databaseUrl, poolMax: 1 });
    try {
      const logs = await store.db
        .selectFrom('logs')
        .select('quota')
        .where('type', '=', 2)
        .where('username', '=', 'root')
        .where('model_name', '=', 'gpt-realtime')
        .orderBy('id', 'asc')
        .execute();
      expect(logs).toHaveLength(logsBefore + 1);
      expect(logs.at(-1)!.quota).toBe(quotaOf(usage));

      // Every lease given back, each wallet was charged exactly what its consume logs say (owed charges included).
      const users = await store.db
        .selectFrom('users')
        .select(['username', 'quota', 'used_quota'])
        .where('username', 'in', [...wallets.keys()])
        .execute();
      const logged = await store.db
        .selectFrom('logs')
        .select(['username', (eb) => eb.fn.sum<string>('quota').as('quota')])
        .where('type', '=', 2)
        .where('username', 'in', [...wallets.keys()])
        .groupBy('username')
        .execute();
      const sums = Object.fromEntries(logged.map((row) => [row.username, Number(row.quota)]));
      expect(users.map((u) => [u.username, u.quota + u.used_quota, u.used_quota])).toEqual(
        users.map((u) => [u.username, wallets.get(u.username), sums[u.username]]),
      );
      expect(users).toHaveLength(wallets.size);
      expect(await store.db.selectFrom('quota_leases').select('id').execute()).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

/** The HTTP answer to a handshake the gateway refuses. */
function refusal(
  url: string,
  headers: Record<string, string>,
  protocols: string[] = [],
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols, { headers });
    socket.on('open', () => reject(new Error('the handshake was accepted')));
    socket.on('error', () => {});
    socket.on('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
  });
}
