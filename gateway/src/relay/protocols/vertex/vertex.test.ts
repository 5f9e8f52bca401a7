import { createVerify, generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { checkChannelKeys } from '../../../domain/channels/key-check.ts';
import { applyManagedChannel, type ManagedChannelDeps } from '../../../domain/channels/managed.ts';
import {
  parseGoogleCredentials,
  parseServiceAccount,
  type ServiceAccount,
} from '../../../domain/channels/service-account.ts';
import { OPTION_DEFINITIONS, type OptionsService } from '../../../domain/options/index.ts';
import { AppError } from '../../../errors.ts';
import { RelayRuleError } from '../../routing/errors.ts';
import { SseParser } from '../../sse.ts';
import type { Transport } from '../../transport.ts';
import type { ChannelSnapshot } from '../../types.ts';
import type { BuildInput, UpstreamRequest } from '../types.ts';
import {
  AccessTokens,
  buildVertexRequest,
  parseVertexError,
  prepareVertexBody,
  publicClaudeId,
  regionFor,
  signAssertion,
  TokenRefused,
  vertexClaudeId,
  vertexHost,
  vertexProvider,
} from './index.ts';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const ACCOUNT: ServiceAccount & { type: string } = {
  type: 'service_account',
  project_id: 'my-project',
  private_key_id: 'key-1',
  private_key: PEM,
  client_email: 'relay@my-project.iam.gserviceaccount.com',
  token_uri: 'https://oauth2.googleapis.com/token',
};
const KEY = JSON.stringify(ACCOUNT);

const options = (() => {
  const all = new Map<string, string>(OPTION_DEFINITIONS.map((d) => [d.key, d.default]));
  return {
    getBoolean: (key: string) => all.get(key) === 'true',
    getNumber: (key: string) => Number(all.get(key)),
    getJson: (key: string) => JSON.parse(all.get(key)!),
  } as unknown as OptionsService;
})();

const channel = (more: Partial<ChannelSnapshot> = {}) =>
  ({ id: 7, type: 41, name: 'vertex', baseUrl: '', other: '', keys: [KEY], ...more }) as ChannelSnapshot;

const build = (more: Partial<BuildInput> = {}) =>
  buildVertexRequest({
    format: 'gemini-generate',
    channel: channel(),
    key: KEY,
    upstreamModel: 'gemini-2.5-flash',
    body: '{}',
    stream: false,
    options,
    clientHeaders: {},
    ...more,
  });

describe('service-account keys', () => {
  it('reads a key file, PEM newlines escaped or not', () => {
    expect(parseServiceAccount(KEY)).toEqual({ account: expect.objectContaining({ project_id: 'my-project' }) });
    const escaped = KEY.replace(/\\n/g, '\\\\n');
    expect(parseServiceAccount(escaped)).toEqual({ account: expect.objectContaining({ private_key: PEM }) });
  });

  it.each([
    ['{"type": "service_account",', 'not valid JSON'],
    ['[1]', 'not a JSON object'],
    [JSON.stringify({ ...ACCOUNT, type: 'authorized_user' }), '"type" is not "service_account"'],
    [JSON.stringify({ ...ACCOUNT, client_email: '', project_id: undefined }), 'no project_id, client_email'],
    [JSON.stringify({ ...ACCOUNT, private_key: 'not a key' }), 'private_key is not a PEM private key'],
    [JSON.stringify({ ...ACCOUNT, token_uri: 'oauth2.googleapis.com/token' }), 'token_uri is not an http(s) URL'],
  ])('says what is wrong with %s', (text, problem) => {
    const parsed = parseServiceAccount(text);
    expect('problem' in parsed && parsed.problem).toContain(problem);
  });

  it('takes a key that is not JSON for an API key when it looks like one', () => {
    expect(parseGoogleCredentials(` ${KEY}\n`)).toEqual({
      account: expect.objectContaining({ project_id: 'my-project' }),
    });
    expect(parseGoogleCredentials('AIzaSyD-0123456789abcdefghijklmnop')).toEqual({
      apiKey: 'AIzaSyD-0123456789abcdefghijklmnop',
    });
    expect(parseGoogleCredentials('AQ.Ab8RN6I_bound-to-an-account')).toEqual({
      apiKey: 'AQ.Ab8RN6I_bound-to-an-account',
    });
    expect(parseGoogleCredentials('my key')).toEqual({
      problem: 'the key is neither a service-account JSON nor an API key',
    });
  });

  it('refuses a bad key when a type-41 channel is saved, and leaves other types alone', () => {
    expect(() => checkChannelKeys(41, [KEY, 'nope'])).toThrow(AppError);
    try {
      checkChannelKeys(41, [KEY, 'nope']);
    } catch (error) {
      expect((error as AppError).code).toBe('CHANNEL_KEY_INVALID');
      expect((error as AppError).message).toContain('Key 2 of the');
    }
    expect(() => checkChannelKeys(41, [KEY])).not.toThrow();
    expect(() => checkChannelKeys(1, ['nope'])).not.toThrow();
  });

  it('refuses a bad key in a Channel custom resource before touching the database', async () => {
    const result = await applyManagedChannel(
      {} as ManagedChannelDeps,
      { namespace: 'ai', name: 'vertex', uid: 'u-1' } as never,
      {
        input: { name: 'vertex', type: 41, models: 'gemini-2.5-flash' },
        key: '{"type": "service_account"}',
        multiKeyMode: 'random',
        enabled: true,
      },
    );
    expect(result).toMatchObject({ ok: false, code: 'CHANNEL_KEY_INVALID' });
  });
});

describe('the signed assertion', () => {
  const assertion = signAssertion(ACCOUNT, 1_700_000_000);
  const [head, claims, signature] = assertion.split('.') as [string, string, string];

  it('names the key and asks for cloud-platform for an hour, at the token endpoint', () => {
    expect(JSON.parse(Buffer.from(head, 'base64url').toString())).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'key-1' });
    expect(JSON.parse(Buffer.from(claims, 'base64url').toString())).toEqual({
      iss: ACCOUNT.client_email,
      scope: 'https://www.googleapis.com/auth/cloud-platform',
      aud: ACCOUNT.token_uri,
      iat: 1_700_000_000,
      exp: 1_700_003_600,
    });
  });

  it('is RS256 over header.claims, byte for byte what the jws package (google-auth-library’s signer) makes', () => {
    const verified = createVerify('RSA-SHA256')
      .update(`${head}.${claims}`)
      .verify(publicKey, Buffer.from(signature, 'base64url'));
    expect(verified).toBe(true);
    const jws = createRequire(import.meta.url)('jws') as { sign(input: object): string };
    const reference = jws.sign({
      header: JSON.parse(Buffer.from(head, 'base64url').toString()),
      payload: JSON.parse(Buffer.from(claims, 'base64url').toString()),
      secret: PEM,
    });
    expect(assertion).toBe(reference);
  });
});

/** A token endpoint stand-in: answers each call from `answers` (the last one repeats), counting calls. */
function fakeTransport(answers: Array<{ status: number; body: unknown }>) {
  const calls: UpstreamRequest[] = [];
  const transport = {
    async send(request: UpstreamRequest) {
      calls.push(request);
      const answer = answers[Math.min(calls.length - 1, answers.length - 1)]!;
      await new Promise((resolve) => setTimeout(resolve, 5));
      const text = JSON.stringify(answer.body);
      return { status: answer.status, headers: {}, body: { text: async () => text } };
    },
  } as unknown as Pick<Transport, 'send'>;
  return { transport, calls };
}

describe('access tokens', () => {
  it('posts the JWT-bearer grant form to token_uri and shares one fetch among concurrent requests', async () => {
    const { transport, calls } = fakeTransport([{ status: 200, body: { access_token: 'ya29.a', expires_in: 3599 } }]);
    const tokens = new AccessTokens();
    const got = await Promise.all(Array.from({ length: 5 }, () => tokens.token(ACCOUNT, transport)));
    expect(got).toEqual(Array(5).fill('ya29.a'));
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      url: ACCOUNT.token_uri,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const form = new URLSearchParams(calls[0]!.body as string);
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    expect(form.get('assertion')?.split('.')).toHaveLength(3);
  });

  it('keeps a token until five minutes before it expires', async () => {
    const { transport, calls } = fakeTransport([
      { status: 200, body: { access_token: 'ya29.first', expires_in: 3600 } },
      { status: 200, body: { access_token: 'ya29.second', expires_in: 3600 } },
    ]);
    let now = 1_000_000;
    const tokens = new AccessTokens(() => now);
    expect(await tokens.token(ACCOUNT, transport)).toBe('ya29.first');
    now += 54 * 60_000;
    expect(await tokens.token(ACCOUNT, transport)).toBe('ya29.first');
    now += 60_001;
    expect(await tokens.token(ACCOUNT, transport)).toBe('ya29.second');
    expect(calls).toHaveLength(2);
    // Another account has a token of its own.
    expect(await tokens.token({ ...ACCOUNT, client_email: 'other@x.iam.gserviceaccount.com' }, transport)).toBe(
      'ya29.second',
    );
    expect(calls).toHaveLength(3);
  });

  it('names the token endpoint when it cannot be reached', async () => {
    const transport = {
      send: async () => {
        throw new Error('connect ECONNREFUSED 10.0.0.1:443');
      },
    } as unknown as Pick<Transport, 'send'>;
    await expect(new AccessTokens().token(ACCOUNT, transport)).rejects.toThrow(
      'the token endpoint https://oauth2.googleapis.com/token could not be reached: connect ECONNREFUSED 10.0.0.1:443',
    );
  });

  it('reports a refusal with OAuth’s reason, and asks again next time', async () => {
    const { transport, calls } = fakeTransport([
      { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } },
      { status: 200, body: { access_token: 'ya29.ok', expires_in: 3600 } },
    ]);
    const tokens = new AccessTokens();
    const refusal = await tokens.token(ACCOUNT, transport).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(TokenRefused);
    expect(refusal).toMatchObject({ status: 400, message: 'invalid_grant: Invalid JWT Signature.' });
    expect(await tokens.token(ACCOUNT, transport)).toBe('ya29.ok');
    expect(calls).toHaveLength(2);
  });
});

describe('regions and hosts', () => {
  it.each([
    ['', 'gemini-2.5-flash', 'global'],
    ['us-east5', 'gemini-2.5-flash', 'us-east5'],
    ['{"default":"europe-west4","gemini-2.5-pro":"us-central1"}', 'gemini-2.5-pro', 'us-central1'],
    ['{"default":"europe-west4","gemini-2.5-pro":"us-central1"}', 'gemini-2.5-flash', 'europe-west4'],
    ['{"claude-sonnet-4-20250514":"us-east5"}', 'claude-sonnet-4@20250514', 'us-east5'],
    ['{"claude-sonnet-4@20250514":"asia-east1"}', 'claude-sonnet-4@20250514', 'asia-east1'],
    ['{"gemini-2.5-pro":"us-central1"}', 'gemini-2.5-flash', 'global'],
  ])('other %s serves %s from %s', (other, model, region) => {
    expect(regionFor(other, model)).toEqual({ region });
  });

  it('says why a setting is unusable', () => {
    expect(regionFor('{"default":', 'm')).toEqual({ problem: 'the JSON map of model to region does not parse' });
    expect(regionFor('{"default":5}', 'm')).toMatchObject({ problem: expect.stringContaining('not a region name') });
    expect(regionFor('us central', 'm')).toMatchObject({ problem: expect.stringContaining('not a region name') });
  });

  it('hosts the global region without a prefix', () => {
    expect(vertexHost('global')).toBe('aiplatform.googleapis.com');
    expect(vertexHost('us-east5')).toBe('us-east5-aiplatform.googleapis.com');
    expect(vertexHost('eu')).toBe('aiplatform.eu.rep.googleapis.com');
  });
});

describe('Claude model names', () => {
  it.each([
    ['claude-sonnet-4-20250514', 'claude-sonnet-4@20250514'],
    ['claude-3-5-sonnet-20241022', 'claude-3-5-sonnet-v2@20241022'],
    ['claude-3-7-sonnet-20250219', 'claude-3-7-sonnet@20250219'],
    ['claude-opus-4-1@20250805', 'claude-opus-4-1@20250805'],
    ['claude-instant', 'claude-instant'],
  ])('%s is %s on Vertex', (name, id) => {
    expect(vertexClaudeId(name)).toBe(id);
    if (name.includes('-20')) expect(publicClaudeId(id)).toBe(name);
  });
});

describe('formats', () => {
  it('speaks Claude Messages to Claude models and Gemini to the rest, chat-like formats only', () => {
    for (const format of ['openai-chat', 'openai-responses', 'claude-messages', 'gemini-generate'] as const) {
      expect(vertexProvider.nativeFormat(format, 'claude-sonnet-4-20250514')).toBe('claude-messages');
      expect(vertexProvider.nativeFormat(format, 'gemini-2.5-flash')).toBe('gemini-generate');
    }
    expect(vertexProvider.nativeFormat('openai-embeddings', 'text-embedding-004')).toBeUndefined();
    expect(vertexProvider.nativeFormat('gemini-embed', 'text-embedding-004')).toBeUndefined();
  });

  it('prepares Claude bodies without model, with Vertex’s version and model id', () => {
    const prepared = prepareVertexBody(
      'claude-messages',
      { model: 'claude-sonnet-4-20250514', messages: [{ role: 'user', content: 'hi' }] },
      {
        channel: channel(),
        model: 'claude-sonnet-4-20250514',
        upstreamModel: 'claude-sonnet-4-20250514',
        stream: false,
        options,
        clientHeaders: {},
      },
    );
    expect(prepared.upstreamModel).toBe('claude-sonnet-4@20250514');
    expect(prepared.body).toEqual({
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 8192,
      anthropic_version: 'vertex-2023-10-16',
    });
  });

  it('prepares Gemini bodies as for Google’s Gemini API', () => {
    const prepared = prepareVertexBody(
      'gemini-generate',
      { model: 'gemini-2.5-flash', contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
      {
        channel: channel(),
        model: 'gemini-2.5-flash',
        upstreamModel: 'gemini-2.5-flash',
        stream: false,
        options,
        clientHeaders: {},
      },
    );
    expect(prepared.body.model).toBeUndefined();
    expect(prepared.body.safetySettings).toHaveLength(5);
  });
});

describe('requests', () => {
  it('calls the regional host’s Google publisher for Gemini, whole or as SSE', () => {
    const regional = build({ channel: channel({ other: 'us-central1' }) });
    expect(regional.url).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent',
    );
    expect(regional.headers).toEqual({ 'content-type': 'application/json' });
    expect(build({ upstreamModel: 'a/../b;c' }).url).toContain('/models/a%2F..%2Fb%3Bc:generateContent');
    expect(build({ stream: true }).url).toBe(
      'https://aiplatform.googleapis.com/v1/projects/my-project/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
  });

  it('calls Anthropic’s publisher for Claude, with beta flags but no key or version header', () => {
    const request = build({
      format: 'claude-messages',
      upstreamModel: 'claude-sonnet-4@20250514',
      stream: true,
      channel: channel({ other: '{"default":"us-east5"}', baseUrl: 'https://proxy.example/vertex/' }),
      clientHeaders: { 'anthropic-beta': 'interleaved-thinking-2025-05-14', 'anthropic-version': '2023-06-01' },
    });
    expect(request.url).toBe(
      'https://proxy.example/vertex/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:streamRawPredict',
    );
    expect(request.headers).toEqual({
      'content-type': 'application/json',
      'anthropic-beta': 'interleaved-thinking-2025-05-14',
    });
  });

  it('sends an API key to express mode’s project-less path, for Google models only', async () => {
    const apiKey = 'AIzaSyD-0123456789abcdefghijklmnop';
    const request = build({ key: apiKey, stream: true, channel: channel({ other: 'us-east5' }) });
    expect(request.url).toBe(
      'https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(request.headers).toEqual({ 'content-type': 'application/json', 'x-goog-api-key': apiKey });
    const { transport, calls } = fakeTransport([{ status: 500, body: {} }]);
    expect(
      await vertexProvider.authorize!(request, { channel: channel(), key: apiKey, transport: transport as Transport }),
    ).toBe(request);
    expect(calls).toHaveLength(0);
    expect(() => build({ key: apiKey, format: 'claude-messages', upstreamModel: 'claude-sonnet-4@20250514' })).toThrow(
      'an API key reaches only Google models',
    );
  });

  it('fails a request of a channel with a broken key or region as the channel’s error', () => {
    const broken = (more: Partial<BuildInput>) => {
      try {
        build(more);
      } catch (error) {
        return error as RelayRuleError;
      }
      throw new Error('built');
    };
    expect(broken({ key: 'AIza-plain' })).toMatchObject({ code: 'channel:key_invalid', status: 401 });
    expect(broken({ key: 'AIza-plain' })).toBeInstanceOf(RelayRuleError);
    expect(broken({ channel: channel({ other: '{oops' }) })).toMatchObject({
      code: 'channel:region_invalid',
      status: 400,
    });
  });

  it('answers a refused token fetch as Google’s 401, which parseError reads', async () => {
    const { transport } = fakeTransport([
      { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid grant: account not found' } },
    ]);
    const request = build({ key: JSON.stringify({ ...ACCOUNT, client_email: 'gone@x.iam.gserviceaccount.com' }) });
    const authorized = await vertexProvider.authorize!(request, {
      channel: channel(),
      key: JSON.stringify({ ...ACCOUNT, client_email: 'gone@x.iam.gserviceaccount.com' }),
      transport: transport as Transport,
    });
    expect(authorized.headers.authorization).toBeUndefined();
    const response = await vertexProvider.send!(authorized, {
      transport: transport as Transport,
      signal: new AbortController().signal,
      stream: false,
    });
    expect(response.status).toBe(401);
    expect(vertexProvider.parseError(response.status, await response.body.text())).toEqual({
      status: 401,
      message: "Google's token endpoint refused the service account: invalid_grant: Invalid grant: account not found",
      type: 'authentication_error',
      code: 'UNAUTHENTICATED',
    });
  });

  it('sends an authorized request with the bearer token', async () => {
    const { transport, calls } = fakeTransport([
      { status: 200, body: { access_token: 'ya29.send', expires_in: 3600 } },
    ]);
    const key = JSON.stringify({ ...ACCOUNT, client_email: 'send@x.iam.gserviceaccount.com' });
    const authorized = await vertexProvider.authorize!(build({ key }), {
      channel: channel(),
      key,
      transport: transport as Transport,
    });
    expect(authorized.headers.authorization).toBe('Bearer ya29.send');
    await vertexProvider.send!(authorized, {
      transport: transport as Transport,
      signal: new AbortController().signal,
      stream: false,
    });
    expect(calls.at(-1)?.url).toBe(authorized.url);
  });
});

describe('errors', () => {
  it('reads Google’s error shape', () => {
    const text = JSON.stringify({
      error: { code: 403, message: 'Permission denied on resource', status: 'PERMISSION_DENIED' },
    });
    expect(parseVertexError(403, text)).toMatchObject({
      status: 403,
      message: 'Permission denied on resource',
      code: 'PERMISSION_DENIED',
    });
  });

  it('reads Claude’s own errors that come through rawPredict', () => {
    const text = JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(parseVertexError(529, text)).toEqual({
      status: 529,
      message: 'Overloaded',
      type: 'overloaded_error',
      code: 'overloaded_error',
    });
  });

  it('keeps a text that is no JSON', () => {
    expect(parseVertexError(502, '<html>Bad gateway</html>')).toMatchObject({
      status: 502,
      message: '<html>Bad gateway</html>',
      code: null,
    });
  });
});

/** Feeds an SSE text to the parser in pieces of `size` bytes, the way a network delivers it. */
function events(text: string, size: number) {
  const parser = new SseParser();
  const bytes = new TextEncoder().encode(text);
  const out = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...parser.push(bytes.subarray(i, i + size)));
  return [...out, ...parser.end()];
}

describe('streams', () => {
  const claudeStream = [
    'event: message_start',
    'data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4@20250514","content":[],"usage":{"input_tokens":100,"cache_read_input_tokens":40,"output_tokens":1}}}',
    '',
    'event: content_block_delta',
    'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Sunny é"}}',
    '',
    'event: message_delta',
    'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":30}}',
    '',
    '',
  ].join('\r\n');
  const geminiStream = [
    'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Sunny é"}]}}],"usageMetadata":{"promptTokenCount":150}}',
    '',
    'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"!"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":150,"candidatesTokenCount":25,"thoughtsTokenCount":5}}',
    '',
    '',
  ].join('\n');

  it.each([1, 3, 7, 64])('reads Claude’s usage and text split every %i bytes', (size) => {
    const observer = vertexProvider.streamObserver('claude-messages');
    for (const event of events(claudeStream, size)) observer.observe(event);
    expect(observer.text).toBe('Sunny é');
    expect(observer.usage).toMatchObject({ promptTokens: 140, completionTokens: 30, cachedTokens: 40 });
  });

  it.each([1, 5, 64])('reads Gemini’s usage and text split every %i bytes', (size) => {
    const observer = vertexProvider.streamObserver('gemini-generate');
    for (const event of events(geminiStream, size)) observer.observe(event);
    expect(observer.text).toBe('Sunny é!');
    expect(observer.usage).toMatchObject({ promptTokens: 150, completionTokens: 30, reasoningTokens: 5 });
  });

  it('reads usage of whole answers by publisher', () => {
    expect(vertexProvider.usageFromBody('claude-messages', { usage: { input_tokens: 3, output_tokens: 4 } })).toEqual({
      promptTokens: 3,
      completionTokens: 4,
    });
    expect(
      vertexProvider.usageFromBody('gemini-generate', {
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4 },
      }),
    ).toEqual({ promptTokens: 3, completionTokens: 4 });
  });
});
