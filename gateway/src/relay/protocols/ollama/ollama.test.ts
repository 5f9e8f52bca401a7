import { describe, expect, it } from 'vitest';
import type { ChannelSnapshot } from '../../types.ts';
import { ollamaChatAdapter } from './convert/chat.ts';
import { ollamaEmbedAdapter } from './convert/embed.ts';
import { ollamaProvider } from './index.ts';
import { NdjsonDecoder } from './stream.ts';

const ctx = { model: 'llama3.1', upstreamModel: 'llama3.1', stream: true };

describe('Ollama requests', () => {
  const build = (format: 'ollama-chat' | 'ollama-embed' | 'openai-completions', key = '') =>
    ollamaProvider.buildRequest({
      format,
      channel: { id: 1, type: 4, baseUrl: 'http://gpu:11434/', other: '' } as ChannelSnapshot,
      key,
      upstreamModel: 'llama3.1',
      body: '{}',
      stream: false,
      options: undefined as never,
      clientHeaders: {},
    });

  it('goes to /api/chat and /api/embed, legacy completions to /v1, with a proxy key only when set', () => {
    expect(build('ollama-chat')).toMatchObject({
      url: 'http://gpu:11434/api/chat',
      headers: { 'content-type': 'application/json' },
    });
    expect(build('ollama-chat').headers.authorization).toBeUndefined();
    expect(build('ollama-embed', 'proxy').headers.authorization).toBe('Bearer proxy');
    expect(build('openai-completions', 'k').url).toBe('http://gpu:11434/v1/completions');
  });

  it('converts hub chat: options, images, tool calls with object arguments, tool names', () => {
    const body = ollamaChatAdapter.requestFromHub(
      {
        messages: [
          { role: 'developer', content: 'sys' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'see' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            ],
          },
          {
            role: 'assistant',
            content: '',
            tool_calls: [{ id: 'c9', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
          },
          { role: 'tool', tool_call_id: 'c9', content: 'done' },
        ],
        max_tokens: 20,
        stop: ['END'],
        seed: 4,
        response_format: { type: 'json_object' },
      },
      ctx,
    );
    expect(body).toEqual({
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'see', images: ['AAAA'] },
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'f', arguments: { x: 1 } } }] },
        { role: 'tool', content: 'done', tool_name: 'f' },
      ],
      stream: false,
      options: { seed: 4, num_predict: 20, stop: ['END'] },
      format: 'json',
    });
  });
});

describe('Ollama answers', () => {
  const lines = [
    {
      model: 'llama3.1',
      created_at: '2025-01-01T00:00:00Z',
      message: { role: 'assistant', content: 'Hé' },
      done: false,
    },
    {
      model: 'llama3.1',
      created_at: '2025-01-01T00:00:00Z',
      message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'f', arguments: { a: 'b' } } }] },
      done: false,
    },
    {
      model: 'llama3.1',
      created_at: '2025-01-01T00:00:00Z',
      message: { role: 'assistant', content: '' },
      done: true,
      done_reason: 'stop',
      prompt_eval_count: 11,
      eval_count: 4,
    },
  ];

  it('decodes NDJSON split anywhere, a last line without newline included', () => {
    const bytes = Buffer.from(lines.map((line) => JSON.stringify(line)).join('\n'));
    for (const size of [1, 2, 17, bytes.length]) {
      const decoder = new NdjsonDecoder();
      const events = [];
      for (let i = 0; i < bytes.length; i += size) events.push(...decoder.push(bytes.subarray(i, i + size)));
      events.push(...decoder.end());
      expect(
        events.map((e) => JSON.parse(e.data)),
        `chunks of ${size}`,
      ).toEqual(lines);
    }
    expect(ollamaProvider.streamDecoder!('application/x-ndjson')).toBeInstanceOf(NdjsonDecoder);
    expect(ollamaProvider.streamDecoder!('application/json')).toBeUndefined();
  });

  it('streams hub chunks with tool calls, finish and usage; the observer agrees', () => {
    const converter = ollamaChatAdapter.streamToHub(ctx);
    const observer = ollamaProvider.streamObserver('ollama-chat');
    const chunks = lines.flatMap((line) => {
      const event = { data: JSON.stringify(line) };
      observer.observe(event);
      return converter.push(event);
    });
    const parsed = chunks.map((c) => JSON.parse(c.data));
    expect(parsed[0].choices[0].delta).toEqual({ role: 'assistant', content: 'Hé' });
    expect(parsed[1].choices[0].delta.tool_calls).toEqual([
      { index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '{"a":"b"}' } },
    ]);
    expect(parsed[2].choices[0].finish_reason).toBe('tool_calls');
    expect(parsed[3].usage).toEqual({ prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 });
    expect([observer.text, observer.toolCalls, observer.usage]).toEqual([
      'Hé',
      1,
      { promptTokens: 11, completionTokens: 4 },
    ]);
  });

  it('reads whole answers, embeddings and errors', () => {
    const whole = ollamaChatAdapter.responseToHub(
      { ...lines[2], message: { role: 'assistant', content: 'x', thinking: 'hmm' }, done_reason: 'length' },
      ctx,
    );
    expect(whole.choices[0]).toMatchObject({
      message: { content: 'x', reasoning_content: 'hmm' },
      finish_reason: 'length',
    });
    expect(ollamaProvider.usageFromBody('ollama-chat', lines[2])).toEqual({ promptTokens: 11, completionTokens: 4 });
    expect(ollamaEmbedAdapter.requestFromHub({ model: 'm', input: 'a', dimensions: 8 }, ctx)).toEqual({
      input: 'a',
      dimensions: 8,
    });
    expect(ollamaEmbedAdapter.responseToHub({ embeddings: [[1], [2]], prompt_eval_count: 3 }, ctx)).toEqual({
      object: 'list',
      model: 'llama3.1',
      data: [
        { object: 'embedding', index: 0, embedding: [1] },
        { object: 'embedding', index: 1, embedding: [2] },
      ],
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
    expect(ollamaProvider.parseError(404, '{"error":"model \\"x\\" not found, try pulling it first"}')).toEqual({
      status: 404,
      message: 'model "x" not found, try pulling it first',
      type: 'ollama_error',
      code: null,
    });
  });
});
