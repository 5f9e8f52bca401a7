import { describe, expect, it } from 'vitest';
import { channelType } from '../../../domain/channels/registry.ts';
import type { ChannelSnapshot, WireFormat } from '../../types.ts';
import { testChannel } from '../test-support.ts';
import { openAIProvider } from './index.ts';
import { azureDeployment } from './request.ts';
import { keepStrictFields, toolCallId } from './strict-fields.ts';

const channel = (partial: Partial<ChannelSnapshot> = {}): ChannelSnapshot => testChannel(partial);

const build = (partial: Partial<ChannelSnapshot>, upstreamModel: string, format: WireFormat, body = '{}') =>
  openAIProvider.buildRequest({
    format,
    channel: channel(partial),
    key: 'tok',
    upstreamModel,
    body,
    stream: false,
    options: undefined as never,
    clientHeaders: {},
  });

describe('Azure deployments', () => {
  it('drop the dots of the model name in the deployment path only (spec doc 2 §9)', () => {
    expect(azureDeployment('gpt-3.5-turbo')).toBe('gpt-35-turbo');
    expect(azureDeployment('gpt-4.1-mini')).toBe('gpt-41-mini');
    expect(azureDeployment('gpt-4o')).toBe('gpt-4o');
    const request = build(
      { type: 3, baseUrl: 'https://res.openai.azure.com', other: '2024-10-21' },
      'gpt-4.1',
      'openai-chat',
      '{"model":"gpt-4.1"}',
    );
    expect(request.url).toBe(
      'https://res.openai.azure.com/openai/deployments/gpt-41/chat/completions?api-version=2024-10-21',
    );
    expect(request.headers['api-key']).toBe('tok');
    expect(request.body).toBe('{"model":"gpt-4.1"}');
  });

  it('on the v1 API (API version v1), serve every operation under /openai/v1 without a dated version', () => {
    const v1 = { type: 3, baseUrl: 'https://res.openai.azure.com', other: 'v1' };
    const chat = build(v1, 'gpt-4.1', 'openai-chat', '{"model":"gpt-4.1"}');
    expect(chat.url).toBe('https://res.openai.azure.com/openai/v1/chat/completions');
    expect(chat.headers['api-key']).toBe('tok');
    expect(chat.body).toBe('{"model":"gpt-4.1"}');
    expect(build(v1, 'text-embedding-3-small', 'openai-embeddings').url).toBe(
      'https://res.openai.azure.com/openai/v1/embeddings',
    );
    expect(build(v1, 'gpt-5', 'openai-responses').url).toBe('https://res.openai.azure.com/openai/v1/responses');
  });
});

describe('Cloudflare Workers AI', () => {
  it('puts the account id from other into the OpenAI-compatible path', () => {
    const chat = build({ type: 39, other: 'acc123' }, '@cf/meta/llama-3.1-8b-instruct', 'openai-chat');
    expect(chat.url).toBe('https://api.cloudflare.com/client/v4/accounts/acc123/ai/v1/chat/completions');
    expect(chat.headers.authorization).toBe('Bearer tok');
    const embeddings = build(
      { type: 39, other: ' acc123 ', baseUrl: 'http://mock' },
      '@cf/baai/bge-m3',
      'openai-embeddings',
    );
    expect(embeddings.url).toBe('http://mock/client/v4/accounts/acc123/ai/v1/embeddings');
  });

  it('refuses a stored channel without an account id, naming what is missing', () => {
    expect(() => build({ type: 39, other: '' }, 'm', 'openai-chat')).toThrow(
      expect.objectContaining({ code: 'channel:other_required', status: 503 }),
    );
  });
});

describe('Perplexity', () => {
  it('is reached at its root, without /v1', () => {
    expect(build({ type: 27, baseUrl: 'http://mock' }, 'sonar', 'openai-chat').url).toBe(
      'http://mock/chat/completions',
    );
  });
});

describe('Mistral strict fields', () => {
  const fields = channelType(42)!.strictFields!;

  it('sends only the chat fields Mistral accepts, OpenAI spellings renamed', () => {
    const body = {
      model: 'mistral-small-latest',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'ok', reasoning_content: 'thought', reasoning_signature: 'sig' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 50,
      seed: 7,
      user: 'u-1',
      logprobs: true,
      top_logprobs: 2,
      service_tier: 'auto',
      store: false,
      metadata: { a: '1' },
      temperature: 0.2,
      tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
      parallel_tool_calls: false,
    };
    const sent: Record<string, any> = keepStrictFields(fields, 'openai-chat', body);
    expect(sent).toEqual({
      model: 'mistral-small-latest',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'ok' },
      ],
      stream: true,
      max_tokens: 50,
      random_seed: 7,
      temperature: 0.2,
      tools: body.tools,
      parallel_tool_calls: false,
    });
  });

  it('keeps each message to its role’s fields and gives tool calls ids of 9 letters and digits', () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'user', content: 'hi', name: 'ann' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'toolu_01A', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_01A', content: 'ok', name: 'f' },
        { role: 'tool', tool_call_id: 'abcDEF123', content: 'ok' },
      ],
    };
    const sent: Record<string, any> = keepStrictFields(fields, 'openai-chat', body);
    const id = sent.messages[1].tool_calls[0].id;
    expect(id).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(id).toBe(toolCallId('toolu_01A', 9));
    expect(sent.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [{ ...body.messages[1]!.tool_calls![0], id }] },
      { role: 'tool', tool_call_id: id, content: 'ok', name: 'f' },
      // Already in Mistral's form: kept as it is.
      { role: 'tool', tool_call_id: 'abcDEF123', content: 'ok' },
    ]);
  });

  it("keeps the upstream's own spelling over OpenAI's when both are given", () => {
    const sent = keepStrictFields(fields, 'openai-chat', {
      model: 'm',
      messages: [],
      max_tokens: 10,
      max_completion_tokens: 99,
    });
    expect(sent).toEqual({ model: 'm', messages: [], max_tokens: 10 });
  });

  it('trims embeddings too, and leaves other formats alone', () => {
    expect(
      keepStrictFields(fields, 'openai-embeddings', { model: 'mistral-embed', input: 'x', user: 'u', dimensions: 8 }),
    ).toEqual({ model: 'mistral-embed', input: 'x', output_dimension: 8 });
    const moderation = { user: 'u' };
    expect(keepStrictFields(fields, 'openai-moderations', moderation)).toBe(moderation);
  });

  it('is applied when the body is finished, before it is serialised', () => {
    const body = { model: 'm', messages: [], user: 'u' };
    expect(openAIProvider.finishBody?.('openai-chat', body, channel({ type: 42 }), 'sk')).toEqual({
      model: 'm',
      messages: [],
    });
    // Other OpenAI-compatible types send every field.
    expect(openAIProvider.finishBody?.('openai-chat', body, channel({ type: 1 }), 'sk')).toBe(body);
    const request = build({ type: 42 }, 'mistral-small-latest', 'openai-chat');
    expect(request.url).toBe('https://api.mistral.ai/v1/chat/completions');
  });
});
