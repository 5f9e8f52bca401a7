import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../errors.ts';
import { ResponsesConversionError } from './common.ts';
import { responsesAdapter } from './index.ts';
import { ctx } from './test-support.ts';

const toHub = (body: Record<string, unknown>) => responsesAdapter.requestToHub(body, ctx);
const fromHub = (body: Record<string, unknown>) => responsesAdapter.requestFromHub(body, ctx);

describe('Responses request → chat request', () => {
  it('maps a whole conversation: instructions, messages, calls, outputs, reasoning, tools and parameters', () => {
    const chat = toHub({
      model: 'gpt-5',
      instructions: 'Be brief.',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Answer in French.' }] },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is here?' },
            { type: 'input_image', image_url: 'https://img.example/a.png', detail: 'high' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'original' },
            { type: 'input_image', file_id: 'file-img', detail: 'auto' },
            { type: 'input_file', file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' },
          ],
        },
        {
          type: 'message',
          id: 'msg_old',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'A cat.', annotations: [] }],
        },
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          type: 'reasoning',
          id: 'rs_1',
          summary: [
            { type: 'summary_text', text: 'Need weather.' },
            { type: 'summary_text', text: 'Two cities.' },
          ],
          encrypted_content: 'sig-1',
        },
        { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_b', name: 'weather', arguments: { city: 'Rome' } },
        { type: 'function_call_output', call_id: 'call_a', output: 'sunny' },
        { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: 'rain' }] },
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
      ],
      tools: [
        {
          type: 'function',
          name: 'weather',
          description: 'Weather of a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: true,
        },
        { type: 'web_search_preview' },
      ],
      tool_choice: { type: 'function', name: 'weather' },
      parallel_tool_calls: true,
      max_output_tokens: 500,
      temperature: 0.2,
      top_p: 0.9,
      reasoning: { effort: 'high', summary: 'auto' },
      text: {
        format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true },
        verbosity: 'low',
      },
      stream: true,
      store: true,
      include: ['reasoning.encrypted_content'],
      metadata: { a: '1' },
      truncation: 'auto',
      user: 'u-1',
    });
    expect(chat).toEqual({
      model: 'gpt-5',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Answer in French.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is here?' },
            { type: 'image_url', image_url: { url: 'https://img.example/a.png', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            { type: 'file', file: { file_id: 'file-img' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' } },
          ],
        },
        { role: 'assistant', content: 'A cat.' },
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'Need weather.\n\nTwo cities.',
          reasoning_signature: 'sig-1',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: 'sunny' },
        { role: 'tool', tool_call_id: 'call_b', content: 'rain' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'weather',
            description: 'Weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
            strict: true,
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'weather' } },
      parallel_tool_calls: true,
      max_completion_tokens: 500,
      temperature: 0.2,
      top_p: 0.9,
      reasoning_effort: 'high',
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', schema: { type: 'object' }, strict: true },
      },
      verbosity: 'low',
      stream: true,
      stream_options: { include_usage: true },
      user: 'u-1',
    });
  });

  it('takes a string input as one user message and leaves out what was not asked', () => {
    expect(toHub({ model: 'm', input: 'Hi' })).toEqual({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] });
  });

  it('puts reasoning and text of one assistant turn in one message, and drops a turn with only reasoning', () => {
    const chat = toHub({
      model: 'm',
      input: [
        { role: 'user', content: 'a' },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'think' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'b' }] },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'ok' },
        { type: 'reasoning', id: 'rs_2', summary: [{ type: 'summary_text', text: 'lost' }] },
        { role: 'user', content: 'c' },
      ],
    });
    expect(chat.messages).toEqual([
      { role: 'user', content: 'a' },
      {
        role: 'assistant',
        content: 'b',
        reasoning_content: 'think',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
      { role: 'user', content: 'c' },
    ]);
  });

  it('keeps an assistant refusal', () => {
    const chat = toHub({
      model: 'm',
      input: [{ role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] }],
    });
    expect(chat.messages).toEqual([{ role: 'assistant', content: '', refusal: 'No.' }]);
  });

  it('offers only the allowed functions for allowed_tools, and no tools when only built-in ones were given', () => {
    const tools = [
      { type: 'function', name: 'a', parameters: { type: 'object' } },
      { type: 'function', name: 'b', parameters: { type: 'object' } },
    ];
    const allowed = toHub({
      model: 'm',
      input: 'x',
      tools,
      tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'b' }] },
    });
    expect(allowed.tools.map((t: any) => t.function.name)).toEqual(['b']);
    expect(allowed.tool_choice).toBe('required');

    const builtIn = toHub({
      model: 'm',
      input: 'x',
      tools: [{ type: 'web_search_preview' }, { type: 'file_search', vector_store_ids: ['vs'] }],
      tool_choice: { type: 'web_search_preview' },
    });
    expect(builtIn.tools).toBeUndefined();
    expect(builtIn.tool_choice).toBeUndefined();

    expect(toHub({ model: 'm', input: 'x', tools, tool_choice: 'none' }).tool_choice).toBe('none');
  });

  it('maps json_object and leaves a plain text format out', () => {
    expect(toHub({ model: 'm', input: 'x', text: { format: { type: 'json_object' } } }).response_format).toEqual({
      type: 'json_object',
    });
    expect(toHub({ model: 'm', input: 'x', text: { format: { type: 'text' } } }).response_format).toBeUndefined();
  });

  it.each([
    ['previous_response_id', { previous_response_id: 'resp_1' }],
    ['conversation', { conversation: 'conv_1' }],
    ['background', { background: true }],
    ['prompt', { prompt: { id: 'pmpt_1' } }],
    ['item_reference', { input: [{ type: 'item_reference', id: 'msg_1' }] }],
    ['file_url', { input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://f.example/a.pdf' }] }] }],
  ])('refuses %s with a 400 invalid_request naming it', (name, extra) => {
    let caught: unknown;
    try {
      toHub({ model: 'm', input: 'x', ...extra });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ResponsesConversionError);
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).status).toBe(400);
    expect((caught as AppError).code).toBe('invalid_request');
    expect((caught as AppError).message).toContain(name);
  });

  it('accepts empty stateful fields', () => {
    expect(() =>
      toHub({
        model: 'm',
        input: 'x',
        previous_response_id: null,
        conversation: null,
        background: false,
        store: false,
      }),
    ).not.toThrow();
  });
});

describe('chat request → Responses request', () => {
  it('maps a whole conversation: system messages, parts, tool calls and results, tools and parameters', () => {
    const request = fromHub({
      model: 'gpt-5',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is here?' },
            { type: 'image_url', image_url: { url: 'https://img.example/a.png', detail: 'low' } },
            { type: 'image_url', image_url: { url: 'https://img.example/b.png' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Let me look.',
          reasoning_content: 'Need weather.',
          reasoning_signature: 'enc-1',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: [{ type: 'text', text: 'sunny' }] },
        { role: 'system', content: 'Mid-conversation note.' },
        { role: 'assistant', content: 'Sunny.', reasoning_content: 'no signature: dropped' },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'weather', description: 'Weather', parameters: { type: 'object', properties: {} } },
        },
        { type: 'function', function: { name: 'now', strict: true } },
      ],
      tool_choice: { type: 'function', function: { name: 'weather' } },
      web_search_options: {
        search_context_size: 'low',
        user_location: { type: 'approximate', approximate: { city: 'Paris', country: 'FR' } },
      },
      parallel_tool_calls: false,
      max_tokens: 300,
      max_completion_tokens: 400,
      temperature: 0.5,
      top_p: 0.8,
      reasoning_effort: 'low',
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', description: 'd', schema: { type: 'object' }, strict: true },
      },
      verbosity: 'high',
      stream: true,
      stream_options: { include_usage: true },
      stop: ['END'],
      seed: 3,
      n: 1,
      metadata: { k: 'v' },
      user: 'u-1',
    });
    expect(request).toEqual({
      model: 'gpt-5',
      instructions: 'Be brief.\n\nAnswer in French.',
      input: [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is here?' },
            { type: 'input_image', image_url: 'https://img.example/a.png', detail: 'low' },
            { type: 'input_image', image_url: 'https://img.example/b.png', detail: 'auto' },
            { type: 'input_file', file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' },
          ],
        },
        {
          type: 'reasoning',
          summary: [{ type: 'summary_text', text: 'Need weather.' }],
          encrypted_content: 'enc-1',
        },
        { type: 'message', role: 'assistant', content: 'Let me look.' },
        { type: 'function_call', call_id: 'call_a', name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_a', output: 'sunny' },
        { type: 'message', role: 'system', content: 'Mid-conversation note.' },
        { type: 'message', role: 'assistant', content: 'Sunny.' },
        { type: 'message', role: 'user', content: 'Thanks' },
      ],
      tools: [
        {
          type: 'function',
          name: 'weather',
          description: 'Weather',
          parameters: { type: 'object', properties: {} },
          strict: false,
        },
        { type: 'function', name: 'now', parameters: { type: 'object', properties: {} }, strict: true },
        {
          type: 'web_search_preview',
          search_context_size: 'low',
          user_location: { type: 'approximate', city: 'Paris', country: 'FR' },
        },
      ],
      tool_choice: { type: 'function', name: 'weather' },
      parallel_tool_calls: false,
      max_output_tokens: 400,
      temperature: 0.5,
      top_p: 0.8,
      reasoning: { effort: 'low' },
      text: {
        format: { type: 'json_schema', name: 'answer', description: 'd', schema: { type: 'object' }, strict: true },
        verbosity: 'high',
      },
      store: false,
      stream: true,
      metadata: { k: 'v' },
      user: 'u-1',
    });
  });

  it('raises max_output_tokens to the Responses minimum and keeps an explicit store', () => {
    const request = fromHub({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1, store: true });
    expect(request.max_output_tokens).toBe(16);
    expect(request.store).toBe(true);
    expect(request.instructions).toBeUndefined();
  });

  it('maps allowed_tools and json_object', () => {
    const request = fromHub({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', function: { name: 'a' } }],
      tool_choice: {
        type: 'allowed_tools',
        allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'a' } }] },
      },
      response_format: { type: 'json_object' },
    });
    expect(request.tool_choice).toEqual({
      type: 'allowed_tools',
      mode: 'required',
      tools: [{ type: 'function', name: 'a' }],
    });
    expect(request.text).toEqual({ format: { type: 'json_object' } });
  });

  it('refuses n > 1 with a 400', () => {
    expect(() => fromHub({ model: 'm', messages: [], n: 2 })).toThrow(ResponsesConversionError);
    expect(() => fromHub({ model: 'm', messages: [], n: 2 })).toThrow(/n greater than 1/);
  });
});

describe('request round trips', () => {
  it('Responses → chat → Responses keeps the conversation, tools and parameters', () => {
    const original = {
      model: 'gpt-5',
      instructions: 'Be brief.',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather?' }] },
        {
          type: 'reasoning',
          summary: [{ type: 'summary_text', text: 'Look it up.' }],
          encrypted_content: 'enc',
        },
        { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
        { type: 'message', role: 'assistant', content: 'Sunny.' },
      ],
      tools: [{ type: 'function', name: 'weather', parameters: { type: 'object', properties: {} }, strict: false }],
      tool_choice: 'auto',
      max_output_tokens: 100,
      temperature: 1,
      reasoning: { effort: 'medium' },
      text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object' }, strict: true } },
      stream: true,
    };
    const back = fromHub(toHub(original));
    expect(back).toEqual({ ...original, store: false });
  });

  it('chat → Responses → chat keeps the messages, tools and parameters', () => {
    const original = {
      model: 'gpt-5',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'Look it up.',
          reasoning_signature: 'enc',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        { role: 'assistant', content: 'Sunny.' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'weather', parameters: { type: 'object', properties: {} }, strict: false },
        },
      ],
      tool_choice: 'required',
      max_completion_tokens: 100,
      top_p: 0.5,
      reasoning_effort: 'minimal',
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
      stream: true,
      stream_options: { include_usage: true },
    };
    expect(toHub(fromHub(original))).toEqual(original);
  });
});
