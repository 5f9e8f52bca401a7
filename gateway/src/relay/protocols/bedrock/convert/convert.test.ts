import { describe, expect, it } from 'vitest';
import { convertRequest, convertResponse, convertStream } from '../../../convert/index.ts';
import type { SseEvent } from '../../../sse.ts';
import { converseAdapter } from './index.ts';

const ctx = { model: 'nova', upstreamModel: 'amazon.nova-pro-v1:0', stream: false };

describe('hub → Converse request', () => {
  it('splits out system, merges tool results into one user turn, maps sampling and tools', () => {
    const hub = {
      model: 'nova',
      stream: true,
      max_completion_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      stop: 'END',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather here?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0=' } },
          ],
        },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'c2', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
        { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'noon' }] },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
          },
        },
        { type: 'function', function: { name: 'get_time' } },
      ],
      tool_choice: 'required',
    };
    expect(convertRequest('openai-chat', 'bedrock-converse', hub, ctx)).toEqual({
      system: [{ text: 'Be brief.' }, { text: 'Use metric units.' }],
      messages: [
        {
          role: 'user',
          content: [{ text: 'Weather here?' }, { image: { format: 'png', source: { bytes: 'iVBORw0=' } } }],
        },
        {
          role: 'assistant',
          content: [
            { toolUse: { toolUseId: 'c1', name: 'get_weather', input: { city: 'Paris' } } },
            { toolUse: { toolUseId: 'c2', name: 'get_time', input: {} } },
          ],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 'c1', content: [{ text: 'sunny' }] } },
            { toolResult: { toolUseId: 'c2', content: [{ text: 'noon' }] } },
            { text: 'Thanks' },
          ],
        },
      ],
      inferenceConfig: { maxTokens: 300, temperature: 0.2, topP: 0.9, stopSequences: ['END'] },
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: 'get_weather',
              description: 'Weather',
              inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } },
            },
          },
          { toolSpec: { name: 'get_time', inputSchema: { json: { type: 'object' } } } },
        ],
        toolChoice: { any: {} },
      },
    });
  });

  it('names a forced tool, and leaves out what was not asked', () => {
    const converse = converseAdapter.requestFromHub(
      {
        messages: [{ role: 'user', content: 'hi' }],
        tools: [{ type: 'function', function: { name: 'f' } }],
        tool_choice: { type: 'function', function: { name: 'f' } },
      },
      ctx,
    );
    expect(converse).toEqual({
      messages: [{ role: 'user', content: [{ text: 'hi' }] }],
      toolConfig: {
        tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } } } }],
        toolChoice: { tool: { name: 'f' } },
      },
    });
  });

  it('refuses an image given by web URL (Converse takes bytes), as a 400', () => {
    const hub = {
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/cat.png' } }] }],
    };
    expect(() => convertRequest('openai-chat', 'bedrock-converse', hub, ctx)).toThrow(/base64 data: URLs/);
  });
});

describe('Converse answer → hub', () => {
  it('carries text, reasoning, tool uses, the stop reason and usage with the cache', () => {
    const answer = converseAdapter.responseToHub(
      {
        output: {
          message: {
            role: 'assistant',
            content: [
              { reasoningContent: { reasoningText: { text: 'Thinking.', signature: 's' } } },
              { text: 'Checking.' },
              { toolUse: { toolUseId: 't1', name: 'get_weather', input: { city: 'Paris' } } },
            ],
          },
        },
        stopReason: 'tool_use',
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 45, cacheReadInputTokens: 30 },
      },
      ctx,
    );
    expect(answer).toMatchObject({
      object: 'chat.completion',
      model: 'nova',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: 'Checking.',
            reasoning_content: 'Thinking.',
            tool_calls: [
              { id: 't1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
          },
        },
      ],
      usage: {
        prompt_tokens: 40,
        completion_tokens: 5,
        total_tokens: 45,
        prompt_tokens_details: { cached_tokens: 30 },
      },
    });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['guardrail_intervened', 'content_filter'],
    ['content_filtered', 'content_filter'],
  ])('maps stopReason %s to %s, and reaches a Claude client through the hub', (stopReason, finish) => {
    const body = {
      output: { message: { content: [{ text: 'Hi' }] } },
      stopReason,
      usage: { inputTokens: 1, outputTokens: 1 },
    };
    expect(converseAdapter.responseToHub(body, ctx).choices[0].finish_reason).toBe(finish);
    expect(convertResponse('bedrock-converse', 'claude-messages', body, ctx)).toMatchObject({
      type: 'message',
      content: [{ type: 'text', text: 'Hi' }],
      usage: { input_tokens: 1, output_tokens: 1 },
    });
  });
});

describe('ConverseStream → hub chunks', () => {
  const events: SseEvent[] = [
    { event: 'messageStart', data: '{"role":"assistant","p":"ab"}' },
    { event: 'contentBlockDelta', data: '{"contentBlockIndex":0,"delta":{"text":"Let me check."}}' },
    { event: 'contentBlockStop', data: '{"contentBlockIndex":0}' },
    {
      event: 'contentBlockStart',
      data: '{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t1","name":"get_weather"}}}',
    },
    { event: 'contentBlockDelta', data: '{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\\"city\\":"}}}' },
    { event: 'contentBlockDelta', data: '{"contentBlockIndex":1,"delta":{"toolUse":{"input":"\\"Paris\\"}"}}}' },
    { event: 'contentBlockStop', data: '{"contentBlockIndex":1}' },
    {
      event: 'contentBlockStart',
      data: '{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"t2","name":"get_time"}}}',
    },
    { event: 'contentBlockStop', data: '{"contentBlockIndex":2}' },
    { event: 'messageStop', data: '{"stopReason":"tool_use"}' },
    {
      event: 'metadata',
      data: '{"usage":{"inputTokens":10,"outputTokens":5,"cacheWriteInputTokens":8},"metrics":{"latencyMs":3}}',
    },
  ];

  it('gives the role, text, tool calls with streamed arguments, the finish and a final usage chunk', () => {
    const stream = converseAdapter.streamToHub(ctx);
    const chunks = [...events.flatMap((e) => stream.push(e)), ...stream.end()].map((e) => JSON.parse(e.data));
    expect(chunks.map((c) => c.choices[0]?.delta ?? null)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Let me check.' },
      { tool_calls: [{ index: 0, id: 't1', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      { tool_calls: [{ index: 1, id: 't2', type: 'function', function: { name: 'get_time', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
      {},
      null,
    ]);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({
      object: 'chat.completion.chunk',
      model: 'nova',
      choices: [],
      usage: {
        prompt_tokens: 18,
        completion_tokens: 5,
        prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 8 },
      },
    });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it('reaches a Gemini client through the hub', () => {
    const stream = convertStream('bedrock-converse', 'gemini-generate', ctx);
    const out = events.slice(0, 2).flatMap((e) => stream?.push(e) ?? []);
    expect(out.map((e) => JSON.parse(e.data).candidates?.[0]?.content?.parts?.[0]?.text).filter(Boolean)).toEqual([
      'Let me check.',
    ]);
  });
});
