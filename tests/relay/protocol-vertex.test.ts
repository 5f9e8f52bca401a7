import Anthropic from '@anthropic-ai/sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { GoogleGenAI } from '@google/genai';
import { JWT } from 'google-auth-library';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../../gateway/src/gateway.ts';
import { type DashboardClient, setupRoot } from '../support/client.ts';
import { createTestDatabase } from '../support/database.ts';
import { gatewayEnv, startTestGateway, testNamespace } from '../support/gateway.ts';
import {
  createServiceAccount,
  type MockVertex,
  startMockVertex,
  type TestServiceAccount,
} from '../support/mock-vertex.ts';
import { billed } from '../support/usage.ts';
import { eventually } from '../support/wait.ts';

// Vertex AI (channel type 41) end to end: the gateway signs a JWT with the channel's service account,
// trades it at the mock's token endpoint for an access token, and calls Gemini and Claude publishers
// in the regions the channel's `other` names. Each publisher reports a fixed usage; the quota expected
// is worked out here from the ratios and those numbers.
const REPLY = 'The weather in Paris is sunny today.';
const GEMINI = 'gemini-2.5-flash';
const CLAUDE = 'claude-sonnet-4-20250514';
const CLAUDE_ON_VERTEX = 'claude-sonnet-4@20250514';
const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const REGIONS = { default: 'us-central1', [CLAUDE]: 'us-east5' };
const EXPRESS = 'gemini-2.0-flash';
const API_KEY = 'AQ.Ab8RN6LvertexExpressTestKey-0123';

// Gemini: prompt 150 including 50 cached (at 0.25); candidates 25 + thoughts 5 at 8; ratio 0.15.
const GEMINI_QUOTA = Math.round((100 + 50 * 0.25 + 30 * 8) * 0.15);
// Claude: input 100 excludes 40 cache reads (at 0.1) and 20 cache writes (at 1.25); output 30 at 5; ratio 1.5.
const CLAUDE_QUOTA = Math.round((100 + 40 * 0.1 + 20 * 1.25 + 30 * 5) * 1.5);

let gateway: Gateway;
let drop: () => Promise<void>;
let root: DashboardClient;
let vertex: MockVertex;
let account: TestServiceAccount;
let stranger: TestServiceAccount;
let channelId: number;
let strangerChannelId: number;
let key: string;

function script() {
  vertex.gemini.behaviour = {
    reply: REPLY,
    usage: { promptTokenCount: 150, cachedContentTokenCount: 50, candidatesTokenCount: 25, thoughtsTokenCount: 5 },
  };
  vertex.anthropic.behaviour = {
    reply: REPLY,
    usage: { input_tokens: 100, output_tokens: 30, cache_read_input_tokens: 40, cache_creation_5m_input_tokens: 20 },
  };
}

/**
 * A google-auth-library JWT client for the account whose token requests go to the mock: the library
 * posts to Google's token URL whatever the key file's token_uri says, so its transporter is redirected.
 */
function authClientFor(who: TestServiceAccount): JWT {
  const client = new JWT({
    email: who.credentials.client_email,
    key: who.credentials.private_key,
    keyId: who.credentials.private_key_id,
    scopes: [CLOUD_PLATFORM],
  });
  client.transporter.interceptors.request.add({
    resolved: async (config) => {
      if (String(config.url) === GOOGLE_TOKEN_URL) config.url = new URL(vertex.tokenUri);
      return config;
    },
  });
  return client;
}

async function createChannel(body: Record<string, unknown>) {
  return root.post('/api/channel/', { type: 41, base_url: vertex.url, group: 'default', ...body });
}

beforeAll(async () => {
  vertex = await startMockVertex();
  account = createServiceAccount(vertex.tokenUri, { project: 'tollgate-test', name: 'relay' });
  stranger = createServiceAccount(vertex.tokenUri, { project: 'tollgate-test', name: 'stranger' });
  vertex.trust(account);
  vertex.trustApiKey(API_KEY);
  const database = await createTestDatabase();
  drop = database.drop;
  gateway = await startTestGateway(gatewayEnv(database.options, testNamespace()));
  root = await setupRoot(gateway.url);
  const created = await createChannel({
    name: 'vertex',
    key: account.json,
    models: `${GEMINI},${CLAUDE}`,
    other: JSON.stringify(REGIONS),
  });
  expect(created.body.success, JSON.stringify(created.body)).toBe(true);
  channelId = created.body.data.id;
  const strangers = await createChannel({ name: 'vertex-stranger', key: stranger.json, models: 'gemini-2.5-pro' });
  expect(strangers.body.success, JSON.stringify(strangers.body)).toBe(true);
  strangerChannelId = strangers.body.data.id;
  const express = await createChannel({ name: 'vertex-express', key: API_KEY, models: EXPRESS });
  expect(express.body.success, JSON.stringify(express.body)).toBe(true);
  await gateway.options.setMany({
    ModelRatio: JSON.stringify({ [GEMINI]: 0.15, [EXPRESS]: 0.15, [CLAUDE]: 1.5, 'gemini-2.5-pro': 1 }),
    CompletionRatio: JSON.stringify({ [GEMINI]: 8, [EXPRESS]: 8, [CLAUDE]: 5 }),
    CacheRatio: JSON.stringify({ [GEMINI]: 0.25, [EXPRESS]: 0.25, [CLAUDE]: 0.1 }),
    CreateCacheRatio: JSON.stringify({ [CLAUDE]: 1.25 }),
  });
  key = (await root.post('/api/token/', { name: 'vertex', unlimited_quota: true })).body.data.key;
  const openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  await eventually(
    async () => (await openai.models.list()).data.length,
    (n) => n === 4,
    2000,
  );
});

afterAll(async () => {
  await gateway?.stop();
  await drop?.();
  await vertex?.close();
});

describe('channels of type 41', () => {
  it('refuses a key that is not a service-account JSON, saying what is wrong', async () => {
    const neither = await createChannel({ name: 'bad', key: 'not a key at all', models: GEMINI });
    expect(neither.body).toMatchObject({ success: false, code: 'CHANNEL_KEY_INVALID' });
    expect(neither.body.message).toContain('neither a service-account JSON nor an API key');
    const { private_key: _key, ...keyless } = account.credentials;
    const missing = await createChannel({ name: 'bad', key: JSON.stringify(keyless), models: GEMINI });
    expect(missing.body).toMatchObject({ success: false, code: 'CHANNEL_KEY_INVALID' });
    expect(missing.body.message).toContain('private_key');
  });
});

describe('the openai client', () => {
  const openai = () => new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });

  it.each([
    [GEMINI, GEMINI_QUOTA, { publisher: 'google', model: GEMINI, location: 'us-central1', action: 'generateContent' }],
    [
      CLAUDE,
      CLAUDE_QUOTA,
      { publisher: 'anthropic', model: CLAUDE_ON_VERTEX, location: 'us-east5', action: 'rawPredict' },
    ],
  ] as const)('chats with %s in its region, billed by the formula', async (model, quota, route) => {
    script();
    let text = '';
    const log = await billed(gateway, async () => {
      const answer = await openai().chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Weather?' }],
      });
      text = answer.choices[0]?.message.content ?? '';
    });
    expect(text).toBe(REPLY);
    expect(log.quota).toBe(quota);
    expect(vertex.requests.at(-1)).toMatchObject({ ...route, project: 'tollgate-test' });
  });

  it.each([
    [GEMINI, GEMINI_QUOTA, 'streamGenerateContent'],
    [CLAUDE, CLAUDE_QUOTA, 'streamRawPredict'],
  ] as const)('streams %s, billed by the formula', async (model, quota, action) => {
    script();
    let text = '';
    const log = await billed(gateway, async () => {
      const stream = await openai().chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Weather?' }],
        stream: true,
      });
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    });
    expect(text).toBe(REPLY);
    expect(log.quota).toBe(quota);
    expect(vertex.requests.at(-1)?.action).toBe(action);
  });

  it.each([
    [GEMINI, GEMINI_QUOTA],
    [CLAUDE, CLAUDE_QUOTA],
  ] as const)('gets a tool call back from %s, billed by the formula', async (model, quota) => {
    script();
    let answer: OpenAI.ChatCompletion | undefined;
    const log = await billed(gateway, async () => {
      answer = await openai().chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
          },
        ],
      });
    });
    expect(log.quota).toBe(quota);
    const call = answer?.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function.name).toBe('get_weather');
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    expect(answer?.choices[0]?.finish_reason).toBe('tool_calls');
  });
});

describe('the Claude client', () => {
  const claude = () => new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
  const request = {
    model: CLAUDE,
    max_tokens: 4096,
    thinking: { type: 'enabled' as const, budget_tokens: 2048 },
    system: [{ type: 'text' as const, text: 'You are terse.', cache_control: { type: 'ephemeral' as const } }],
    messages: [{ role: 'user' as const, content: 'Weather?' }],
  };

  it('passes natively to rawPredict with cache_control and thinking unchanged, billed by the formula', async () => {
    script();
    let message: Anthropic.Message | undefined;
    const log = await billed(gateway, async () => {
      message = await claude().messages.create(request);
    });
    expect(message?.content.at(-1)).toMatchObject({ type: 'text', text: REPLY });
    expect(message?.content[0]?.type).toBe('thinking');
    expect(log.quota).toBe(CLAUDE_QUOTA);
    expect(log.other.request_conversion).toBeUndefined();
    const sent = vertex.requests.at(-1)!;
    expect(sent).toMatchObject({ publisher: 'anthropic', model: CLAUDE_ON_VERTEX, action: 'rawPredict' });
    const { model: _model, ...rest } = request;
    expect(sent.body).toEqual({ ...rest, anthropic_version: 'vertex-2023-10-16' });
  });

  it('streams natively from streamRawPredict, event by event', async () => {
    script();
    let text = '';
    const log = await billed(gateway, async () => {
      const stream = claude().messages.stream(request);
      for await (const event of stream) {
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      }
      expect((await stream.finalMessage()).stop_reason).toBe('end_turn');
    });
    expect(text).toBe(REPLY);
    expect(log.quota).toBe(CLAUDE_QUOTA);
    const sent = vertex.requests.at(-1)!;
    expect(sent.action).toBe('streamRawPredict');
    expect(sent.body).toMatchObject({ stream: true, thinking: request.thinking, system: request.system });
  });
});

describe('the Gemini client', () => {
  const ai = () => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });
  const contents = [{ role: 'user', parts: [{ text: 'Weather?' }] }];

  it('passes natively to generateContent with its body unchanged, billed by the formula', async () => {
    script();
    let text = '';
    const log = await billed(gateway, async () => {
      text = (await ai().models.generateContent({ model: GEMINI, contents })).text ?? '';
    });
    expect(text).toBe(REPLY);
    expect(log.quota).toBe(GEMINI_QUOTA);
    expect(log.other.request_conversion).toBeUndefined();
    const sent = vertex.requests.at(-1)!;
    expect(sent).toMatchObject({ publisher: 'google', model: GEMINI, action: 'generateContent' });
    expect(sent.body.contents).toEqual(contents);
  });

  it('streams natively from streamGenerateContent', async () => {
    script();
    let text = '';
    const log = await billed(gateway, async () => {
      for await (const chunk of await ai().models.generateContentStream({ model: GEMINI, contents })) {
        text += chunk.text ?? '';
      }
    });
    expect(text).toBe(REPLY);
    expect(log.quota).toBe(GEMINI_QUOTA);
    expect(vertex.requests.at(-1)?.query.get('alt')).toBe('sse');
  });
});

describe('an API-key channel (express mode)', () => {
  it('chats with a Gemini model at the project-less path, the key in x-goog-api-key, billed by the formula', async () => {
    script();
    const openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    let text = '';
    const log = await billed(gateway, async () => {
      const stream = await openai.chat.completions.create({
        model: EXPRESS,
        messages: [{ role: 'user', content: 'Weather?' }],
        stream: true,
      });
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    });
    expect(text).toBe(REPLY);
    expect(log.quota).toBe(GEMINI_QUOTA);
    const sent = vertex.requests.at(-1)!;
    expect(sent.path).toBe(`/v1/publishers/google/models/${EXPRESS}:streamGenerateContent`);
    expect(sent.headers['x-goog-api-key']).toBe(API_KEY);
    expect(sent.headers.authorization).toBeUndefined();
  });
});

describe('access tokens', () => {
  // After the billed calls: a channel test writes a free consume log of its own.
  it('passes the channel test, on Gemini and on Claude', async () => {
    const gemini = await root.get(`/api/channel/test/${channelId}`);
    expect(gemini.body, JSON.stringify(gemini.body)).toMatchObject({ success: true });
    const claude = await root.get(`/api/channel/test/${channelId}?model=${CLAUDE}`);
    expect(claude.body, JSON.stringify(claude.body)).toMatchObject({ success: true });
    expect(vertex.requests.at(-1)).toMatchObject({ publisher: 'anthropic', model: CLAUDE_ON_VERTEX });
  });

  it('fetched one token for all the requests above', () => {
    expect(vertex.grants).toEqual([{ email: account.credentials.client_email, token: expect.any(String) }]);
    expect(vertex.requests.length).toBeGreaterThan(10);
    const used = new Set(
      vertex.requests.filter((r) => r.path.includes('/projects/')).map((r) => r.headers.authorization),
    );
    expect([...used]).toEqual([`Bearer ${vertex.grants[0]?.token}`]);
  });

  it('gives the client a clear auth error when the token endpoint refuses the account', async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const failure = await openai.chat.completions
      .create({ model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'Weather?' }] })
      .then(
        () => undefined,
        (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
      );
    expect(failure?.status).toBe(401);
    expect(failure?.message).toContain("Google's token endpoint refused the service account");
    expect(failure?.message).toContain('account not found');
    expect(vertex.refusals.at(-1)).toBe('invalid_grant');
    const test = await root.get(`/api/channel/test/${strangerChannelId}`);
    expect(test.body).toMatchObject({ success: false });
    expect(test.body.message).toContain('account not found');
  });
});

describe('the Vertex mock, as the official clients see it', () => {
  it("grants google-auth-library's JWT client a token for the key file, and refuses an unknown account", async () => {
    const { token } = await authClientFor(account).getAccessToken();
    expect(token).toBe(vertex.grants.at(-1)?.token);
    expect(vertex.grants.at(-1)?.email).toBe(account.credentials.client_email);

    await expect(authClientFor(stranger).getAccessToken()).rejects.toThrow(
      'invalid_grant: Invalid grant: account not found',
    );
    // A JWT of the trusted account signed with another key fails the signature check.
    const forged = authClientFor({
      ...stranger,
      credentials: { ...stranger.credentials, client_email: account.credentials.client_email },
    });
    await expect(forged.getAccessToken()).rejects.toThrow('Invalid JWT Signature.');
  });

  it('answers @anthropic-ai/vertex-sdk a message and a stream, and refuses it without a token', async () => {
    const client = new AnthropicVertex({
      baseURL: `${vertex.url}/v1`,
      region: 'us-east5',
      projectId: 'tollgate-test',
      authClient: authClientFor(account) as never,
      maxRetries: 0,
    });
    vertex.anthropic.behaviour = { reply: REPLY };
    const message = await client.messages.create({
      model: CLAUDE_ON_VERTEX,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Weather?' }],
    });
    expect(message.content).toEqual([{ type: 'text', text: REPLY }]);
    expect(vertex.requests.at(-1)).toMatchObject({
      location: 'us-east5',
      publisher: 'anthropic',
      model: CLAUDE_ON_VERTEX,
      action: 'rawPredict',
    });
    let text = '';
    const stream = client.messages.stream({
      model: CLAUDE_ON_VERTEX,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Weather?' }],
    });
    for await (const event of stream) {
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
    }
    expect(text).toBe(REPLY);
    expect(vertex.requests.at(-1)?.action).toBe('streamRawPredict');

    const anonymous = await fetch(
      `${vertex.url}/v1/projects/tollgate-test/locations/us-east5/publishers/anthropic/models/${CLAUDE_ON_VERTEX}:rawPredict`,
      { method: 'POST', headers: { authorization: 'Bearer ya29.made-up' }, body: '{}' },
    );
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: unknown }).error).toMatchObject({
      code: 401,
      status: 'UNAUTHENTICATED',
    });
  });

  it('answers @google/genai in express mode with an API key, and refuses an unknown key', async () => {
    vertex.gemini.behaviour = { reply: REPLY };
    const ai = (apiKey: string) => new GoogleGenAI({ vertexai: true, apiKey, httpOptions: { baseUrl: vertex.url } });
    const answer = await ai(API_KEY).models.generateContent({ model: GEMINI, contents: 'Weather?' });
    expect(answer.text).toBe(REPLY);
    expect(vertex.requests.at(-1)?.path).toBe(`/v1beta1/publishers/google/models/${GEMINI}:generateContent`);
    await expect(
      ai('AIza-unknown-key-0000000000').models.generateContent({ model: GEMINI, contents: 'x' }),
    ).rejects.toThrow('API key not valid');
  });

  it('answers @google/genai in Vertex mode content and a stream, and refuses a project the account is not in', async () => {
    vertex.gemini.behaviour = { reply: REPLY };
    const ai = new GoogleGenAI({
      vertexai: true,
      project: 'tollgate-test',
      location: 'europe-west4',
      httpOptions: { baseUrl: vertex.url },
      googleAuthOptions: { authClient: authClientFor(account) as never },
    });
    const answer = await ai.models.generateContent({ model: GEMINI, contents: 'Weather?' });
    expect(answer.text).toBe(REPLY);
    expect(vertex.requests.at(-1)).toMatchObject({
      project: 'tollgate-test',
      location: 'europe-west4',
      publisher: 'google',
      model: GEMINI,
      action: 'generateContent',
    });
    let text = '';
    for await (const chunk of await ai.models.generateContentStream({ model: GEMINI, contents: 'Weather?' })) {
      text += chunk.text ?? '';
    }
    expect(text).toBe(REPLY);
    expect(vertex.requests.at(-1)?.query.get('alt')).toBe('sse');

    const elsewhere = new GoogleGenAI({
      vertexai: true,
      project: 'someone-else',
      location: 'us-central1',
      httpOptions: { baseUrl: vertex.url },
      googleAuthOptions: { authClient: authClientFor(account) as never },
    });
    await expect(elsewhere.models.generateContent({ model: GEMINI, contents: 'Weather?' })).rejects.toThrow(
      "Permission 'aiplatform.endpoints.predict' denied",
    );
  });
});

describe('fetching the model list (publisher models)', () => {
  const GOOGLE_LISTED = ['gemini-2.0-flash', 'gemini-2.0-flash-lite', 'gemini-2.5-flash', 'gemini-2.5-pro'];

  it('is offered for the type in the console', async () => {
    const types = (await root.get('/api/channel/types')).body.data;
    expect(types.find((type: { id: number }) => type.id === 41)).toMatchObject({ model_listing: true });
  });

  it('lists Google’s Gemini models with the cached access token, and the registry’s Claude names', async () => {
    const grants = vertex.grants.length;
    const answer = await root.get(`/api/channel/fetch_models/${channelId}`);
    expect(answer.body).toMatchObject({
      success: true,
      data: ['claude-3-5-sonnet-20241022', 'claude-sonnet-4-20250514', ...GOOGLE_LISTED],
    });
    const sent = vertex.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'GET', path: '/v1beta1/publishers/google/models', action: 'list' });
    expect(sent.headers.authorization).toBe(`Bearer ${vertex.grants[0]?.token}`);
    expect(vertex.grants.length).toBe(grants);
  });

  it('lists only Gemini models for an unsaved API-key channel, the key in x-goog-api-key', async () => {
    const answer = await root.post('/api/channel/fetch_models', { type: 41, key: API_KEY, base_url: vertex.url });
    expect(answer.body).toMatchObject({ success: true, data: GOOGLE_LISTED });
    const sent = vertex.requests.at(-1)!;
    expect(sent).toMatchObject({ path: '/v1beta1/publishers/google/models' });
    expect(sent.headers['x-goog-api-key']).toBe(API_KEY);
  });

  it('gives a wrong API key Google’s refusal, without the key, not a 500', async () => {
    const wrong = 'AQ.Ab8RN6LwrongExpressKey-9876';
    const answer = await root.post('/api/channel/fetch_models', { type: 41, key: wrong, base_url: vertex.url });
    expect(answer.status).toBeLessThan(500);
    expect(answer.body).toMatchObject({ success: false, code: 'UPSTREAM_REFUSED' });
    expect(answer.body.message).toContain('API key not valid');
    expect(answer.body.message).not.toContain(wrong);
  });

  it('gives an account the token endpoint refuses as the upstream’s refusal, not a 500', async () => {
    const answer = await root.get(`/api/channel/fetch_models/${strangerChannelId}`);
    expect(answer.status).toBeLessThan(500);
    expect(answer.body).toMatchObject({ success: false, code: 'UPSTREAM_REFUSED' });
    expect(answer.body.message).toContain("Google's token endpoint refused the service account");
    expect(answer.body.message).toContain('account not found');
  });
});
