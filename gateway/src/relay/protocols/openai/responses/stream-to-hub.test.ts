import { describe, expect, it } from 'vitest';
import { responsesAdapter } from './index.ts';
import { assembleChat, ctx, parsed, responsesEvents, run, sdkChatCompletion } from './test-support.ts';

const convert = (list: Record<string, unknown>[]) => run(responsesAdapter.streamToHub(ctx), responsesEvents(list));

const base = { id: 'resp_up', object: 'response', created_at: 1700000000, model: 'upstream-model' };

/** What tests/support/mock-openai.ts's responses() streams: created, text deltas, completed. */
function mockSequence(reply: string, extraOutput: unknown[] = []) {
  const message = {
    type: 'message',
    id: 'msg_1',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: reply, annotations: [] }],
  };
  const response = {
    ...base,
    status: 'completed',
    output: [...extraOutput, message],
    usage: { input_tokens: 5, output_tokens: 6, total_tokens: 11 },
  };
  return [
    { type: 'response.created', response: { ...response, status: 'in_progress', output: [], usage: null } },
    ...(reply.match(/.{1,5}/gs) ?? []).map((delta) => ({
      type: 'response.output_text.delta',
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      delta,
    })),
    { type: 'response.completed', response },
  ];
}

/** A full OpenAI sequence: reasoning (two summary parts), a message, then a function call. */
const fullSequence = (() => {
  const reasoning = {
    type: 'reasoning',
    id: 'rs_1',
    summary: [
      { type: 'summary_text', text: 'Checking weather.' },
      { type: 'summary_text', text: 'Use the tool.' },
    ],
    encrypted_content: 'enc-xyz',
  };
  const message = {
    type: 'message',
    id: 'msg_1',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: 'Let me check.', annotations: [] }],
  };
  const call = {
    type: 'function_call',
    id: 'fc_1',
    call_id: 'call_A',
    name: 'get_weather',
    arguments: '{"city":"Paris"}',
    status: 'completed',
  };
  const summaryEvents = (index: number, pieces: string[]) => [
    {
      type: 'response.reasoning_summary_part.added',
      item_id: 'rs_1',
      output_index: 0,
      summary_index: index,
      part: { type: 'summary_text', text: '' },
    },
    ...pieces.map((delta) => ({
      type: 'response.reasoning_summary_text.delta',
      item_id: 'rs_1',
      output_index: 0,
      summary_index: index,
      delta,
    })),
    {
      type: 'response.reasoning_summary_text.done',
      item_id: 'rs_1',
      output_index: 0,
      summary_index: index,
      text: pieces.join(''),
    },
    {
      type: 'response.reasoning_summary_part.done',
      item_id: 'rs_1',
      output_index: 0,
      summary_index: index,
      part: { type: 'summary_text', text: pieces.join('') },
    },
  ];
  const text = { item_id: 'msg_1', output_index: 1, content_index: 0 };
  return [
    { type: 'response.created', response: { ...base, status: 'in_progress', output: [], usage: null } },
    { type: 'response.in_progress', response: { ...base, status: 'in_progress', output: [], usage: null } },
    { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [] } },
    ...summaryEvents(0, ['Checking ', 'weather.']),
    ...summaryEvents(1, ['Use the tool.']),
    { type: 'response.output_item.done', output_index: 0, item: reasoning },
    {
      type: 'response.output_item.added',
      output_index: 1,
      item: { ...message, status: 'in_progress', content: [] },
    },
    {
      type: 'response.content_part.added',
      ...text,
      part: { type: 'output_text', text: '', annotations: [] },
    },
    { type: 'response.output_text.delta', ...text, delta: 'Let me ', logprobs: [] },
    { type: 'response.output_text.delta', ...text, delta: 'check.', logprobs: [] },
    { type: 'response.output_text.done', ...text, text: 'Let me check.', logprobs: [] },
    { type: 'response.content_part.done', ...text, part: message.content[0] },
    { type: 'response.output_item.done', output_index: 1, item: message },
    {
      type: 'response.output_item.added',
      output_index: 2,
      item: { ...call, arguments: '', status: 'in_progress' },
    },
    { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 2, delta: '{"city":' },
    { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 2, delta: '"Paris"}' },
    { type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 2, arguments: call.arguments },
    { type: 'response.output_item.done', output_index: 2, item: call },
    {
      type: 'response.completed',
      response: {
        ...base,
        status: 'completed',
        output: [reasoning, message, call],
        usage: {
          input_tokens: 50,
          input_tokens_details: { cached_tokens: 10 },
          output_tokens: 30,
          output_tokens_details: { reasoning_tokens: 12 },
          total_tokens: 80,
        },
      },
    },
  ];
})();

describe('Responses stream → hub chunks', () => {
  it("converts the mock upstream's stream: a role chunk, text deltas, the finish, a usage chunk", async () => {
    const events = convert(mockSequence('Hello from the mock.'));
    const chunks = parsed(events);
    expect(chunks[0]).toEqual({
      id: 'resp_up',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: 'client-model',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    expect(chunks.slice(1, -2).map((c) => c.choices[0].delta.content)).toEqual(['Hello', ' from', ' the ', 'mock.']);
    expect(chunks.at(-2)!.choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'stop' });
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 },
    });
    expect(events.every((e) => e.event === undefined)).toBe(true);
    const completion = await sdkChatCompletion(events);
    expect(completion.choices[0].message.content).toBe('Hello from the mock.');
    expect(completion.choices[0].finish_reason).toBe('stop');
  });

  it('skips built-in tool items (web search calls)', () => {
    const search = { type: 'web_search_call', id: 'ws_0', status: 'completed', action: { type: 'search', query: 'q' } };
    const result = assembleChat(convert(mockSequence('Found it.', [search])));
    expect(result.content).toBe('Found it.');
    expect(result.toolCalls).toEqual([]);
    expect(result.finish).toBe('stop');
  });

  it('converts reasoning, text and a function call of a full OpenAI stream', async () => {
    const events = convert(fullSequence);
    const result = assembleChat(events);
    expect(result).toEqual({
      role: 'assistant',
      content: 'Let me check.',
      refusal: '',
      reasoning: 'Checking weather.\n\nUse the tool.',
      signature: 'enc-xyz',
      toolCalls: [{ id: 'call_A', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      finish: 'tool_calls',
      usage: {
        prompt_tokens: 50,
        completion_tokens: 30,
        total_tokens: 80,
        prompt_tokens_details: { cached_tokens: 10 },
        completion_tokens_details: { reasoning_tokens: 12 },
      },
      errors: [],
    });
    // The tool call starts with its id, name and type, then carries argument fragments only.
    const toolChunks = parsed(events)
      .filter((c) => c.choices?.[0]?.delta?.tool_calls)
      .map((c) => c.choices[0].delta.tool_calls[0]);
    expect(toolChunks).toEqual([
      { index: 0, id: 'call_A', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 0, function: { arguments: '{"city":' } },
      { index: 0, function: { arguments: '"Paris"}' } },
    ]);
    const completion = await sdkChatCompletion(events);
    expect(completion.choices[0].message.tool_calls).toEqual([
      { id: 'call_A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);
  });

  it('emits each delta as it arrives, nothing held back', () => {
    const converter = responsesAdapter.streamToHub(ctx);
    const [created, delta] = responsesEvents(
      fullSequence
        .slice(0, 1)
        .concat([
          { type: 'response.output_text.delta', item_id: 'msg_9', output_index: 0, content_index: 0, delta: 'Hi' },
        ]),
    );
    expect(parsed(converter.push(created!))).toHaveLength(1);
    expect(parsed(converter.push(delta!))[0]!.choices[0].delta).toEqual({ content: 'Hi' });
  });

  it('sends what an upstream gave only as whole items (no deltas, no added events)', () => {
    const message = {
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Whole text.' }],
    };
    const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '{"a":1}' };
    const reasoning = { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Hm.' }] };
    const result = assembleChat(
      convert([
        { type: 'response.created', response: { ...base, status: 'in_progress', output: [] } },
        { type: 'response.output_item.done', output_index: 0, item: reasoning },
        { type: 'response.output_item.done', output_index: 1, item: message },
        { type: 'response.output_item.done', output_index: 2, item: call },
        { type: 'response.completed', response: { ...base, status: 'completed', output: [reasoning, message, call] } },
      ]),
    );
    expect(result).toMatchObject({
      reasoning: 'Hm.',
      content: 'Whole text.',
      toolCalls: [{ id: 'call_1', name: 'f', arguments: '{"a":1}' }],
      finish: 'tool_calls',
      usage: undefined,
    });
  });

  it('sends items only the final response names, and the unsent tail of a partly streamed one', () => {
    const result = assembleChat(
      convert([
        { type: 'response.created', response: { ...base, status: 'in_progress', output: [] } },
        { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Par' },
        {
          type: 'response.completed',
          response: {
            ...base,
            status: 'completed',
            output: [
              { type: 'message', id: 'msg_1', content: [{ type: 'output_text', text: 'Partly.' }] },
              { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'g', arguments: '{}' },
            ],
          },
        },
      ]),
    );
    expect(result.content).toBe('Partly.');
    expect(result.toolCalls).toEqual([{ id: 'call_2', name: 'g', arguments: '{}' }]);
  });

  it('ends an incomplete response with finish_reason length (or content_filter)', () => {
    const incomplete = (reason: string) =>
      assembleChat(
        convert([
          { type: 'response.created', response: { ...base, status: 'in_progress', output: [] } },
          { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Cut' },
          {
            type: 'response.incomplete',
            response: {
              ...base,
              status: 'incomplete',
              incomplete_details: { reason },
              output: [{ type: 'message', id: 'msg_1', content: [{ type: 'output_text', text: 'Cut' }] }],
              usage: { input_tokens: 3, output_tokens: 16, total_tokens: 19 },
            },
          },
        ]),
      );
    expect(incomplete('max_output_tokens')).toMatchObject({ content: 'Cut', finish: 'length' });
    expect(incomplete('content_filter').finish).toBe('content_filter');
  });

  it('passes refusals and raw reasoning text', () => {
    const result = assembleChat(
      convert([
        { type: 'response.created', response: { ...base, output: [] } },
        { type: 'response.reasoning_text.delta', item_id: 'rs_1', output_index: 0, content_index: 0, delta: 'raw' },
        { type: 'response.refusal.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'No.' },
        { type: 'response.completed', response: { ...base, status: 'completed', output: [] } },
      ]),
    );
    expect(result).toMatchObject({ reasoning: 'raw', refusal: 'No.', finish: 'stop' });
  });

  it('turns response.failed and error events into an OpenAI error chunk, and stops there', () => {
    const failed = convert([
      { type: 'response.created', response: { ...base, output: [] } },
      { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Par' },
      {
        type: 'response.failed',
        response: { ...base, status: 'failed', error: { code: 'server_error', message: 'Boom' } },
      },
      { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'late' },
    ]);
    expect(assembleChat(failed)).toMatchObject({
      content: 'Par',
      finish: undefined,
      errors: [{ message: 'Boom', type: 'upstream_error', code: 'server_error', param: null }],
    });
    const error = convert([{ type: 'error', code: 'rate_limit_exceeded', message: 'Slow down', param: null }]);
    expect(parsed(error)).toEqual([
      { error: { message: 'Slow down', type: 'upstream_error', code: 'rate_limit_exceeded', param: null } },
    ]);
  });

  it('ignores [DONE], unparsable data and unknown events; adds nothing at the end of a cut stream', () => {
    const converter = responsesAdapter.streamToHub(ctx);
    expect(converter.push({ data: '[DONE]' })).toEqual([]);
    expect(converter.push({ data: '{oops' })).toEqual([]);
    const [created, searching] = responsesEvents([
      { type: 'response.created', response: { ...base, output: [] } },
      { type: 'response.web_search_call.searching', item_id: 'ws_1', output_index: 0 },
    ]);
    converter.push(created!);
    expect(converter.push(searching!)).toEqual([]);
    expect(converter.end()).toEqual([]);
  });
});
