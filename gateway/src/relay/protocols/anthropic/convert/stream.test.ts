import { describe, expect, it } from 'vitest';
import type { StreamConverter } from '../../../convert/types.ts';
import type { SseEvent } from '../../../sse.ts';
import { claudeAdapter } from './index.ts';

const ctx = { model: 'claude-sonnet-4', upstreamModel: 'claude-sonnet-4-20250514', stream: true };

const claudeEvent = (type: string, body: Record<string, unknown> = {}): SseEvent => ({
  event: type,
  data: JSON.stringify({ type, ...body }),
});
const hubChunk = (body: Record<string, unknown>): SseEvent => ({ data: JSON.stringify(body) });
const delta = (d: Record<string, unknown>, finish: string | null = null) =>
  hubChunk({ id: 'chatcmpl-1', choices: [{ index: 0, delta: d, finish_reason: finish }] });

function run(converter: StreamConverter, events: SseEvent[]): SseEvent[] {
  return [...events.flatMap((event) => converter.push(event)), ...converter.end()];
}
const parse = (events: SseEvent[]) => events.map((event) => JSON.parse(event.data));

/** A Claude stream as Anthropic sends it: thinking, text, a tool call, then the end. */
const CLAUDE_STREAM: SseEvent[] = [
  claudeEvent('message_start', {
    message: {
      id: 'msg_s1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-20250514',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 12,
        cache_read_input_tokens: 50,
        cache_creation_input_tokens: 8,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 8 },
        output_tokens: 1,
      },
    },
  }),
  claudeEvent('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
  claudeEvent('ping'),
  claudeEvent('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } }),
  claudeEvent('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'see.' } }),
  claudeEvent('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig-xyz' } }),
  claudeEvent('content_block_stop', { index: 0 }),
  claudeEvent('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
  claudeEvent('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Checking ' } }),
  claudeEvent('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'now.' } }),
  claudeEvent('content_block_stop', { index: 1 }),
  claudeEvent('content_block_start', {
    index: 2,
    content_block: { type: 'tool_use', id: 'toolu_9', name: 'weather', input: {} },
  }),
  claudeEvent('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '' } }),
  claudeEvent('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":' } }),
  claudeEvent('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } }),
  claudeEvent('content_block_stop', { index: 2 }),
  claudeEvent('message_delta', {
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { output_tokens: 42 },
  }),
  claudeEvent('message_stop'),
];

describe('Claude stream → hub', () => {
  it('converts event by event: role chunk, reasoning, text, tool call fragments, finish, usage', () => {
    const converter = claudeAdapter.streamToHub(ctx);
    // Each event yields its own chunks at once: nothing waits for later events.
    const perEvent = CLAUDE_STREAM.map((event) => parse(converter.push(event)));
    expect(perEvent.map((chunks) => chunks.length)).toEqual([1, 0, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 2, 0]);
    expect(converter.end()).toEqual([]);
    const chunks = perEvent.flat();
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ id: 'msg_s1', object: 'chat.completion.chunk', model: 'claude-sonnet-4' });
    }
    expect(chunks.map((chunk) => chunk.choices[0]?.delta ?? null)).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'Let me ' },
      { reasoning_content: 'see.' },
      { reasoning_signature: 'sig-xyz' },
      { content: 'Checking ' },
      { content: 'now.' },
      { tool_calls: [{ index: 0, id: 'toolu_9', type: 'function', function: { name: 'weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      {},
      null,
    ]);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: {
        prompt_tokens: 70,
        completion_tokens: 42,
        total_tokens: 112,
        prompt_tokens_details: { cached_tokens: 50, cache_creation_tokens: 8, cache_creation_1h_tokens: 8 },
      },
    });
  });

  it('numbers tool calls in order, and gives an argument-less call "{}"', () => {
    const chunks = parse(
      run(claudeAdapter.streamToHub(ctx), [
        claudeEvent('message_start', { message: { id: 'm', usage: { input_tokens: 1, output_tokens: 1 } } }),
        claudeEvent('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'a', name: 'f' } }),
        claudeEvent('content_block_stop', { index: 0 }),
        claudeEvent('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'b', name: 'g' } }),
        claudeEvent('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{}' } }),
        claudeEvent('content_block_stop', { index: 1 }),
      ]),
    );
    expect(chunks.slice(1).map((chunk) => chunk.choices[0].delta.tool_calls[0])).toEqual([
      { index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '' } },
      { index: 0, function: { arguments: '{}' } },
      { index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '' } },
      { index: 1, function: { arguments: '{}' } },
    ]);
  });

  it('maps stop reasons, lets message_delta totals win, and turns an error event into an error chunk', () => {
    const chunks = parse(
      run(claudeAdapter.streamToHub(ctx), [
        claudeEvent('message_start', { message: { id: 'm', usage: { input_tokens: 5, output_tokens: 1 } } }),
        claudeEvent('message_delta', {
          delta: { stop_reason: 'max_tokens' },
          usage: { input_tokens: 6, cache_read_input_tokens: null, output_tokens: 9 },
        }),
      ]),
    );
    expect(chunks[1].choices[0].finish_reason).toBe('length');
    expect(chunks[2].usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 9 });

    const failed = parse(
      run(claudeAdapter.streamToHub(ctx), [
        claudeEvent('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }),
      ]),
    );
    expect(failed).toEqual([{ error: { message: 'Overloaded', type: 'overloaded_error', code: 'overloaded_error' } }]);
  });

  it('reports no usage chunk when the upstream reported no usage', () => {
    const chunks = parse(
      run(claudeAdapter.streamToHub(ctx), [
        claudeEvent('message_start', { message: { id: 'm' } }),
        claudeEvent('message_delta', { delta: { stop_reason: 'end_turn' } }),
      ]),
    );
    expect(chunks.map((chunk) => chunk.choices.length)).toEqual([1, 1]);
    expect(chunks.some((chunk) => 'usage' in chunk)).toBe(false);
  });
});

describe('hub stream → Claude', () => {
  it('opens, fills and closes a block per kind, then sends message_delta with usage and message_stop', () => {
    const converter = claudeAdapter.streamFromHub(ctx);
    const input = [
      delta({ role: 'assistant', content: '' }),
      delta({ reasoning_content: 'Think' }),
      delta({ reasoning_signature: 'sig-1' }),
      delta({ content: 'Hel' }),
      delta({ content: 'lo' }),
      delta({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: '{"x":1}' } }] }),
      delta({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
      delta({}, 'tool_calls'),
      hubChunk({
        id: 'chatcmpl-1',
        choices: [],
        usage: { prompt_tokens: 30, completion_tokens: 12, prompt_tokens_details: { cached_tokens: 20 } },
      }),
      { data: '[DONE]' },
    ];
    const perChunk = input.map((event) => converter.push(event));
    expect(converter.end()).toEqual([]);
    const events = perChunk.flat();
    // The SSE event name is each payload's type.
    for (const event of events) expect(JSON.parse(event.data).type).toBe(event.event);
    expect(events.map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const data = parse(events);
    expect(data[0]).toEqual({
      type: 'message_start',
      message: {
        id: 'msg_chatcmpl-1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    });
    expect(data.slice(1, 15)).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Think' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig-1' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hel' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'lo' } },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'tool_use', id: 'call_a', name: 'f', input: {} },
      },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"x":1}' } },
      { type: 'content_block_stop', index: 2 },
      {
        type: 'content_block_start',
        index: 3,
        content_block: { type: 'tool_use', id: 'call_b', name: 'g', input: {} },
      },
      { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{}' } },
      { type: 'content_block_stop', index: 3 },
    ]);
    expect(data[15]).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 20, output_tokens: 12 },
    });
    // The finish chunk closes the last block at once; the ending waits only for the usage chunk.
    expect(perChunk[8]!.map((event) => event.event)).toEqual(['content_block_stop']);
    expect(perChunk[9]!.map((event) => event.event)).toEqual(['message_delta', 'message_stop']);
  });

  it('takes input tokens for message_start from a first chunk that carries usage', () => {
    const events = parse(
      run(claudeAdapter.streamFromHub(ctx), [
        hubChunk({ id: 'x', choices: [{ index: 0, delta: { content: 'a' } }], usage: { prompt_tokens: 9 } }),
      ]),
    );
    expect(events[0].message.usage).toMatchObject({ input_tokens: 9 });
  });

  it('ends a stream that stopped without a finish: closes the block, message_delta, message_stop', () => {
    const converter = claudeAdapter.streamFromHub(ctx);
    const pushed = [delta({ content: 'partial' })].flatMap((event) => converter.push(event));
    expect(pushed.map((event) => event.event)).toEqual(['message_start', 'content_block_start', 'content_block_delta']);
    const ending = parse(converter.end());
    expect(ending).toEqual([
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 0 } },
      { type: 'message_stop' },
    ]);
    expect(converter.end()).toEqual([]);
  });

  it('finishes with a finish chunk and no usage at the end, with the mapped stop reason', () => {
    const events = parse(run(claudeAdapter.streamFromHub(ctx), [delta({ content: 'x' }), delta({}, 'length')]));
    expect(events.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'max_tokens' } });
    expect(events.at(-1)).toEqual({ type: 'message_stop' });
  });

  it('sends usage reported with the finish chunk at once', () => {
    const converter = claudeAdapter.streamFromHub(ctx);
    const events = parse(
      converter.push(
        hubChunk({
          id: 'x',
          choices: [{ index: 0, delta: { content: 'x' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 4, completion_tokens: 1 },
        }),
      ),
    );
    expect(events.map((event) => event.type)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[4].usage).toMatchObject({ input_tokens: 4, output_tokens: 1 });
    expect(converter.push(delta({ content: 'late' }))).toEqual([]);
  });

  it('turns an error chunk into a Claude error event and stops', () => {
    const converter = claudeAdapter.streamFromHub(ctx);
    const events = converter.push(hubChunk({ error: { message: 'Slow down', type: 'rate_limit_exceeded' } }));
    expect(events).toEqual([
      {
        event: 'error',
        data: JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'Slow down' } }),
      },
    ]);
    expect(converter.end()).toEqual([]);
  });
});

/** Rebuilds a Claude message from its stream, as a client does. */
function assemble(events: SseEvent[]): Record<string, any> {
  let message: Record<string, any> = {};
  const json: Record<number, string> = {};
  for (const event of parse(events)) {
    if (event.type === 'message_start') message = structuredClone(event.message);
    else if (event.type === 'content_block_start') message.content[event.index] = structuredClone(event.content_block);
    else if (event.type === 'content_block_delta') {
      const block = message.content[event.index];
      if (event.delta.type === 'text_delta') block.text += event.delta.text;
      if (event.delta.type === 'thinking_delta') block.thinking += event.delta.thinking;
      if (event.delta.type === 'signature_delta') block.signature = event.delta.signature;
      if (event.delta.type === 'input_json_delta')
        json[event.index] = (json[event.index] ?? '') + event.delta.partial_json;
    } else if (event.type === 'content_block_stop' && json[event.index] !== undefined)
      message.content[event.index].input = JSON.parse(json[event.index]!);
    else if (event.type === 'message_delta') {
      message.stop_reason = event.delta.stop_reason;
      message.usage = { ...message.usage, ...event.usage };
    }
  }
  return message;
}

describe('stream round trip', () => {
  it('Claude → hub → Claude rebuilds the same message', () => {
    const toHub = claudeAdapter.streamToHub(ctx);
    const fromHub = claudeAdapter.streamFromHub(ctx);
    const hubEvents = run(toHub, CLAUDE_STREAM);
    const back = run(fromHub, hubEvents);
    expect(assemble(back)).toMatchObject({
      id: 'msg_s1',
      content: [
        { type: 'thinking', thinking: 'Let me see.', signature: 'sig-xyz' },
        { type: 'text', text: 'Checking now.' },
        { type: 'tool_use', id: 'toolu_9', name: 'weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 12, cache_read_input_tokens: 50, cache_creation_input_tokens: 8, output_tokens: 42 },
    });
    expect(assemble(back)).toEqual(
      expect.objectContaining({ content: assemble(CLAUDE_STREAM).content, stop_reason: 'tool_use' }),
    );
  });
});
