import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { usageSettled } from '../support/metrics.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { eventually } from '../support/wait.ts';

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let upstream: MockOpenAI;
let client: OpenAI;
let tokenId: number;

beforeAll(async () => {
  upstream = await startMockOpenAI();
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  const channel = await root.post('/api/channel/', {
    name: 'mock',
    type: 1,
    key: 'sk-upstream-secret',
    base_url: upstream.url,
    models:
      'gpt-4o,gpt-4o-mini,text-embedding-3-small,dall-e-3,tts-1,whisper-1,text-moderation-stable,gpt-3.5-turbo-instruct',
    group: 'default',
  });
  expect(channel.body.success).toBe(true);
  await gateway.options.setMany({
    ModelRatio: JSON.stringify({
      'gpt-4o': 1.25,
      'gpt-4o-mini': 0.075,
      'text-embedding-3-small': 0.01,
      'tts-1': 7.5,
      'whisper-1': 15,
      'text-moderation-stable': 0.1,
      'gpt-3.5-turbo-instruct': 0.75,
    }),
    CompletionRatio: JSON.stringify({ 'gpt-4o': 4 }),
    ModelPrice: JSON.stringify({ 'dall-e-3': 0.04 }),
  });
  const token = await root.post('/api/token/', { name: 'sdk', unlimited_quota: true });
  tokenId = token.body.data.id;
  client = new OpenAI({ apiKey: token.body.data.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  // The routing index learns of the new channel over the bus.
  expect(
    await eventually(
      async () => (await client.models.list()).data.length,
      (n) => n > 0,
      2000,
    ),
  ).toBe(8);
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await upstream?.close();
});

/** Quota charged to the user so far (wallet spent), after the usage queue is written. */
async function usedQuota(): Promise<number> {
  await usageSettled(gateway);
  const row = await gateway.store.db
    .selectFrom('users')
    .select('used_quota')
    .where('username', '=', 'root')
    .executeTakeFirstOrThrow();
  return row.used_quota;
}

describe('the official openai client through the gateway', () => {
  it('chats, and is billed by the formula to the unit', async () => {
    upstream.behaviour = { usage: { prompt_tokens: 100, completion_tokens: 50 }, reply: 'Paris is the capital.' };
    const before = await usedQuota();
    const answer = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Capital of France?' }],
    });
    expect(answer.choices[0]?.message.content).toBe('Paris is the capital.');
    const sent = upstream.requests.at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-secret');
    expect(sent.body.model).toBe('gpt-4o');
    // (prompt + completion × completion ratio) × model ratio × group ratio
    expect((await usedQuota()) - before).toBe(Math.round((100 + 50 * 4) * 1.25 * 1));
  });

  it('streams chunk by chunk with usage, and bills the reported usage', async () => {
    upstream.behaviour = { usage: { prompt_tokens: 40, completion_tokens: 12 }, reply: 'Streaming works fine today.' };
    const before = await usedQuota();
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say something' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Streaming works fine today.');
    expect(usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 12 });
    expect(upstream.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });
    expect((await usedQuota()) - before).toBe(Math.round((40 + 12 * 1) * 0.075));
  });

  it('asks the upstream for usage even when the client did not, and still bills it', async () => {
    upstream.behaviour = { usage: { prompt_tokens: 400, completion_tokens: 100 } };
    const before = await usedQuota();
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(upstream.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });
    expect((await usedQuota()) - before).toBe(Math.round((400 + 100) * 0.075));
  });

  it('sends and bills an estimated usage chunk when the upstream streams none', async () => {
    upstream.behaviour = { omitUsage: true, reply: 'No usage from upstream here.' };
    const before = await usedQuota();
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
    const charged = (await usedQuota()) - before;
    expect(charged).toBe(Math.round((usage!.prompt_tokens + usage!.completion_tokens) * 0.075) || 1);
  });

  it('relays tool calls', async () => {
    upstream.behaviour = { usage: { prompt_tokens: 10, completion_tokens: 10 } };
    const answer = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        },
      ],
    });
    const call = answer.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' ? call.function : undefined).toEqual({
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
    });
  });

  it('serves completions, responses, embeddings, images, speech, transcription and moderation', async () => {
    upstream.behaviour = {};
    const completion = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi' });
    expect(completion.choices[0]?.text).toBe('Hello from the mock.');
    const response = await client.responses.create({ model: 'gpt-4o', input: 'Say hi' });
    expect(response.output_text).toBe('Hello from the mock.');
    const embedding = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'] });
    expect(embedding.data).toHaveLength(2);
    const image = await client.images.generate({ model: 'dall-e-3', prompt: 'a cat' });
    expect(image.data?.[0]?.url).toBe('https://images.example/0.png');
    const speech = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello' });
    expect(Buffer.from(await speech.arrayBuffer()).toString()).toBe('ID3-mock-audio');
    const transcription = await client.audio.transcriptions.create({
      model: 'whisper-1',
      file: await toFile(Buffer.from('RIFF-fake-wav'), 'a.wav', { type: 'audio/wav' }),
    });
    expect(transcription.text).toBe('Hello from the mock.');
    expect(upstream.requests.at(-1)!.headers['content-type']).toMatch(/^multipart\/form-data/);
    const moderation = await client.moderations.create({ model: 'text-moderation-stable', input: 'hello' });
    expect(moderation.results[0]?.flagged).toBe(false);
  });

  it('writes consume logs with the token, channel and usage', async () => {
    const logs = await eventually(
      () =>
        gateway.store.db.selectFrom('logs').selectAll().where('type', '=', 2).where('token_id', '=', tokenId).execute(),
      (rows) => rows.length >= 10,
      3000,
    );
    const chat = logs.find((l) => l.model_name === 'gpt-4o' && l.prompt_tokens === 100)!;
    expect(chat).toMatchObject({
      token_name: 'sdk',
      completion_tokens: 50,
      quota: 375,
      channel_name: 'mock',
      username: 'root',
    });
    expect(JSON.parse(chat.other)).toMatchObject({ model_ratio: 1.25, completion_ratio: 4, group_ratio: 1 });
  });

  it('serves the playground to a signed-in user, charging the wallet only', async () => {
    upstream.behaviour = { usage: { prompt_tokens: 20, completion_tokens: 8 }, reply: 'Playground answer.' };
    const before = await usedQuota();
    const response = await fetch(`${gateway.url}/pg/chat/completions`, {
      method: 'POST',
      headers: { cookie: root.cookie, 'new-api-user': String(root.userId), 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-4o-mini',
        group: 'default',
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    const pieces = text
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice(6)).choices?.[0]?.delta?.content ?? '')
      .join('');
    expect(pieces).toBe('Playground answer.');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(upstream.requests.at(-1)!.body.group).toBeUndefined();
    expect((await usedQuota()) - before).toBe(Math.round((20 + 8) * 0.075));
    const log = await gateway.store.db
      .selectFrom('logs')
      .selectAll()
      .where('token_name', '=', 'playground-default')
      .executeTakeFirstOrThrow();
    expect(log).toMatchObject({ token_id: 0, prompt_tokens: 20, completion_tokens: 8 });
    const refused = await fetch(`${gateway.url}/pg/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [] }),
    });
    expect(refused.status).toBe(401);
  });

  it('exports relay metrics without per-request labels', async () => {
    const metrics = await (await fetch(`${gateway.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/tollgate_relay_requests_total\{[^}]*model="gpt-4o"[^}]*status="2xx"[^}]*\} \d+/);
    expect(metrics).toMatch(
      /gen_ai_client_token_usage_total\{gen_ai_request_model="gpt-4o",gen_ai_token_type="input"[^}]*\} \d+/,
    );
    expect(metrics).toContain('gen_ai_server_time_to_first_token_seconds_bucket');
    expect(metrics).toMatch(/tollgate_ledger_leased_quota\{[^}]*\} \d+/);
    expect(metrics).toMatch(/tollgate_usage_queued_logs\{[^}]*\} \d+/);
    expect(metrics).not.toMatch(/[{,](user|username|user_id|token|token_id|request_id)=/);
  });

  it('answers the legacy billing endpoints from the token', async () => {
    const headers = { authorization: `Bearer ${client.apiKey}` };
    const subscription = (await (
      await fetch(`${gateway.url}/v1/dashboard/billing/subscription`, { headers })
    ).json()) as Record<string, unknown>;
    expect(subscription).toMatchObject({ object: 'billing_subscription', hard_limit_usd: 100_000_000 });
    const usage = (await (await fetch(`${gateway.url}/dashboard/billing/usage`, { headers })).json()) as {
      total_usage: number;
    };
    const token = await gateway.store.db
      .selectFrom('tokens')
      .select('used_quota')
      .where('id', '=', tokenId)
      .executeTakeFirstOrThrow();
    expect(token.used_quota).toBeGreaterThan(0);
    expect(usage.total_usage).toBeCloseTo((token.used_quota / 500_000) * 100, 6);
  });

  it('answers errors in OpenAI shape: bad keys, unknown models, unimplemented routes', async () => {
    const stranger = new OpenAI({ apiKey: 'sk-not-a-real-key', baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    await expect(stranger.chat.completions.create({ model: 'gpt-4o', messages: [] })).rejects.toMatchObject({
      status: 401,
    });
    await expect(
      client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({
      status: expect.any(Number),
    });
    const files = await fetch(`${gateway.url}/v1/files`, { headers: { authorization: `Bearer ${client.apiKey}` } });
    expect(files.status).toBe(501);
    expect(((await files.json()) as { error: { code: string } }).error.code).toBe('api_not_implemented');
  });
});
