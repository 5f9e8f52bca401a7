import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../errors.ts';
import { responsesAdapter } from './index.ts';
import { ctx } from './test-support.ts';

const toHub = (body: Record<string, unknown>) => responsesAdapter.responseToHub(body, ctx);
const fromHub = (body: Record<string, unknown>) => responsesAdapter.responseFromHub(body, ctx);

const fullResponse = {
  id: 'resp_abc',
  object: 'response',
  created_at: 1700000000,
  status: 'completed',
  model: 'upstream-model',
  output: [
    { type: 'web_search_call', id: 'ws_0', status: 'completed', action: { type: 'search', query: 'q' } },
    {
      type: 'reasoning',
      id: 'rs_1',
      summary: [
        { type: 'summary_text', text: 'First.' },
        { type: 'summary_text', text: 'Second.' },
      ],
      encrypted_content: 'enc-1',
    },
    {
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      status: 'completed',
      content: [
        { type: 'output_text', text: 'Hello ', annotations: [] },
        { type: 'output_text', text: 'there.', annotations: [] },
      ],
    },
    {
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_1',
      name: 'weather',
      arguments: '{"city":"Paris"}',
      status: 'completed',
    },
  ],
  usage: {
    input_tokens: 120,
    input_tokens_details: { cached_tokens: 100 },
    output_tokens: 40,
    output_tokens_details: { reasoning_tokens: 25 },
    total_tokens: 160,
  },
};

describe('Response → chat completion', () => {
  it('maps reasoning, text, function calls, finish and usage', () => {
    expect(toHub(fullResponse)).toEqual({
      id: 'resp_abc',
      object: 'chat.completion',
      created: 1700000000,
      model: 'client-model',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Hello there.',
            reasoning_content: 'First.\n\nSecond.',
            reasoning_signature: 'enc-1',
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            ],
          },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: 120,
        completion_tokens: 40,
        total_tokens: 160,
        prompt_tokens_details: { cached_tokens: 100 },
        completion_tokens_details: { reasoning_tokens: 25 },
      },
    });
  });

  it('gives null content for calls alone, "" for nothing, and keeps cache writes and refusals', () => {
    const calls = toHub({
      id: 'resp_1',
      status: 'completed',
      output: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }],
    });
    expect(calls.choices[0].message.content).toBeNull();
    const empty = toHub({
      id: 'resp_2',
      status: 'completed',
      output: [],
      usage: { input_tokens: 10, output_tokens: 0, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 7 } },
    });
    expect(empty.choices[0]).toMatchObject({ message: { role: 'assistant', content: '' }, finish_reason: 'stop' });
    expect(empty.usage).toEqual({
      prompt_tokens: 10,
      completion_tokens: 0,
      total_tokens: 10,
      prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 7 },
    });
    const refused = toHub({
      status: 'completed',
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] }],
    });
    expect(refused.choices[0].message).toEqual({ role: 'assistant', content: '', refusal: 'No.' });
    expect(refused.id).toMatch(/^chatcmpl-/);
    expect(refused.usage).toBeUndefined();
  });

  it('maps incomplete answers to length or content_filter', () => {
    const output = [{ type: 'message', content: [{ type: 'output_text', text: 'Cut' }] }];
    expect(
      toHub({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output }).choices[0]
        .finish_reason,
    ).toBe('length');
    expect(
      toHub({ status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output }).choices[0]
        .finish_reason,
    ).toBe('content_filter');
  });

  it('turns a failed response into an upstream error', () => {
    let caught: unknown;
    try {
      toHub({ status: 'failed', error: { code: 'server_error', message: 'The model crashed' }, output: [] });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).status).toBe(502);
    expect((caught as AppError).message).toContain('The model crashed');
  });
});

describe('chat completion → Response', () => {
  const completion = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1700000001,
    model: 'upstream-model',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Let me check.',
          reasoning_content: 'Think.',
          reasoning_signature: 'sig',
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'time', arguments: '{}' } },
          ],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: {
      prompt_tokens: 200,
      completion_tokens: 50,
      total_tokens: 250,
      prompt_tokens_details: { cached_tokens: 150, cache_creation_tokens: 20 },
      completion_tokens_details: { reasoning_tokens: 10 },
    },
  };

  it('builds a completed Response: reasoning, message, function calls, usage', () => {
    const response = fromHub(completion);
    expect(response.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(response).toMatchObject({
      object: 'response',
      created_at: 1700000001,
      status: 'completed',
      error: null,
      incomplete_details: null,
      model: 'client-model',
      usage: {
        input_tokens: 200,
        input_tokens_details: { cached_tokens: 150, cache_write_tokens: 20 },
        output_tokens: 50,
        output_tokens_details: { reasoning_tokens: 10 },
        total_tokens: 250,
      },
    });
    const [reasoning, message, first, second] = response.output;
    expect(response.output).toHaveLength(4);
    expect(reasoning).toEqual({
      id: expect.stringMatching(/^rs_/),
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Think.' }],
      encrypted_content: 'sig',
    });
    expect(message).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Let me check.', annotations: [], logprobs: [] }],
    });
    expect(first).toEqual({
      id: expect.stringMatching(/^fc_/),
      type: 'function_call',
      status: 'completed',
      call_id: 'toolu_1',
      name: 'weather',
      arguments: '{"city":"Paris"}',
    });
    expect(second).toMatchObject({ type: 'function_call', call_id: 'toolu_2', name: 'time', arguments: '{}' });
  });

  it('marks an answer cut by length incomplete (max_output_tokens), with its message incomplete', () => {
    const response = fromHub({
      choices: [
        { index: 0, message: { role: 'assistant', content: [{ type: 'text', text: 'Cut' }] }, finish_reason: 'length' },
      ],
    });
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(response.output).toEqual([
      expect.objectContaining({
        type: 'message',
        status: 'incomplete',
        content: [expect.objectContaining({ text: 'Cut' })],
      }),
    ]);
    expect(response.usage).toBeUndefined();
    const filtered = fromHub({ choices: [{ message: { content: 'x' }, finish_reason: 'content_filter' }] });
    expect(filtered.incomplete_details).toEqual({ reason: 'content_filter' });
  });

  it('keeps a refusal as a refusal part, and an empty answer as no output', () => {
    const refused = fromHub({ choices: [{ message: { content: null, refusal: 'No.' }, finish_reason: 'stop' }] });
    expect(refused.output[0].content).toEqual([{ type: 'refusal', refusal: 'No.' }]);
    expect(fromHub({ choices: [] }).output).toEqual([]);
  });

  it('survives chat → Response → chat', () => {
    const back = toHub(fromHub(completion));
    expect(back.choices[0]).toEqual({ ...completion.choices[0], logprobs: null });
    expect(back.usage).toEqual(completion.usage);
    expect(back.model).toBe('client-model');
  });

  it('survives Response → chat → Response (web search calls aside)', () => {
    const back = fromHub(toHub(fullResponse));
    const strip = (items: any[]) => items.map(({ id: _id, ...rest }) => rest);
    expect(strip(back.output)).toEqual([
      {
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'First.\n\nSecond.' }],
        encrypted_content: 'enc-1',
      },
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Hello there.', annotations: [], logprobs: [] }],
      },
      { type: 'function_call', status: 'completed', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
    ]);
    expect(back.usage).toEqual({
      ...fullResponse.usage,
      output_tokens_details: { reasoning_tokens: 25 },
    });
  });
});

describe('errorBody', () => {
  it("renders OpenAI's error shape", () => {
    expect(
      responsesAdapter.errorBody({ status: 429, message: 'Slow down', type: 'rate_limit_error', code: 'rate_limited' }),
    ).toEqual({ error: { message: 'Slow down', type: 'rate_limit_error', code: 'rate_limited', param: null } });
    expect(responsesAdapter.errorBody({ status: 500, message: 'x', type: 'server_error', code: null })).toEqual({
      error: { message: 'x', type: 'server_error', code: null, param: null },
    });
  });

  it('names its formats', () => {
    expect(responsesAdapter.format).toBe('openai-responses');
    expect(responsesAdapter.hub).toBe('openai-chat');
  });
});
