import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts';
import { type MockGemini, startMockGemini } from '../support/mock-gemini.ts';
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts';
import { billed } from '../support/usage.ts';
import { eventually } from '../support/wait.ts';

// Pass-through mode (global.pass_through_request_enabled, channel setting pass_through_body_enabled):
// the upstream gets the client's bytes exactly when no conversion is needed; the channel's model
// mapping, param override and field filtering are skipped, its header override is not.

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let openaiUp: MockOpenAI;
let anthropicUp: MockAnthropic;
let geminiUp: MockGemini;
let key: string;

/** Unknown fields, an unusual key order and whitespace that a parse and re-serialisation would lose. */
const rawChat = (model: string, stream = false) =>
  `{\n  "messages" : [ {"content":"hi there", "role":"user"} ],\t"x_vendor_flag": {"keep": [1, 2.50, true]},\n  "model":"${model}"${stream ? ', "stream": true' : ''}   }\n`;

/** The overrides every OpenAI channel here has: each one visible in the upstream body or headers. */
const overrides = (model: string) => ({
  model_mapping: JSON.stringify({ [model]: `${model}-mapped` }),
  param_override: JSON.stringify({ temperature: 0.25 }),
  header_override: JSON.stringify({ 'X-Channel-Header': 'from-override' }),
});

async function createChannel(fields: Record<string, unknown>): Promise<void> {
  const created = await root.post('/api/channel/', { key: 'sk-upstream', group: 'default', ...fields });
  expect(created.body.success, JSON.stringify(created.body)).toBe(true);
}

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body,
  });

beforeAll(async () => {
  [openaiUp, anthropicUp, geminiUp] = await Promise.all([startMockOpenAI(), startMockAnthropic(), startMockGemini()]);
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  // pt-plain: no setting of its own; pt-channel: the channel switch on; pt-claude: an Anthropic channel.
  await createChannel({ name: 'plain', type: 1, base_url: openaiUp.url, models: 'pt-plain', ...overrides('pt-plain') });
  await createChannel({
    name: 'switched',
    type: 1,
    base_url: openaiUp.url,
    models: 'pt-channel',
    setting: JSON.stringify({ proxy: '', pass_through_body_enabled: true }),
    ...overrides('pt-channel'),
  });
  await createChannel({ name: 'claude', type: 14, base_url: anthropicUp.url, models: 'pt-claude' });
  await createChannel({ name: 'gemini', type: 24, base_url: geminiUp.url, models: 'pt-gemini' });
  await gateway.options.setMany({
    ModelRatio: JSON.stringify({ 'pt-plain': 1, 'pt-channel': 1, 'pt-claude': 1, 'pt-gemini': 1 }),
  });
  key = (await root.post('/api/token/', { name: 'pass-through', unlimited_quota: true })).body.data.key;
  await eventually(
    async () =>
      (await (await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as any,
    (list) => list.data?.length === 4,
    5000,
  );
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await Promise.all([openaiUp?.close(), anthropicUp?.close(), geminiUp?.close()]);
});

beforeEach(async () => {
  openaiUp.requests.length = 0;
  anthropicUp.requests.length = 0;
  geminiUp.requests.length = 0;
  openaiUp.behaviour = { usage: { prompt_tokens: 40, completion_tokens: 10 } };
  anthropicUp.behaviour = { usage: { input_tokens: 30, output_tokens: 6 } };
  await gateway.options.setMany({ 'global.pass_through_request_enabled': 'false' });
});

describe('pass-through off (the default)', () => {
  it('prepares the body: model mapped, param override applied, unknown fields kept but re-serialised', async () => {
    const answer = await post('/v1/chat/completions', rawChat('pt-plain'));
    expect(answer.status).toBe(200);
    const sent = openaiUp.requests[0];
    expect(sent?.raw.toString()).not.toBe(rawChat('pt-plain'));
    expect(sent?.body).toMatchObject({
      model: 'pt-plain-mapped',
      temperature: 0.25,
      x_vendor_flag: { keep: [1, 2.5, true] },
    });
    expect(sent?.headers['x-channel-header']).toBe('from-override');
  });
});

describe('pass-through on globally', () => {
  beforeEach(async () => {
    await gateway.options.setMany({ 'global.pass_through_request_enabled': 'true' });
  });

  it('sends the client bytes exactly, without mapping or param override, with the header override, and bills', async () => {
    const raw = rawChat('pt-plain');
    const log = await billed(gateway, async () => {
      const answer = await post('/v1/chat/completions', raw);
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as any).choices[0].message.content).toBe('Hello from the mock.');
    });
    const sent = openaiUp.requests[0];
    expect(sent?.raw.equals(Buffer.from(raw))).toBe(true);
    expect(sent?.headers['x-channel-header']).toBe('from-override');
    expect(sent?.headers.authorization).toBe('Bearer sk-upstream');
    // ModelRatio 1, CompletionRatio default 1 for an unknown model: prompt + completion from the upstream's usage.
    expect([log.prompt_tokens, log.completion_tokens]).toEqual([40, 10]);
    expect(log.quota).toBe(50);
  });

  it('passes a streamed request through too, and meters the stream', async () => {
    const raw = rawChat('pt-plain', true);
    const log = await billed(gateway, async () => {
      const answer = await post('/v1/chat/completions', raw);
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain('data: [DONE]');
    });
    expect(openaiUp.requests[0]?.raw.equals(Buffer.from(raw))).toBe(true);
    // Not asked for stream usage on the client's behalf: the client's body is not touched.
    expect(openaiUp.requests[0]?.body.stream_options).toBeUndefined();
    expect(log.completion_tokens).toBeGreaterThan(0);
    expect(log.quota).toBeGreaterThan(0);
  });

  it('passes a compressed body through as its decoded bytes', async () => {
    const { gzipSync } = await import('node:zlib');
    const raw = rawChat('pt-plain');
    const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(raw),
    });
    expect(answer.status).toBe(200);
    expect(openaiUp.requests[0]?.raw.equals(Buffer.from(raw))).toBe(true);
  });

  it('converts as usual when the channel speaks another format: the upstream gets a body it reads', async () => {
    const raw = rawChat('pt-claude');
    const answer = await post('/v1/chat/completions', raw);
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as any).object).toBe('chat.completion');
    const sent = anthropicUp.requests[0];
    expect(sent?.raw.toString()).not.toBe(raw);
    expect(sent?.body).toMatchObject({ model: 'pt-claude', messages: [{ role: 'user' }] });
    expect(sent?.body.max_tokens).toBeGreaterThan(0);
    expect(sent?.body.x_vendor_flag).toBeUndefined();
  });

  it('passes a Claude request to an Anthropic channel through as it is', async () => {
    const raw = `{"model":"pt-claude",  "max_tokens": 64, "messages":[{"role":"user","content":"hi"}], "x_extra": null}`;
    const answer = await post('/v1/messages', raw, { 'anthropic-version': '2023-06-01' });
    expect(answer.status).toBe(200);
    expect(anthropicUp.requests[0]?.raw.equals(Buffer.from(raw))).toBe(true);
  });
});

describe('pass-through on Gemini channels', () => {
  it('passes a native Gemini request through as it is', async () => {
    await gateway.options.setMany({ 'global.pass_through_request_enabled': 'true' });
    const raw = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],  "x_extra":{"a":1}}`;
    const answer = await post('/v1beta/models/pt-gemini:generateContent', raw);
    expect(answer.status).toBe(200);
    expect(geminiUp.requests[0]?.raw.equals(Buffer.from(raw))).toBe(true);
  });
});

describe('pass-through and sensitive words', () => {
  it('a prompt whose words are starred goes as prepared, starred, not as the client sent it', async () => {
    await gateway.options.setMany({ 'global.pass_through_request_enabled': 'true', StopOnSensitiveEnabled: 'false' });
    try {
      const raw = rawChat('pt-plain').replace('hi there', 'hi test_sensitive');
      expect((await post('/v1/chat/completions', raw)).status).toBe(200);
      const sent = openaiUp.requests[0];
      expect(sent?.raw.toString()).not.toContain('test_sensitive');
      expect(sent?.body.messages[0].content).toBe('hi **************');
    } finally {
      await gateway.options.setMany({ StopOnSensitiveEnabled: 'true' });
    }
  });
});

describe('the channel switch pass_through_body_enabled', () => {
  it('passes that channel’s requests through while the global switch is off, and only that channel’s', async () => {
    const raw = rawChat('pt-channel');
    expect((await post('/v1/chat/completions', raw)).status).toBe(200);
    expect((await post('/v1/chat/completions', rawChat('pt-plain'))).status).toBe(200);
    const [switched, plain] = openaiUp.requests;
    expect(switched?.raw.equals(Buffer.from(raw))).toBe(true);
    expect(switched?.headers['x-channel-header']).toBe('from-override');
    expect(plain?.body).toMatchObject({ model: 'pt-plain-mapped', temperature: 0.25 });
  });
});
