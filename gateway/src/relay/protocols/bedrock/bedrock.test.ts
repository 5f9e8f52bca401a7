import type { IncomingHttpHeaders } from 'node:http';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import type { MessageHeaders } from '@smithy/types';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { describe, expect, it } from 'vitest';
import { findOptionDefinition, type OptionsService } from '../../../domain/options/index.ts';
import { AppError } from '../../../errors.ts';
import type { Transport, UpstreamResponse } from '../../transport.ts';
import type { ChannelSnapshot, WireFormat } from '../../types.ts';
import { bedrockProvider } from './index.ts';
import { parseBedrockKey } from './key.ts';
import { bedrockModelId, geographyOf, isClaudeModel } from './models.ts';

const options = {
  get: (key: string) => findOptionDefinition(key)?.default,
  getBoolean: (key: string) => findOptionDefinition(key)?.default === 'true',
  getNumber: (key: string) => Number(findOptionDefinition(key)?.default),
  getJson: (key: string) => JSON.parse(findOptionDefinition(key)?.default ?? 'null'),
} as unknown as OptionsService;

const channel = (baseUrl = ''): ChannelSnapshot => ({
  id: 1,
  type: 33,
  name: 'aws',
  status: 1,
  baseUrl,
  keys: [],
  multiKeyMode: 'random',
  models: [],
  groups: [],
  priority: 0,
  weight: 0,
  tag: null,
  autoBan: true,
  other: '',
  openaiOrganization: null,
  testModel: null,
});

const KEY = 'AKIAEXAMPLE|secret/key+1|us-west-2';

const build = (format: WireFormat, upstreamModel: string, stream = false, key = KEY, baseUrl = '') =>
  bedrockProvider.buildRequest({
    format,
    channel: channel(baseUrl),
    key,
    upstreamModel,
    body: '{"messages":[]}',
    stream,
    options,
    clientHeaders: {},
  });

const prepare = (body: Record<string, unknown>, model: string, clientHeaders: IncomingHttpHeaders = {}) =>
  bedrockProvider.prepareBody('claude-messages', body, {
    channel: channel(),
    model,
    upstreamModel: model,
    stream: false,
    options,
    clientHeaders,
  });

describe('Bedrock keys', () => {
  it('reads an access key pair with its region, or a Bedrock API key with its region', () => {
    expect(parseBedrockKey(' AKIA | sec/ret+ | eu-central-1 ')).toEqual({
      kind: 'sigv4',
      credentials: { accessKeyId: 'AKIA', secretAccessKey: 'sec/ret+' },
      region: 'eu-central-1',
    });
    expect(parseBedrockKey('ABSKapikey==|us-gov-west-1')).toEqual({
      kind: 'api-key',
      apiKey: 'ABSKapikey==',
      region: 'us-gov-west-1',
    });
  });

  it.each([
    ['AKIA', '1 part(s)'],
    ['AKIA|secret|us-east-1|extra', '4 part(s)'],
    ['AKIA||us-east-1', 'a part is empty'],
    ['AKIA|secret', '"secret" is not an AWS region'],
  ])('refuses %s with a stable code (%s)', (key, detail) => {
    const error = (() => {
      try {
        parseBedrockKey(key);
      } catch (caught) {
        return caught;
      }
    })() as AppError;
    expect(error).toBeInstanceOf(AppError);
    expect([error.code, error.status]).toEqual(['channel:key_malformed', 401]);
    expect(error.message).toContain(detail);
  });
});

describe('Bedrock model ids', () => {
  it('maps public Claude names to Bedrock ids, with the region’s inference profile where one is needed', () => {
    expect(bedrockModelId('claude-3-haiku-20240307', 'us-east-1')).toBe('anthropic.claude-3-haiku-20240307-v1:0');
    expect(bedrockModelId('claude-3-5-sonnet-20241022', 'us-east-1')).toBe('anthropic.claude-3-5-sonnet-20241022-v2:0');
    expect(bedrockModelId('claude-sonnet-4-20250514', 'us-east-1')).toBe('us.anthropic.claude-sonnet-4-20250514-v1:0');
    expect(bedrockModelId('claude-sonnet-4-5-20250929', 'eu-west-1')).toBe(
      'eu.anthropic.claude-sonnet-4-5-20250929-v1:0',
    );
    expect(bedrockModelId('claude-haiku-4-5-20251001', 'ap-northeast-1')).toBe(
      'apac.anthropic.claude-haiku-4-5-20251001-v1:0',
    );
    expect(bedrockModelId('claude-opus-4-1-20250805', 'us-west-2')).toBe('us.anthropic.claude-opus-4-1-20250805-v1:0');
    expect(bedrockModelId('claude-3-7-sonnet-20250219', 'us-gov-west-1')).toBe(
      'us-gov.anthropic.claude-3-7-sonnet-20250219-v1:0',
    );
  });

  it('passes ids in Bedrock form, already prefixed ids and ARNs as they are; prefixes bare profile-only ids', () => {
    expect(bedrockModelId('amazon.nova-pro-v1:0', 'eu-west-1')).toBe('amazon.nova-pro-v1:0');
    expect(bedrockModelId('eu.anthropic.claude-sonnet-4-20250514-v1:0', 'us-east-1')).toBe(
      'eu.anthropic.claude-sonnet-4-20250514-v1:0',
    );
    expect(bedrockModelId('anthropic.claude-sonnet-4-20250514-v1:0', 'us-east-2')).toBe(
      'us.anthropic.claude-sonnet-4-20250514-v1:0',
    );
    expect(bedrockModelId('meta.llama3-3-70b-instruct-v1:0', 'us-east-1')).toBe('us.meta.llama3-3-70b-instruct-v1:0');
    const arn = 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc';
    expect(bedrockModelId(arn, 'us-east-1')).toBe(arn);
    // No geography known for the region: the id as it is.
    expect(bedrockModelId('claude-sonnet-4-20250514', 'ca-central-1')).toBe('anthropic.claude-sonnet-4-20250514-v1:0');
    expect([geographyOf('sa-east-1'), geographyOf('eu-north-1')]).toEqual([undefined, 'eu']);
  });

  it('knows Claude by its public name or any Bedrock form', () => {
    expect(
      ['claude-3-haiku-20240307', 'anthropic.claude-v2', 'apac.anthropic.claude-3-5-sonnet-20240620-v1:0'].map(
        isClaudeModel,
      ),
    ).toEqual([true, true, true]);
    expect(
      ['amazon.nova-pro-v1:0', 'us.meta.llama3-2-1b-instruct-v1:0', 'mistral.mistral-large-2407-v1:0'].map(
        isClaudeModel,
      ),
    ).toEqual([false, false, false]);
  });
});

describe('Bedrock provider: formats and requests', () => {
  it('speaks Claude Messages to Claude models and Converse to the rest, for chat-like formats only', () => {
    expect(bedrockProvider.nativeFormat('claude-messages', 'claude-sonnet-4-20250514')).toBe('claude-messages');
    expect(bedrockProvider.nativeFormat('openai-chat', 'us.anthropic.claude-sonnet-4-20250514-v1:0')).toBe(
      'claude-messages',
    );
    expect(bedrockProvider.nativeFormat('gemini-generate', 'amazon.nova-lite-v1:0')).toBe('bedrock-converse');
    expect(bedrockProvider.nativeFormat('claude-messages', 'meta.llama3-1-70b-instruct-v1:0')).toBe('bedrock-converse');
    expect(bedrockProvider.nativeFormat('openai-embeddings', 'amazon.titan-embed-text-v2:0')).toBeUndefined();
  });

  it('puts a Claude body in Bedrock’s form: no model or stream, the Bedrock version, the client’s betas', () => {
    const body = {
      model: 'claude-sonnet-4-20250514',
      stream: true,
      max_tokens: 4096,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [{ role: 'user', content: 'hi' }],
    };
    const prepared = prepare(body, 'claude-sonnet-4-20250514', { 'anthropic-beta': 'a-1, b-2' });
    const { model: _model, stream: _stream, ...rest } = body;
    expect(prepared).toEqual({
      body: { anthropic_version: 'bedrock-2023-05-31', ...rest, anthropic_beta: ['a-1', 'b-2'] },
      upstreamModel: 'claude-sonnet-4-20250514',
    });
    // Claude's defaults and thinking adapter still apply.
    expect(prepare({ messages: [] }, 'claude-3-7-sonnet-20250219-thinking')).toMatchObject({
      body: { max_tokens: 8192, thinking: { type: 'enabled' } },
      upstreamModel: 'claude-3-7-sonnet-20250219',
    });
  });

  it.each([
    ['claude-messages', false, '/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/invoke', 'application/json'],
    [
      'claude-messages',
      true,
      '/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/invoke-with-response-stream',
      'application/vnd.amazon.eventstream',
    ],
    ['bedrock-converse', false, '/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse', 'application/json'],
    [
      'bedrock-converse',
      true,
      '/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream',
      'application/vnd.amazon.eventstream',
    ],
  ] as const)('%s (stream %s) posts to %s', (format, stream, path, accept) => {
    const request = build(format, 'claude-sonnet-4-20250514', stream);
    expect(request).toMatchObject({
      url: `https://bedrock-runtime.us-west-2.amazonaws.com${path}`,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
    });
    expect(request.headers.authorization).toBeUndefined();
  });

  it('uses the channel’s base URL when set, and a Bedrock API key as a Bearer token', () => {
    const request = build(
      'bedrock-converse',
      'amazon.nova-pro-v1:0',
      false,
      'ABSKkey|eu-west-1',
      'http://proxy.local/aws/',
    );
    expect(request.url).toBe('http://proxy.local/aws/model/amazon.nova-pro-v1%3A0/converse');
    expect(request.headers.authorization).toBe('Bearer ABSKkey');
    expect(() => build('openai-embeddings', 'amazon.titan-embed-text-v2:0')).toThrow(
      'no operation for openai-embeddings',
    );
  });

  it('signs with SigV4 for an access key pair, and leaves an API-key request as it is', async () => {
    const transport = {} as Transport;
    const request = build('claude-messages', 'claude-3-haiku-20240307');
    const signed = await bedrockProvider.authorize?.(request, { channel: channel(), key: KEY, transport });
    expect(signed?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=accept;content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
    const bearer = build('claude-messages', 'claude-3-haiku-20240307', false, 'ABSKkey|us-east-1');
    expect(await bedrockProvider.authorize?.(bearer, { channel: channel(), key: 'ABSKkey|us-east-1', transport })).toBe(
      bearer,
    );
  });
});

describe('Bedrock provider: errors', () => {
  it('names the error by x-amzn-errortype, folded into the body by send', async () => {
    const answered = (status: number, headers: Record<string, string>, text: string) =>
      ({
        send: async () => ({ status, headers, body: { text: async () => text } }) as unknown as UpstreamResponse,
      }) as unknown as Transport;
    const input = { signal: new AbortController().signal, stream: false };
    const request = build('bedrock-converse', 'amazon.nova-pro-v1:0');
    const refused = await bedrockProvider.send?.(request, {
      ...input,
      transport: answered(
        403,
        { 'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
        '{"message":"The request signature we calculated does not match"}',
      ),
    });
    const text = (await refused?.body.text()) ?? '';
    expect(bedrockProvider.parseError(403, text)).toEqual({
      status: 403,
      message: 'The request signature we calculated does not match',
      type: 'InvalidSignatureException',
      code: 'InvalidSignatureException',
    });
    // A success passes untouched.
    const ok = { status: 200, headers: {}, body: {} } as unknown as UpstreamResponse;
    expect(
      await bedrockProvider.send?.(request, { ...input, transport: { send: async () => ok } as unknown as Transport }),
    ).toBe(ok);
  });

  it('falls back to the type of the status, and to the text when it is not JSON', () => {
    expect(
      bedrockProvider.parseError(429, '{"message":"Too many requests, please wait before trying again."}'),
    ).toEqual({
      status: 429,
      message: 'Too many requests, please wait before trying again.',
      type: 'ThrottlingException',
      code: 'ThrottlingException',
    });
    expect(
      bedrockProvider.parseError(400, '{"Message":"bad","__type":"com.amazon.coral.validate#ValidationException"}'),
    ).toMatchObject({
      message: 'bad',
      type: 'ValidationException',
    });
    expect(bedrockProvider.parseError(502, '<html>bad gateway</html>')).toEqual({
      status: 502,
      message: '<html>bad gateway</html>',
      type: 'upstream_error',
      code: 'upstream_error',
    });
    expect(bedrockProvider.parseError(503, '').message).toBe('upstream answered HTTP 503');
  });
});

describe('Bedrock provider: usage', () => {
  it('reads Claude’s usage from InvokeModel and Converse’s usage, cache reads and writes added to the prompt', () => {
    expect(
      bedrockProvider.usageFromBody('claude-messages', {
        usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 },
      }),
    ).toEqual({ promptTokens: 130, completionTokens: 5, cachedTokens: 100, cacheCreationTokens: 20 });
    expect(
      bedrockProvider.usageFromBody('bedrock-converse', {
        usage: {
          inputTokens: 10,
          outputTokens: 5,
          totalTokens: 135,
          cacheReadInputTokens: 100,
          cacheWriteInputTokens: 20,
        },
      }),
    ).toEqual({ promptTokens: 130, completionTokens: 5, cachedTokens: 100, cacheCreationTokens: 20 });
    expect(bedrockProvider.usageFromBody('bedrock-converse', { output: {} })).toBeUndefined();
  });
});

describe('Bedrock provider: streams', () => {
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const headers = (type: string): MessageHeaders => ({
    ':event-type': { type: 'string', value: type },
    ':content-type': { type: 'string', value: 'application/json' },
    ':message-type': { type: 'string', value: 'event' },
  });
  const frame = (type: string, payload: unknown) =>
    codec.encode({ headers: headers(type), body: fromUtf8(JSON.stringify(payload)) });
  const chunk = (event: Record<string, unknown>) =>
    frame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: 'abcd' });
  const exception = codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: 'modelStreamErrorException' },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: fromUtf8('{"message":"The model failed"}'),
  });
  const decoder = () => {
    const found = bedrockProvider.streamDecoder?.('application/vnd.amazon.eventstream');
    if (!found) throw new Error('no decoder');
    return found;
  };

  it('decodes InvokeModel chunks into Claude SSE events, usage from Claude’s events', () => {
    const bytes = Buffer.concat([
      chunk({ type: 'message_start', message: { usage: { input_tokens: 12, output_tokens: 1 } } }),
      chunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } }),
      chunk({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 7 } }),
      chunk({
        type: 'message_stop',
        'amazon-bedrock-invocationMetrics': { inputTokenCount: 99, outputTokenCount: 99 },
      }),
    ]);
    const stream = decoder();
    const events = [...stream.push(bytes.subarray(0, 50)), ...stream.push(bytes.subarray(50)), ...stream.end()];
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_delta',
      'message_delta',
      'message_stop',
    ]);
    expect(JSON.parse(events[1]?.data ?? '')).toEqual({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: 'Hi' },
    });
    const observer = bedrockProvider.streamObserver('claude-messages');
    for (const event of events) observer.observe(event);
    expect([observer.text, observer.usage]).toEqual(['Hi', { promptTokens: 12, completionTokens: 7 }]);
  });

  it('falls back to Bedrock’s invocation metrics when Claude’s events carry no usage', () => {
    const observer = bedrockProvider.streamObserver('claude-messages');
    const stream = decoder();
    for (const event of stream.push(
      chunk({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 8, outputTokenCount: 3 } }),
    ))
      observer.observe(event);
    expect(observer.usage).toEqual({ promptTokens: 8, completionTokens: 3 });
  });

  it('decodes ConverseStream events by type, counting text, tool uses and metadata usage', () => {
    const stream = decoder();
    const events = stream.push(
      Buffer.concat([
        frame('messageStart', { role: 'assistant', p: 'ab' }),
        frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } }),
        frame('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't1', name: 'f' } } }),
        frame('metadata', { usage: { inputTokens: 20, outputTokens: 6, cacheReadInputTokens: 4 } }),
      ]),
    );
    expect(events.map((e) => e.event)).toEqual(['messageStart', 'contentBlockDelta', 'contentBlockStart', 'metadata']);
    const observer = bedrockProvider.streamObserver('bedrock-converse');
    for (const event of events) observer.observe(event);
    expect([observer.text, observer.toolCalls, observer.usage]).toEqual([
      'Hello',
      1,
      { promptTokens: 24, completionTokens: 6, cachedTokens: 4 },
    ]);
  });

  it('gives out the events before an exception, then fails naming it', () => {
    const stream = decoder();
    const events = stream.push(Buffer.concat([frame('contentBlockDelta', { delta: { text: 'Hel' } }), exception]));
    expect(events).toHaveLength(1);
    expect(() => stream.end()).toThrow('modelStreamErrorException: The model failed');
    expect(bedrockProvider.streamDecoder?.('application/json')).toBeUndefined();
  });
});
