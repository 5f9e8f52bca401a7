import { describe, expect, it, vi } from 'vitest';
import type { ChannelSnapshot } from '../../types.ts';
import { testChannel } from '../test-support.ts';
import { openAIProvider } from './index.ts';

const channel = (partial: Partial<ChannelSnapshot> = {}): ChannelSnapshot => testChannel(partial);

const build = (
  partial: Partial<ChannelSnapshot>,
  format: Parameters<typeof openAIProvider.buildRequest>[0]['format'] = 'openai-chat',
) =>
  openAIProvider.buildRequest({
    format,
    channel: channel(partial),
    key: 'sk-up',
    upstreamModel: 'gpt-4o',
    body: '{}',
    stream: false,
    // The OpenAI protocol reads neither options nor client headers.
    options: undefined as never,
    clientHeaders: {},
  });

describe('OpenAI provider', () => {
  it('builds URLs and auth for OpenAI, compatible types, Azure and custom channels', () => {
    const openai = build({ baseUrl: 'https://api.example/', openaiOrganization: 'org-1' });
    expect(openai).toMatchObject({
      url: 'https://api.example/v1/chat/completions',
      headers: { authorization: 'Bearer sk-up', 'openai-organization': 'org-1', 'content-type': 'application/json' },
    });
    expect(build({ type: 1 }).url).toBe('https://api.openai.com/v1/chat/completions');
    expect(build({ type: 17, baseUrl: 'https://dash.example' }, 'openai-embeddings').url).toBe(
      'https://dash.example/compatible-mode/v1/embeddings',
    );
    // The registry's API prefix: ZhipuV4 under /api/paas/v4, Perplexity at its root.
    expect(build({ type: 26 }).url).toBe('https://open.bigmodel.cn/api/paas/v4/chat/completions');
    expect(build({ type: 27 }).url).toBe('https://api.perplexity.ai/chat/completions');
    const azure = build({ type: 3, baseUrl: 'https://res.openai.azure.com', other: '2024-10-21' });
    expect(azure.url).toBe(
      'https://res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21',
    );
    expect(azure.headers).toMatchObject({ 'api-key': 'sk-up' });
    expect(azure.headers.authorization).toBeUndefined();
    expect(build({ type: 8, baseUrl: 'https://proxy.example/run/{model}' }).url).toBe(
      'https://proxy.example/run/gpt-4o',
    );
    expect(() => build({}, 'claude-messages')).toThrow(/no operation/);
  });

  it('reads usage from chat, Responses and embeddings bodies', () => {
    expect(
      openAIProvider.usageFromBody('openai-chat', {
        usage: {
          prompt_tokens: 10,
          completion_tokens: 5,
          prompt_tokens_details: { cached_tokens: 4 },
          completion_tokens_details: { reasoning_tokens: 2 },
        },
      }),
    ).toEqual({ promptTokens: 10, completionTokens: 5, cachedTokens: 4, reasoningTokens: 2 });
    expect(
      openAIProvider.usageFromBody('openai-responses', {
        usage: { input_tokens: 7, output_tokens: 3, input_tokens_details: { cached_tokens: 0 } },
      }),
    ).toEqual({ promptTokens: 7, completionTokens: 3 });
    expect(openAIProvider.usageFromBody('openai-embeddings', { usage: { prompt_tokens: 9, total_tokens: 9 } })).toEqual(
      {
        promptTokens: 9,
        completionTokens: 0,
      },
    );
    expect(openAIProvider.usageFromBody('openai-moderations', { results: [] })).toBeUndefined();
  });

  it('follows a chat stream: text, tool calls and the final usage chunk', () => {
    const observer = openAIProvider.streamObserver('openai-chat');
    for (const data of [
      '{"choices":[{"delta":{"role":"assistant","content":"Hel"}}]}',
      '{"choices":[{"delta":{"content":"lo"}}]}',
      '{"choices":[{"delta":{"tool_calls":[{"id":"call_1","function":{"name":"f","arguments":""}}]}}]}',
      '{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}',
      '[DONE]',
    ]) {
      observer.observe({ data });
    }
    expect(observer.text).toBe('Hello');
    expect(observer.toolCalls).toBe(1);
    expect(observer.usage).toEqual({ promptTokens: 3, completionTokens: 2 });
    const responses = openAIProvider.streamObserver('openai-responses');
    responses.observe({
      event: 'response.output_text.delta',
      data: '{"type":"response.output_text.delta","delta":"Hi"}',
    });
    responses.observe({
      data: '{"type":"response.completed","response":{"usage":{"input_tokens":4,"output_tokens":1}}}',
    });
    expect([responses.text, responses.usage]).toEqual(['Hi', { promptTokens: 4, completionTokens: 1 }]);
  });

  it('parses only the stream events that can carry usage or tool calls, the text of the rest when asked for', () => {
    const observer = openAIProvider.streamObserver('openai-chat');
    const parse = vi.spyOn(JSON, 'parse');
    for (const data of [
      '{"choices":[{"delta":{"content":"Hel"}}]}',
      '{"choices":[{"delta":{"content":"lo \\"usage\\""}}]}',
      '{"choices":[{"delta":{"content":"!","tool_calls":[{"id":"call_1"}]}}]}',
      '{"choices":[{"delta":{"reasoning_content":" hm"}}]}',
      '[DONE]',
    ]) {
      observer.observe({ data });
    }
    const whileStreaming = parse.mock.calls.length;
    const text = observer.text;
    parse.mockRestore();
    // The tool call's event only: a quoted "usage" inside content is escaped, not a key.
    expect(whileStreaming).toBe(1);
    expect(observer.toolCalls).toBe(1);
    expect(observer.usage).toBeUndefined();
    expect(text).toBe('Hello "usage"! hm');
  });

  it('parses upstream errors in OpenAI shape or as text', () => {
    expect(
      openAIProvider.parseError(
        429,
        '{"error":{"message":"Rate limit","type":"requests","code":"rate_limit_exceeded"}}',
      ),
    ).toEqual({
      status: 429,
      message: 'Rate limit',
      type: 'requests',
      code: 'rate_limit_exceeded',
    });
    expect(openAIProvider.parseError(502, '<html>bad gateway</html>')).toMatchObject({
      status: 502,
      message: '<html>bad gateway</html>',
      code: null,
    });
    expect(openAIProvider.parseError(500, '')).toMatchObject({ message: 'upstream answered HTTP 500' });
  });
});

describe('VolcEngine Ark', () => {
  it('sends bot applications to /api/v3/bots and model endpoints to /api/v3', () => {
    const request = (upstreamModel: string) =>
      openAIProvider.buildRequest({
        format: 'openai-chat',
        channel: channel({ type: 45 }),
        key: 'ark',
        upstreamModel,
        body: '{}',
        stream: false,
        options: undefined as never,
        clientHeaders: {},
      }).url;
    expect(request('bot-20250101-abc')).toBe('https://ark.cn-beijing.volces.com/api/v3/bots/chat/completions');
    expect(request('doubao-pro-32k')).toBe('https://ark.cn-beijing.volces.com/api/v3/chat/completions');
  });
});
