import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { findOptionDefinition, type OptionsService } from '../../../domain/options/index.ts';
import type { ChannelSnapshot, WireFormat } from '../../types.ts';
import { testChannel } from '../test-support.ts';
import type { ProviderContext } from '../types.ts';
import { anthropicProvider } from './index.ts';

/** Options as the service would give them: the registered defaults, with some values replaced. */
function fakeOptions(values: Record<string, string> = {}): OptionsService {
  const read = (key: string) => {
    const value = values[key] ?? findOptionDefinition(key)?.default;
    if (value === undefined) throw new Error(`unknown option ${key}`);
    return value;
  };
  return {
    get: read,
    getBoolean: (key: string) => read(key) === 'true',
    getNumber: (key: string) => Number(read(key)),
    getJson: (key: string) => JSON.parse(read(key)),
  } as unknown as OptionsService;
}

const channel = (partial: Partial<ChannelSnapshot> = {}): ChannelSnapshot =>
  testChannel({ type: 14, name: 'claude', keys: ['sk-ant'], ...partial });

const context = (upstreamModel: string, options = fakeOptions()): ProviderContext => ({
  channel: channel(),
  model: upstreamModel,
  upstreamModel,
  stream: false,
  options,
  clientHeaders: {},
});

const prepare = (body: Record<string, any>, upstreamModel: string, options?: OptionsService) =>
  anthropicProvider.prepareBody('claude-messages', body, context(upstreamModel, options));

const build = (
  partial: Partial<ChannelSnapshot> = {},
  clientHeaders: IncomingHttpHeaders = {},
  options = fakeOptions(),
  upstreamModel = 'claude-sonnet-4-20250514',
) =>
  anthropicProvider.buildRequest({
    format: 'claude-messages',
    channel: channel(partial),
    key: 'sk-ant-up',
    upstreamModel,
    body: '{}',
    stream: false,
    options,
    clientHeaders,
  });

describe('Anthropic provider: formats', () => {
  it('speaks Claude Messages for every chat-like format and nothing else', () => {
    const formats: WireFormat[] = [
      'openai-chat',
      'openai-responses',
      'claude-messages',
      'gemini-generate',
      'openai-embeddings',
      'openai-images',
      'gemini-embed',
    ];
    expect(formats.map((format) => anthropicProvider.nativeFormat(format))).toEqual([
      'claude-messages',
      'claude-messages',
      'claude-messages',
      'claude-messages',
      undefined,
      undefined,
      undefined,
    ]);
    expect([...anthropicProvider.formats]).toEqual(['claude-messages']);
  });
});

describe('Anthropic provider: prepareBody', () => {
  it('puts the upstream model in the body and keeps the client’s max_tokens', () => {
    const body = { model: 'alias', max_tokens: 100, messages: [] };
    const prepared = prepare(body, 'claude-sonnet-4-20250514');
    expect(prepared).toEqual({
      body: { model: 'claude-sonnet-4-20250514', max_tokens: 100, messages: [] },
      upstreamModel: 'claude-sonnet-4-20250514',
    });
    expect(body.model).toBe('alias');
  });

  it('defaults max_tokens from claude.default_max_tokens: the model, else "default", else 8192', () => {
    expect(prepare({ messages: [] }, 'claude-x').body.max_tokens).toBe(8192);
    const options = fakeOptions({ 'claude.default_max_tokens': '{"default":4000,"claude-opus":32000}' });
    expect(prepare({ messages: [] }, 'claude-opus', options).body.max_tokens).toBe(32000);
    expect(prepare({ messages: [] }, 'claude-haiku', options).body.max_tokens).toBe(4000);
    expect(prepare({ messages: [], max_tokens: 0 }, 'claude-haiku', options).body.max_tokens).toBe(4000);
    expect(
      prepare({ messages: [] }, 'claude-x', fakeOptions({ 'claude.default_max_tokens': '{}' })).body.max_tokens,
    ).toBe(8192);
  });

  it('thinking adapter: strips -thinking, enables thinking with the budget share, drops temperature', () => {
    const prepared = prepare(
      { model: 'x', max_tokens: 10000, temperature: 0.3, top_k: 5, top_p: 0.5, messages: [] },
      'claude-sonnet-4-20250514-thinking',
    );
    expect(prepared).toEqual({
      body: {
        model: 'claude-sonnet-4-20250514',
        max_tokens: 10000,
        thinking: { type: 'enabled', budget_tokens: 8000 },
        messages: [],
      },
      upstreamModel: 'claude-sonnet-4-20250514',
    });
    const share = fakeOptions({ 'claude.thinking_adapter_budget_tokens_percentage': '0.5' });
    expect(prepare({ max_tokens: 4096, messages: [] }, 'claude-opus-4-thinking', share).body.thinking).toEqual({
      type: 'enabled',
      budget_tokens: 2048,
    });
    // The default max_tokens counts for the thinking model too.
    const byModel = fakeOptions({ 'claude.default_max_tokens': '{"default":1,"claude-opus-4-thinking":20000}' });
    expect(prepare({ messages: [] }, 'claude-opus-4-thinking', byModel).body).toMatchObject({
      max_tokens: 20000,
      thinking: { budget_tokens: 16000 },
    });
  });

  it('thinking adapter: a budget under 1024 is raised, and max_tokens makes room for it', () => {
    const prepared = prepare({ max_tokens: 1000, messages: [] }, 'claude-3-7-sonnet-thinking');
    expect(prepared.body).toMatchObject({ max_tokens: 2024, thinking: { type: 'enabled', budget_tokens: 1024 } });
  });

  it('thinking adapter: off when disabled, and the client’s own thinking is kept', () => {
    const off = fakeOptions({ 'claude.thinking_adapter_enabled': 'false' });
    expect(prepare({ max_tokens: 2000, messages: [] }, 'claude-x-thinking', off)).toEqual({
      body: { model: 'claude-x-thinking', max_tokens: 2000, messages: [] },
      upstreamModel: 'claude-x-thinking',
    });
    const own = prepare(
      { max_tokens: 9000, thinking: { type: 'enabled', budget_tokens: 3000 }, temperature: 1, messages: [] },
      'claude-x-thinking',
    );
    expect(own.body).toEqual({
      model: 'claude-x',
      max_tokens: 9000,
      thinking: { type: 'enabled', budget_tokens: 3000 },
      temperature: 1,
      messages: [],
    });
    expect(prepare({ messages: [] }, '-thinking').upstreamModel).toBe('-thinking');
  });

  it('fits a converted thinking budget under the max_tokens the default gives', () => {
    const prepared = prepare({ messages: [], thinking: { type: 'enabled', budget_tokens: 16384 } }, 'claude-x');
    expect(prepared.body).toMatchObject({ max_tokens: 8192 + 16384, thinking: { budget_tokens: 16384 } });
  });
});

describe('Anthropic provider: buildRequest', () => {
  it('posts to {base}/v1/messages without doubling /v1', () => {
    expect(build().url).toBe('https://api.anthropic.com/v1/messages');
    expect(build({ baseUrl: 'https://proxy.example/' }).url).toBe('https://proxy.example/v1/messages');
    expect(build({ baseUrl: 'https://proxy.example/v1/' }).url).toBe('https://proxy.example/v1/messages');
    expect(build({ baseUrl: 'https://api.deepseek.com/anthropic' }).url).toBe(
      'https://api.deepseek.com/anthropic/v1/messages',
    );
    expect(build().method).toBe('POST');
    expect(() =>
      anthropicProvider.buildRequest({
        format: 'openai-chat',
        channel: channel(),
        key: 'k',
        upstreamModel: 'm',
        body: '{}',
        stream: false,
        options: fakeOptions(),
        clientHeaders: {},
      }),
    ).toThrow(/no operation/);
  });

  it('counts tokens at {base}/v1/messages/count_tokens, with a message’s key, version and beta flags', () => {
    const request = anthropicProvider.buildCountTokensRequest?.({
      channel: channel({ baseUrl: 'https://proxy.example/v1' }),
      key: 'sk-ant-up',
      upstreamModel: 'claude-x',
      body: '{"model":"claude-x"}',
      options: fakeOptions(),
      clientHeaders: { 'anthropic-beta': 'token-counting-2024-11-01' },
    });
    expect(request).toEqual({
      url: 'https://proxy.example/v1/messages/count_tokens',
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': 'sk-ant-up',
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'token-counting-2024-11-01',
      },
      body: '{"model":"claude-x"}',
    });
  });

  it('sends the key, the API version (client’s or 2023-06-01) and the client’s beta flags', () => {
    expect(build().headers).toEqual({
      'content-type': 'application/json',
      'x-api-key': 'sk-ant-up',
      'anthropic-version': '2023-06-01',
    });
    const headers = build({}, { 'anthropic-version': '2024-01-01', 'anthropic-beta': 'a-1, b-2' }).headers;
    expect(headers).toMatchObject({ 'anthropic-version': '2024-01-01', 'anthropic-beta': 'a-1,b-2' });
    expect(headers.authorization).toBeUndefined();
  });

  it('adds claude.model_headers_settings for the upstream model, merging beta flags', () => {
    const options = fakeOptions({
      'claude.model_headers_settings': JSON.stringify({
        'claude-sonnet-4-20250514': {
          'anthropic-beta': ['context-1m-2025-08-07', 'a-1'],
          'X-Extra': ['one', 'two'],
          'x-api-key': ['stolen'],
        },
        'other-model': { 'x-other': ['no'] },
      }),
    });
    const headers = build({}, { 'anthropic-beta': 'a-1' }, options).headers;
    expect(headers).toMatchObject({
      'anthropic-beta': 'a-1,context-1m-2025-08-07',
      'x-extra': 'one,two',
      'x-api-key': 'sk-ant-up',
    });
    expect(headers['x-other']).toBeUndefined();
    expect(build({}, {}, options, 'other-model').headers['x-other']).toBe('no');
  });
});

describe('Anthropic provider: usage', () => {
  it('normalises Claude usage: prompt includes cache reads and writes, 1h writes and web searches named', () => {
    expect(
      anthropicProvider.usageFromBody('claude-messages', {
        usage: {
          input_tokens: 10,
          cache_read_input_tokens: 200,
          cache_creation_input_tokens: 50,
          cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 30 },
          output_tokens: 40,
          output_tokens_details: { thinking_tokens: 15 },
          server_tool_use: { web_search_requests: 2, web_fetch_requests: 0 },
        },
      }),
    ).toEqual({
      promptTokens: 260,
      completionTokens: 40,
      cachedTokens: 200,
      cacheCreationTokens: 50,
      cacheCreation1hTokens: 30,
      reasoningTokens: 15,
      webSearchCalls: 2,
    });
    expect(
      anthropicProvider.usageFromBody('claude-messages', { usage: { input_tokens: 3, output_tokens: 4 } }),
    ).toEqual({ promptTokens: 3, completionTokens: 4 });
    expect(anthropicProvider.usageFromBody('claude-messages', { content: [] })).toBeUndefined();
  });

  it('follows a stream: text and thinking, tool calls, usage from message_start then message_delta', () => {
    const observer = anthropicProvider.streamObserver('claude-messages');
    const events: Array<[string, unknown]> = [
      [
        'message_start',
        {
          message: {
            usage: {
              input_tokens: 5,
              cache_read_input_tokens: 100,
              cache_creation_input_tokens: 0,
              output_tokens: 1,
            },
          },
        },
      ],
      ['content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }],
      ['content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm. ' } }],
      ['content_block_start', { index: 1, content_block: { type: 'text', text: '' } }],
      ['ping', {}],
      ['content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Hi' } }],
      ['content_block_start', { index: 2, content_block: { type: 'tool_use', id: 't', name: 'f', input: {} } }],
      ['content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } }],
      [
        'message_delta',
        {
          delta: { stop_reason: 'tool_use' },
          usage: { output_tokens: 30, cache_read_input_tokens: null, server_tool_use: { web_search_requests: 1 } },
        },
      ],
      ['message_stop', {}],
    ];
    const parse = vi.spyOn(JSON, 'parse');
    for (const [type, body] of events) {
      observer.observe({ event: type, data: JSON.stringify({ type, ...(body as object) }) });
    }
    const whileStreaming = parse.mock.calls.length;
    parse.mockRestore();
    // Only the events that can carry usage or start a tool call; the deltas' text is read when asked for.
    expect(whileStreaming).toBe(3);
    expect(observer.text).toBe('Hmm. Hi');
    expect(observer.toolCalls).toBe(1);
    expect(observer.usage).toEqual({ promptTokens: 105, completionTokens: 30, cachedTokens: 100, webSearchCalls: 1 });
  });

  it('has no usage for a stream that reported none', () => {
    const observer = anthropicProvider.streamObserver('claude-messages');
    observer.observe({ event: 'message_start', data: '{"type":"message_start","message":{"id":"m"}}' });
    observer.observe({ event: 'message_stop', data: 'not json' });
    expect(observer.usage).toBeUndefined();
  });
});

describe('Anthropic provider: errors', () => {
  it('parses Claude’s error body, an OpenAI-shaped one, or the text', () => {
    expect(
      anthropicProvider.parseError(
        529,
        '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}',
      ),
    ).toEqual({ status: 529, message: 'Overloaded', type: 'overloaded_error', code: 'overloaded_error' });
    expect(
      anthropicProvider.parseError(429, '{"error":{"message":"Slow","type":"requests","code":"rate_limit_exceeded"}}'),
    ).toEqual({ status: 429, message: 'Slow', type: 'requests', code: 'rate_limit_exceeded' });
    expect(anthropicProvider.parseError(502, '<html>bad gateway</html>')).toEqual({
      status: 502,
      message: '<html>bad gateway</html>',
      type: 'upstream_error',
      code: null,
    });
    expect(anthropicProvider.parseError(500, '').message).toBe('upstream answered HTTP 500');
  });
});
