import { describe, expect, it } from 'vitest';
import type { SseEvent } from '../../../sse.ts';
import { responsesAdapter } from './index.ts';
import { assembleChat, chatChunks, ctx, parsed, responsesEvents, run, sdkResponse } from './test-support.ts';

const convert = (events: SseEvent[]) => run(responsesAdapter.streamFromHub(ctx), events);
const types = (events: SseEvent[]) => events.map((e) => e.event);
const last = (events: SseEvent[]) => JSON.parse(events.at(-1)!.data);

/** Every event named, typed as named, numbered 0, 1, 2, … */
function expectWellFormed(events: SseEvent[]) {
  parsed(events).forEach((data, index) => {
    expect(data.type).toBe(events[index]!.event);
    expect(data.sequence_number).toBe(index);
  });
}

/** A plain OpenAI chat stream: role, text, finish, then usage in a chunk of its own, then [DONE]. */
const textStream = [
  ...chatChunks([
    { delta: { role: 'assistant', content: '' } },
    { delta: { content: 'Hel' } },
    { delta: { content: 'lo!' } },
    { finish: 'stop' },
    { choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } },
  ]),
  { data: '[DONE]' },
];

/** Reasoning with a signature (as the Claude adapter sends it), text, then two parallel tool calls. */
const toolStream = chatChunks([
  { delta: { role: 'assistant', reasoning_content: 'Need ' } },
  { delta: { reasoning_content: 'weather.' } },
  { delta: { reasoning_signature: 'sig-1' } },
  { delta: { content: 'Checking.' } },
  {
    delta: {
      tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }],
    },
  },
  { delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] } },
  { delta: { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] } },
  {
    delta: {
      tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'time', arguments: '{}' } }],
    },
  },
  { finish: 'tool_calls' },
  {
    choices: [],
    usage: {
      prompt_tokens: 100,
      completion_tokens: 20,
      total_tokens: 120,
      prompt_tokens_details: { cached_tokens: 80 },
      completion_tokens_details: { reasoning_tokens: 5 },
    },
  },
]);

describe('hub chunks → Responses stream', () => {
  it('streams text: created and in_progress first, the part before its deltas, the .done events, completed', async () => {
    const events = convert(textStream);
    expectWellFormed(events);
    expect(types(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const [created] = parsed(events);
    expect(created!.response).toMatchObject({
      object: 'response',
      status: 'in_progress',
      model: 'client-model',
      created_at: 1700000000,
      output: [],
    });
    const completed = last(events).response;
    expect(completed.id).toBe(created!.response.id);
    expect(completed.id).toMatch(/^resp_/);
    expect(completed).toMatchObject({
      status: 'completed',
      incomplete_details: null,
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Hello!', annotations: [] }],
        },
      ],
      usage: {
        input_tokens: 9,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 2,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 11,
      },
    });
    const sdk = await sdkResponse(events);
    expect(sdk.output_text).toBe('Hello!');
    expect(sdk.status).toBe('completed');
  });

  it('streams each delta as it comes, nothing held back', () => {
    const converter = responsesAdapter.streamFromHub(ctx);
    const [first, second] = chatChunks([{ delta: { role: 'assistant', content: 'A' } }, { delta: { content: 'B' } }]);
    expect(types(converter.push(first!)).at(-1)).toBe('response.output_text.delta');
    const next = converter.push(second!);
    expect(types(next)).toEqual(['response.output_text.delta']);
    expect(JSON.parse(next[0]!.data)).toMatchObject({ delta: 'B', content_index: 0, output_index: 0 });
  });

  it('streams reasoning, a signature, text and parallel tool calls as separate items', async () => {
    const events = convert(toolStream);
    expectWellFormed(events);
    expect(types(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added', // reasoning
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added', // message
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added', // call_a
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.output_item.added', // call_b
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const added = parsed(events).filter((e) => e.type === 'response.output_item.added');
    expect(added.map((e) => e.output_index)).toEqual([0, 1, 2, 3]);
    expect(added[2]!.item).toMatchObject({ type: 'function_call', call_id: 'call_a', name: 'weather', arguments: '' });
    const completed = last(events).response;
    expect(completed.output).toEqual([
      {
        id: expect.stringMatching(/^rs_/),
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'Need weather.' }],
        encrypted_content: 'sig-1',
      },
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Checking.', annotations: [], logprobs: [] }],
      },
      {
        id: expect.stringMatching(/^fc_/),
        type: 'function_call',
        status: 'completed',
        call_id: 'call_a',
        name: 'weather',
        arguments: '{"city":"Paris"}',
      },
      {
        id: expect.stringMatching(/^fc_/),
        type: 'function_call',
        status: 'completed',
        call_id: 'call_b',
        name: 'time',
        arguments: '{}',
      },
    ]);
    expect(completed.usage).toEqual({
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 80 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 5 },
      total_tokens: 120,
    });
    const sdk = await sdkResponse(events);
    expect(sdk.output_text).toBe('Checking.');
    expect(sdk.output.map((item: any) => item.type)).toEqual([
      'reasoning',
      'message',
      'function_call',
      'function_call',
    ]);
    expect(sdk.output[2].arguments).toBe('{"city":"Paris"}');
  });

  it('starts a new call when an upstream reuses index 0 with a new id', async () => {
    const events = convert(
      chatChunks([
        { delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'a', arguments: '{"x":1}' } }] } },
        { delta: { tool_calls: [{ index: 0, id: 'c2', function: { name: 'b', arguments: '{"y":2}' } }] } },
        { finish: 'tool_calls', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
      ]),
    );
    expectWellFormed(events);
    const calls = last(events).response.output.map((item: any) => [item.call_id, item.name, item.arguments]);
    expect(calls).toEqual([
      ['c1', 'a', '{"x":1}'],
      ['c2', 'b', '{"y":2}'],
    ]);
    expect((await sdkResponse(events)).output).toHaveLength(2);
  });

  it('ends with response.incomplete (max_output_tokens) at once when finish and usage come together', () => {
    const converter = responsesAdapter.streamFromHub(ctx);
    const events = [
      ...chatChunks([
        { delta: { content: 'Cut sho' } },
        { finish: 'length', usage: { prompt_tokens: 5, completion_tokens: 16, total_tokens: 21 } },
      ]).flatMap((e) => converter.push(e)),
    ];
    expect(types(events).at(-1)).toBe('response.incomplete');
    const response = last(events).response;
    expect(response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [{ type: 'message', status: 'incomplete' }],
      usage: { input_tokens: 5, output_tokens: 16 },
    });
    expect(converter.end()).toEqual([]);
    expectWellFormed(events);
  });

  it('maps content_filter to response.incomplete with that reason', () => {
    const events = convert(chatChunks([{ delta: { content: 'x' } }, { finish: 'content_filter' }]));
    expect(last(events).response.incomplete_details).toEqual({ reason: 'content_filter' });
  });

  it('waits for the usage chunk after the finish, and end() completes without one', () => {
    const converter = responsesAdapter.streamFromHub(ctx);
    const events = chatChunks([{ delta: { content: 'Hi' } }, { finish: 'stop' }]).flatMap((e) => converter.push(e));
    expect(types(events)).not.toContain('response.completed');
    expect(types(events).at(-1)).toBe('response.output_item.done');
    const ending = converter.end();
    expect(types(ending)).toEqual(['response.completed']);
    const response = JSON.parse(ending[0]!.data).response;
    expect(response.usage).toBeUndefined();
    expect(response.output[0].content[0].text).toBe('Hi');
  });

  it('closes everything in end() when the hub stream stopped without a finish', async () => {
    const events = convert(
      chatChunks([
        { delta: { content: 'Partial' } },
        { delta: { tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '{"a"' } }] } },
      ]),
    );
    expectWellFormed(events);
    expect(types(events).slice(-4)).toEqual([
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect((await sdkResponse(events)).output_text).toBe('Partial');
  });

  it('answers an empty hub stream with a whole, empty response', async () => {
    const events = convert([]);
    expect(types(events)).toEqual(['response.created', 'response.in_progress', 'response.completed']);
    expect((await sdkResponse(events)).output).toEqual([]);
  });

  it('streams a refusal as a refusal part', async () => {
    const events = convert(
      chatChunks([{ delta: { refusal: 'I cannot ' } }, { delta: { refusal: 'help.' } }, { finish: 'stop' }]),
    );
    expectWellFormed(events);
    expect(types(events)).toContain('response.refusal.delta');
    expect(types(events)).toContain('response.refusal.done');
    expect(last(events).response.output[0].content).toEqual([{ type: 'refusal', refusal: 'I cannot help.' }]);
    const sdk = await sdkResponse(events);
    expect(sdk.output[0].content[0]).toMatchObject({ type: 'refusal', refusal: 'I cannot help.' });
  });

  it('turns an error chunk into an error event and response.failed, then ignores the rest', () => {
    const converter = responsesAdapter.streamFromHub(ctx);
    const events = [
      ...chatChunks([{ delta: { content: 'Par' } }]).flatMap((e) => converter.push(e)),
      ...converter.push({
        data: JSON.stringify({ error: { message: 'Overloaded', type: 'server_error', code: 'overloaded' } }),
      }),
    ];
    expectWellFormed(events);
    expect(types(events).slice(-2)).toEqual(['error', 'response.failed']);
    const [error, failed] = parsed(events).slice(-2);
    expect(error).toMatchObject({ code: 'overloaded', message: 'Overloaded', param: null });
    expect(failed!.response).toMatchObject({ status: 'failed', error: { code: 'overloaded', message: 'Overloaded' } });
    expect(converter.push(chatChunks([{ delta: { content: 'late' } }])[0]!)).toEqual([]);
    expect(converter.end()).toEqual([]);
  });

  it('keeps a signature that arrives without reasoning text as an empty reasoning item', () => {
    const events = convert(
      chatChunks([{ delta: { reasoning_signature: 'sig-only' } }, { delta: { content: 'x' } }, { finish: 'stop' }]),
    );
    expectWellFormed(events);
    expect(types(events)).not.toContain('response.reasoning_summary_part.added');
    expect(last(events).response.output[0]).toMatchObject({
      type: 'reasoning',
      summary: [],
      encrypted_content: 'sig-only',
    });
  });
});

describe('stream round trips', () => {
  it('hub → Responses → hub keeps text, reasoning, signature, tool calls, finish and usage', () => {
    const original = assembleChat(toolStream);
    const back = assembleChat(run(responsesAdapter.streamToHub(ctx), convert(toolStream)));
    expect(back).toEqual({ ...original, role: 'assistant' });
    expect(back.toolCalls).toHaveLength(2);
  });

  it('Responses → hub → Responses keeps the output and usage', async () => {
    const upstream = responsesEvents([
      { type: 'response.created', response: { id: 'resp_up', status: 'in_progress', output: [] } },
      { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [] } },
      {
        type: 'response.reasoning_summary_text.delta',
        item_id: 'rs_1',
        output_index: 0,
        summary_index: 0,
        delta: 'Think.',
      },
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: {
          type: 'reasoning',
          id: 'rs_1',
          summary: [{ type: 'summary_text', text: 'Think.' }],
          encrypted_content: 'e',
        },
      },
      { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'Answer.' },
      {
        type: 'response.output_item.added',
        output_index: 2,
        item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '' },
      },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 2, delta: '{}' },
      {
        type: 'response.completed',
        response: {
          id: 'resp_up',
          status: 'completed',
          output: [],
          usage: {
            input_tokens: 7,
            input_tokens_details: { cached_tokens: 2 },
            output_tokens: 3,
            output_tokens_details: { reasoning_tokens: 1 },
            total_tokens: 10,
          },
        },
      },
    ]);
    const events = convert(run(responsesAdapter.streamToHub(ctx), upstream));
    expectWellFormed(events);
    expect((await sdkResponse(events)).output_text).toBe('Answer.');
    const response = last(events).response;
    expect(response.output.map(({ id: _id, ...item }: any) => item)).toEqual([
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Think.' }], encrypted_content: 'e' },
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Answer.', annotations: [], logprobs: [] }],
      },
      { type: 'function_call', status: 'completed', call_id: 'call_1', name: 'f', arguments: '{}' },
    ]);
    expect(response.usage).toEqual({
      input_tokens: 7,
      input_tokens_details: { cached_tokens: 2 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 1 },
      total_tokens: 10,
    });
  });
});
