import { describe, expect, it } from 'vitest';
import { convertRequest, convertResponse, convertStream } from '../../convert/index.ts';
import { SseParser } from '../../sse.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { cohereProvider } from './index.ts';

const ctx = { model: 'command-a-03-2025', upstreamModel: 'command-a-03-2025', stream: true };

function channel(partial: Partial<ChannelSnapshot> = {}): ChannelSnapshot {
  return {
    id: 1,
    type: 34,
    name: 'c',
    status: 1,
    baseUrl: '',
    keys: ['k'],
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
    ...partial,
  };
}

/** A real Cohere v2 chat stream with a tool call, as its SSE bytes. */
const TOOL_STREAM = [
  [
    'message-start',
    {
      id: 'a1',
      type: 'message-start',
      delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } },
    },
  ],
  ['tool-plan-delta', { type: 'tool-plan-delta', delta: { message: { tool_plan: 'I will look up ' } } }],
  ['tool-plan-delta', { type: 'tool-plan-delta', delta: { message: { tool_plan: 'the weather.' } } }],
  [
    'tool-call-start',
    {
      type: 'tool-call-start',
      index: 0,
      delta: {
        message: {
          tool_calls: { id: 'get_weather_abc', type: 'function', function: { name: 'get_weather', arguments: '' } },
        },
      },
    },
  ],
  [
    'tool-call-delta',
    { type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: '{"city":' } } } } },
  ],
  [
    'tool-call-delta',
    { type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: '"Paris"}' } } } } },
  ],
  ['tool-call-end', { type: 'tool-call-end', index: 0 }],
  [
    'message-end',
    {
      type: 'message-end',
      delta: {
        finish_reason: 'TOOL_CALL',
        usage: {
          billed_units: { input_tokens: 31, output_tokens: 12 },
          tokens: { input_tokens: 980, output_tokens: 40 },
        },
      },
    },
  ],
]
  .map(([type, data]) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`)
  .join('');

/** The stream's bytes cut into 7-byte pieces, so events, lines and JSON split anywhere. */
function decode(text: string) {
  const bytes = new TextEncoder().encode(text);
  const parser = new SseParser();
  const events = [];
  for (let i = 0; i < bytes.length; i += 7) events.push(...parser.push(bytes.slice(i, i + 7)));
  return [...events, ...parser.end()];
}

describe('Cohere provider', () => {
  it('serves chat, embeddings and rerank clients in its own v2 formats', () => {
    expect(cohereProvider.nativeFormat('openai-chat')).toBe('cohere-chat');
    expect(cohereProvider.nativeFormat('claude-messages')).toBe('cohere-chat');
    expect(cohereProvider.nativeFormat('openai-embeddings')).toBe('cohere-embed');
    expect(cohereProvider.nativeFormat('rerank')).toBe('cohere-rerank');
    expect(cohereProvider.nativeFormat('openai-images')).toBeUndefined();
  });

  it('posts to /v2/chat, /v2/embed and /v2/rerank with a Bearer key', () => {
    const build = (format: 'cohere-chat' | 'cohere-embed' | 'cohere-rerank', baseUrl = '') =>
      cohereProvider.buildRequest({
        format,
        channel: channel({ baseUrl }),
        key: 'co-key',
        upstreamModel: 'm',
        body: '{}',
        stream: format === 'cohere-chat',
        options: undefined as never,
        clientHeaders: {},
      });
    expect(build('cohere-chat')).toMatchObject({
      url: 'https://api.cohere.ai/v2/chat',
      headers: { authorization: 'Bearer co-key', accept: 'text/event-stream' },
    });
    expect(build('cohere-embed', 'http://mock/').url).toBe('http://mock/v2/embed');
    expect(build('cohere-rerank').url).toBe('https://api.cohere.ai/v2/rerank');
  });

  it('bills from the billed units, the raw tokens only when no billed units came', () => {
    const usage = {
      billed_units: { input_tokens: 10, output_tokens: 4 },
      tokens: { input_tokens: 200, output_tokens: 4 },
      cached_tokens: 3,
    };
    expect(cohereProvider.usageFromBody('cohere-chat', { usage })).toEqual({
      promptTokens: 10,
      completionTokens: 4,
      cachedTokens: 3,
    });
    expect(
      cohereProvider.usageFromBody('cohere-chat', { usage: { tokens: { input_tokens: 7, output_tokens: 2 } } }),
    ).toEqual({
      promptTokens: 7,
      completionTokens: 2,
    });
    expect(cohereProvider.usageFromBody('cohere-embed', { meta: { billed_units: { input_tokens: 5 } } })).toEqual({
      promptTokens: 5,
      completionTokens: 0,
    });
    // Search units are not tokens: the relay estimates (or charges the per-call price).
    expect(
      cohereProvider.usageFromBody('cohere-rerank', { meta: { billed_units: { search_units: 1 } } }),
    ).toBeUndefined();
  });

  it('reads Cohere errors ({id, message} or {message}) and plain text', () => {
    expect(cohereProvider.parseError(401, '{"id":"e1","message":"invalid api token"}')).toEqual({
      status: 401,
      message: 'invalid api token',
      type: 'authentication_error',
      code: null,
    });
    expect(cohereProvider.parseError(429, '{"message":"too many tokens"}')).toMatchObject({ type: 'rate_limit_error' });
    expect(cohereProvider.parseError(502, '<html>bad gateway</html>')).toMatchObject({
      message: '<html>bad gateway</html>',
    });
    expect(cohereProvider.parseError(500, '')).toMatchObject({ message: 'upstream answered HTTP 500' });
  });

  it('observes a stream split at awkward places: plan text, tool calls and usage', () => {
    const observer = cohereProvider.streamObserver('cohere-chat');
    for (const event of decode(TOOL_STREAM)) observer.observe(event);
    expect(observer.text).toBe('I will look up the weather.');
    expect(observer.toolCalls).toBe(1);
    expect(observer.usage).toEqual({ promptTokens: 31, completionTokens: 12 });
  });
});

describe('Cohere chat conversion', () => {
  it('turns an OpenAI chat with tools and tool results into a v2 chat', () => {
    const request = convertRequest(
      'openai-chat',
      'cohere-chat',
      {
        model: 'command-a-03-2025',
        stream: true,
        max_completion_tokens: 100,
        top_p: 0.9,
        stop: 'END',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
          {
            role: 'assistant',
            content: null,
            reasoning_content: 'I will call the tool.',
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        ],
        tools: [
          {
            type: 'function',
            function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
          },
        ],
        tool_choice: 'required',
      },
      ctx,
    );
    expect(request).toEqual({
      model: 'command-a-03-2025',
      stream: true,
      max_tokens: 100,
      p: 0.9,
      stop_sequences: ['END'],
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        {
          role: 'assistant',
          tool_plan: 'I will call the tool.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        },
      ],
      tool_choice: 'REQUIRED',
    });
  });

  it('turns a whole v2 answer into an OpenAI one, tool calls and usage included', () => {
    const answer = convertResponse(
      'cohere-chat',
      'openai-chat',
      {
        id: 'r1',
        finish_reason: 'TOOL_CALL',
        message: {
          role: 'assistant',
          tool_plan: 'Looking it up.',
          tool_calls: [
            { id: 'get_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        usage: {
          billed_units: { input_tokens: 20, output_tokens: 9 },
          tokens: { input_tokens: 500, output_tokens: 9 },
        },
      },
      ctx,
    );
    expect(answer.choices).toEqual([
      {
        index: 0,
        finish_reason: 'tool_calls',
        message: {
          role: 'assistant',
          content: null,
          reasoning_content: 'Looking it up.',
          tool_calls: [
            { id: 'get_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
      },
    ]);
    expect(answer.usage).toEqual({ prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 });
    const text = convertResponse(
      'cohere-chat',
      'openai-chat',
      {
        id: 'r2',
        finish_reason: 'MAX_TOKENS',
        message: { role: 'assistant', content: [{ type: 'text', text: 'Hi' }] },
      },
      ctx,
    );
    expect(text.choices[0]).toMatchObject({ message: { content: 'Hi' }, finish_reason: 'length' });
  });

  it('streams tool calls as OpenAI chunks, usage last', () => {
    const converter = convertStream('cohere-chat', 'openai-chat', ctx)!;
    const chunks = [...decode(TOOL_STREAM).flatMap((e) => converter.push(e)), ...converter.end()].map((e) =>
      JSON.parse(e.data),
    );
    const deltas = chunks.filter((c) => c.choices.length > 0).map((c) => c.choices[0].delta);
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe('I will look up the weather.');
    expect(deltas.flatMap((d) => d.tool_calls ?? [])).toEqual([
      { index: 0, id: 'get_weather_abc', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 0, function: { arguments: '{"city":' } },
      { index: 0, function: { arguments: '"Paris"}' } },
    ]);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 31, completion_tokens: 12 } });
  });

  it('closes a stream cut before message-end', () => {
    const converter = convertStream('cohere-chat', 'openai-chat', ctx)!;
    converter.push({
      event: 'content-delta',
      data: '{"type":"content-delta","index":0,"delta":{"message":{"content":{"text":"Hel"}}}}',
    });
    const ending = converter.end().map((e) => JSON.parse(e.data));
    expect(ending).toHaveLength(1);
    expect(ending[0].choices[0].finish_reason).toBe('stop');
  });
});

describe('Cohere embed and rerank conversion', () => {
  it('embeds OpenAI input as search documents, answering base64 when the client asked for it', () => {
    const embedCtx = { ...ctx, model: 'embed-v4.0', upstreamModel: 'embed-v4.0', stream: false };
    expect(
      convertRequest(
        'openai-embeddings',
        'cohere-embed',
        { model: 'embed-v4.0', input: 'hi', encoding_format: 'base64', dimensions: 256 },
        embedCtx,
      ),
    ).toEqual({
      model: 'embed-v4.0',
      texts: ['hi'],
      input_type: 'search_document',
      embedding_types: ['float'],
      output_dimension: 256,
    });
    const answer = convertResponse(
      'cohere-embed',
      'openai-embeddings',
      { id: 'e', embeddings: { float: [[0.5, -1]] }, texts: ['hi'], meta: { billed_units: { input_tokens: 1 } } },
      embedCtx,
    );
    expect(answer.data[0].embedding).toBe(Buffer.from(new Float32Array([0.5, -1]).buffer).toString('base64'));
    expect(answer.usage).toEqual({ prompt_tokens: 1, total_tokens: 1 });
    expect(() => convertRequest('openai-embeddings', 'cohere-embed', { model: 'e', input: [1, 2] }, embedCtx)).toThrow(
      /text input only/,
    );
  });

  it('reranks Jina-style documents as strings, giving them back when asked', () => {
    const rerankCtx = { model: 'rerank-v3.5', upstreamModel: 'rerank-v3.5', stream: false };
    expect(
      convertRequest(
        'rerank',
        'cohere-rerank',
        { model: 'rerank-v3.5', query: 'q', documents: ['a', { text: 'b' }], top_n: 1, return_documents: true },
        rerankCtx,
      ),
    ).toEqual({ model: 'rerank-v3.5', query: 'q', documents: ['a', 'b'], top_n: 1 });
    const answer = convertResponse(
      'cohere-rerank',
      'rerank',
      { id: 'x', results: [{ index: 1, relevance_score: 0.9 }], meta: { billed_units: { search_units: 1 } } },
      rerankCtx,
    );
    expect(answer).toEqual({
      id: 'x',
      model: 'rerank-v3.5',
      results: [{ index: 1, relevance_score: 0.9, document: { text: 'b' } }],
      meta: { billed_units: { search_units: 1 } },
    });
  });
});
