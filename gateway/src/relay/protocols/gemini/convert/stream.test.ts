import { describe, expect, it } from 'vitest';
import type { ConvertContext, StreamConverter } from '../../../convert/types.ts';
import type { SseEvent } from '../../../sse.ts';
import { geminiAdapter } from './index.ts';

const ctx: ConvertContext = { model: 'client-model', upstreamModel: 'up', stream: true };

const run = (converter: StreamConverter, inputs: unknown[]) => {
  const pushed = inputs.map((input) =>
    converter.push({ data: typeof input === 'string' ? input : JSON.stringify(input) }).map(parse),
  );
  return { pushed, ended: converter.end().map(parse) };
};
const parse = (event: SseEvent) => JSON.parse(event.data);
const deltas = (chunks: any[]) =>
  chunks.map((c) => (c.choices.length ? [c.choices[0].delta, c.choices[0].finish_reason] : c.usage));

describe('Gemini stream → hub chunks', () => {
  it('converts text and thought chunks, the finish, and the final usage', () => {
    const usage = { promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 3, cachedContentTokenCount: 4 };
    const { pushed, ended } = run(geminiAdapter.streamToHub(ctx), [
      {
        candidates: [{ content: { role: 'model', parts: [{ text: 'Hmm', thought: true }] }, index: 0 }],
        usageMetadata: { promptTokenCount: 10 },
        responseId: 'r1',
      },
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] }, index: 0 }], responseId: 'r1' },
      {
        candidates: [
          {
            content: { role: 'model', parts: [{ text: 'lo', thoughtSignature: 'sig' }] },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: usage,
        responseId: 'r1',
      },
    ]);
    const all = pushed.flat();
    expect(all.every((c) => c.id === 'chatcmpl-r1' && c.model === 'client-model')).toBe(true);
    expect(all.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(pushed.map((events) => events.length)).toEqual([1, 1, 3]);
    expect(deltas(all)).toEqual([
      [{ role: 'assistant', reasoning_content: 'Hmm' }, null],
      [{ content: 'Hel' }, null],
      [{ content: 'lo', reasoning_signature: 'sig' }, null],
      [{}, 'stop'],
      {
        prompt_tokens: 10,
        completion_tokens: 8,
        total_tokens: 18,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 3 },
      },
    ]);
    expect(all.at(-1).choices).toEqual([]);
    expect(ended).toEqual([]);
  });

  it('emits each function call whole, with its own index and id, and finishes with tool_calls', () => {
    const { pushed } = run(geminiAdapter.streamToHub(ctx), [
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { functionCall: { name: 'a', args: { x: 1 } }, thoughtSignature: 's' },
                { functionCall: { name: 'b', args: {} } },
              ],
            },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2 },
        responseId: 'r2',
      },
    ]);
    expect(deltas(pushed.flat())).toEqual([
      [
        {
          role: 'assistant',
          tool_calls: [{ index: 0, id: 'call_r2_0', type: 'function', function: { name: 'a', arguments: '{"x":1}' } }],
          reasoning_signature: 's',
        },
        null,
      ],
      [
        { tool_calls: [{ index: 1, id: 'call_r2_1', type: 'function', function: { name: 'b', arguments: '{}' } }] },
        null,
      ],
      [{}, 'tool_calls'],
      expect.objectContaining({ prompt_tokens: 1, completion_tokens: 2 }),
    ]);
  });

  it('closes an unfinished stream at the end, with the usage seen so far', () => {
    const { pushed, ended } = run(geminiAdapter.streamToHub(ctx), [
      {
        candidates: [{ content: { parts: [{ text: 'cut' }] } }],
        usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 1 },
      },
    ]);
    expect(deltas(pushed.flat())).toEqual([[{ role: 'assistant', content: 'cut' }, null]]);
    expect(deltas(ended)).toEqual([[{}, 'stop'], expect.objectContaining({ prompt_tokens: 2, completion_tokens: 1 })]);
  });

  it('maps safety, length, a blocked prompt and an error chunk', () => {
    const finish = (finishReason: string) =>
      deltas(
        run(geminiAdapter.streamToHub(ctx), [{ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason }] }])
          .pushed[0]!,
      )[1];
    expect(finish('SAFETY')).toEqual([{}, 'content_filter']);
    expect(finish('MAX_TOKENS')).toEqual([{}, 'length']);
    const blocked = run(geminiAdapter.streamToHub(ctx), [{ promptFeedback: { blockReason: 'OTHER' } }]);
    expect(deltas(blocked.pushed[0]!)).toEqual([[{ role: 'assistant' }, 'content_filter']]);
    const error = run(geminiAdapter.streamToHub(ctx), [
      { error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' } },
    ]);
    expect(error.pushed[0]).toEqual([
      { error: { message: 'Quota exceeded', type: 'rate_limit_error', code: 'RESOURCE_EXHAUSTED' } },
    ]);
  });

  it('accepts the JSON array Google streams without alt=sse', () => {
    const { pushed } = run(geminiAdapter.streamToHub(ctx), [
      [
        { candidates: [{ content: { parts: [{ text: 'a' }] } }] },
        { candidates: [{ content: { parts: [{ text: 'b' }] }, finishReason: 'STOP' }] },
      ],
    ]);
    expect(deltas(pushed[0]!)).toEqual([
      [{ role: 'assistant', content: 'a' }, null],
      [{ content: 'b' }, null],
      [{}, 'stop'],
    ]);
  });
});

const chunk = (delta: object, finish: string | null = null, index = 0) => ({
  id: 'chatcmpl-h1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o',
  choices: [{ index, delta, finish_reason: finish }],
});

describe('hub chunks → Gemini stream', () => {
  it('sends text and thoughts as they come, and the finish with the usage on the last chunk', () => {
    const { pushed, ended } = run(geminiAdapter.streamFromHub(ctx), [
      chunk({ role: 'assistant', content: '' }),
      chunk({ reasoning_content: 'think' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({}, 'stop'),
      {
        id: 'chatcmpl-h1',
        choices: [],
        usage: {
          prompt_tokens: 10,
          completion_tokens: 8,
          total_tokens: 18,
          prompt_tokens_details: { cached_tokens: 4 },
          completion_tokens_details: { reasoning_tokens: 3 },
        },
      },
      '[DONE]',
    ]);
    expect(pushed.map((events) => events.length)).toEqual([0, 1, 1, 1, 0, 1, 0]);
    const base = { modelVersion: 'client-model', responseId: 'h1' };
    expect(pushed.flat()).toEqual([
      { candidates: [{ content: { role: 'model', parts: [{ text: 'think', thought: true }] }, index: 0 }], ...base },
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] }, index: 0 }], ...base },
      { candidates: [{ content: { role: 'model', parts: [{ text: 'lo' }] }, index: 0 }], ...base },
      {
        candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: {
          promptTokenCount: 10,
          candidatesTokenCount: 5,
          thoughtsTokenCount: 3,
          cachedContentTokenCount: 4,
          totalTokenCount: 18,
        },
        ...base,
      },
    ]);
    expect(ended).toEqual([]);
  });

  it('holds tool call fragments until the call is complete and sends it whole', () => {
    const { pushed, ended } = run(geminiAdapter.streamFromHub(ctx), [
      chunk({
        role: 'assistant',
        tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { name: 'get_weather', arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }], reasoning_signature: 'sig' }),
      chunk({ tool_calls: [{ index: 1, id: 'call_y', type: 'function', function: { name: 'noop', arguments: '' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(pushed.flat()).toEqual([]);
    // No usage chunk came: end() flushes the held finishing chunk.
    expect(ended).toEqual([
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig' },
                { functionCall: { name: 'noop', args: {} } },
              ],
            },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        modelVersion: 'client-model',
        responseId: 'h1',
      },
    ]);
  });

  it('flushes calls of a stream that stopped without a finish, and passes errors in Google shape', () => {
    const cut = run(geminiAdapter.streamFromHub(ctx), [
      chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '{"a":' } }] }),
    ]);
    expect(cut.ended[0].candidates[0].content.parts).toEqual([
      { functionCall: { name: 'f', args: { value: '{"a":' } } },
    ]);
    const error = run(geminiAdapter.streamFromHub(ctx), [
      chunk({ content: 'partial' }),
      { error: { message: 'Upstream broke', type: 'server_error', code: null } },
    ]);
    expect(error.pushed[1]).toEqual([{ error: { code: 500, message: 'Upstream broke', status: 'INTERNAL' } }]);
  });

  it('sends a usage-only chunk when the usage comes without a held finish', () => {
    const { pushed } = run(geminiAdapter.streamFromHub(ctx), [
      { id: 'chatcmpl-u', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
    ]);
    expect(pushed[0]).toEqual([
      {
        usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2, totalTokenCount: 3 },
        modelVersion: 'client-model',
        responseId: 'u',
      },
    ]);
  });

  it('round-trips a Gemini stream through the hub', () => {
    const geminiChunks = [
      {
        candidates: [{ content: { role: 'model', parts: [{ text: 'plan', thought: true }] }, index: 0 }],
        modelVersion: 'client-model',
        responseId: 'rt',
      },
      {
        candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, index: 0 }],
        modelVersion: 'client-model',
        responseId: 'rt',
      },
      {
        candidates: [
          {
            content: { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: 's' }] },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, thoughtsTokenCount: 1, totalTokenCount: 8 },
        modelVersion: 'client-model',
        responseId: 'rt',
      },
    ];
    const toHub = geminiAdapter.streamToHub(ctx);
    const fromHub = geminiAdapter.streamFromHub(ctx);
    const out: any[] = [];
    for (const c of geminiChunks) {
      for (const event of toHub.push({ data: JSON.stringify(c) })) out.push(...fromHub.push(event).map(parse));
    }
    for (const event of toHub.end()) out.push(...fromHub.push(event).map(parse));
    out.push(...fromHub.end().map(parse));
    expect(out).toEqual(geminiChunks);
  });
});
