import { describe, expect, it } from 'vitest';
import { claudeAdapter } from './index.ts';

const ctx = { model: 'claude-sonnet-4', upstreamModel: 'claude-sonnet-4-20250514', stream: false };

const claudeMessage = (extra: Record<string, any> = {}) => ({
  id: 'msg_01',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-20250514',
  content: [
    { type: 'thinking', thinking: 'Hmm.', signature: 'sig-a' },
    { type: 'text', text: 'Here ' },
    { type: 'text', text: 'you go.' },
    { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'x' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: {
    input_tokens: 10,
    cache_read_input_tokens: 100,
    cache_creation_input_tokens: 40,
    cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 30 },
    output_tokens: 7,
  },
  ...extra,
});

describe('Claude response → hub', () => {
  it('maps content, reasoning, tool calls, finish reason and usage with cache folded into prompt_tokens', () => {
    const hub = claudeAdapter.responseToHub(claudeMessage(), ctx);
    expect(hub).toMatchObject({
      id: 'msg_01',
      object: 'chat.completion',
      model: 'claude-sonnet-4',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Here you go.',
            reasoning_content: 'Hmm.',
            reasoning_signature: 'sig-a',
            tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: {
        prompt_tokens: 150,
        completion_tokens: 7,
        total_tokens: 157,
        prompt_tokens_details: { cached_tokens: 100, cache_creation_tokens: 40, cache_creation_1h_tokens: 30 },
      },
    });
    expect(typeof hub.created).toBe('number');
  });

  it('maps every stop reason', () => {
    const finish = (stop_reason: string) =>
      claudeAdapter.responseToHub(claudeMessage({ stop_reason }), ctx).choices[0].finish_reason;
    expect(['end_turn', 'max_tokens', 'tool_use', 'stop_sequence', 'refusal', 'pause_turn'].map(finish)).toEqual([
      'stop',
      'length',
      'tool_calls',
      'stop',
      'content_filter',
      'stop',
    ]);
  });

  it('carries redacted thinking and leaves content null without text', () => {
    const hub = claudeAdapter.responseToHub(
      claudeMessage({ content: [{ type: 'redacted_thinking', data: 'opaque' }], stop_reason: 'end_turn' }),
      ctx,
    );
    expect(hub.choices[0].message).toEqual({ role: 'assistant', content: null, redacted_reasoning: ['opaque'] });
  });
});

describe('hub response → Claude', () => {
  it('builds a Claude message with blocks in Claude order and usage with cache taken out of input', () => {
    const claude = claudeAdapter.responseFromHub(
      {
        id: 'chatcmpl-9',
        object: 'chat.completion',
        model: 'gpt-4o',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Answer',
              reasoning_content: 'Because',
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: {
          prompt_tokens: 150,
          completion_tokens: 7,
          prompt_tokens_details: { cached_tokens: 100, cache_creation_tokens: 40, cache_creation_1h_tokens: 30 },
        },
      },
      ctx,
    );
    expect(claude).toEqual({
      id: 'msg_chatcmpl-9',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4',
      content: [
        { type: 'thinking', thinking: 'Because', signature: '' },
        { type: 'text', text: 'Answer' },
        { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 10,
        output_tokens: 7,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 40,
        cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 30 },
      },
    });
  });

  it('maps every finish reason, and a refusal', () => {
    const stop = (finish_reason: string | null) =>
      claudeAdapter.responseFromHub({ choices: [{ message: { content: 'x' }, finish_reason }] }, ctx).stop_reason;
    expect(['stop', 'length', 'tool_calls', 'content_filter', null].map(stop)).toEqual([
      'end_turn',
      'max_tokens',
      'tool_use',
      'refusal',
      'end_turn',
    ]);
    const refused = claudeAdapter.responseFromHub(
      { choices: [{ message: { content: null, refusal: 'I cannot help.' }, finish_reason: 'stop' }] },
      ctx,
    );
    expect([refused.stop_reason, refused.content]).toEqual(['refusal', [{ type: 'text', text: 'I cannot help.' }]]);
  });

  it('round trips: Claude → hub → Claude keeps content, stop reason and usage', () => {
    const original = claudeMessage();
    const back = claudeAdapter.responseFromHub(claudeAdapter.responseToHub(original, ctx), ctx);
    expect(back).toEqual({
      ...original,
      model: 'claude-sonnet-4',
      // Adjacent text blocks read as one text.
      content: [original.content[0], { type: 'text', text: 'Here you go.' }, original.content[3]],
    });
  });
});

describe('errors', () => {
  it('renders errors in Claude’s shape with the type for each status', () => {
    const body = (status: number) =>
      claudeAdapter.errorBody({ status, message: 'nope', type: 'whatever', code: null }) as any;
    expect(body(429)).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'nope' } });
    expect([400, 401, 403, 404, 413, 429, 500, 529, 422, 502].map((s) => body(s).error.type)).toEqual([
      'invalid_request_error',
      'authentication_error',
      'permission_error',
      'not_found_error',
      'request_too_large',
      'rate_limit_error',
      'api_error',
      'overloaded_error',
      'invalid_request_error',
      'api_error',
    ]);
  });
});
