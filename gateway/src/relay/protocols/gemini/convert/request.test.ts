import { describe, expect, it } from 'vitest';
import type { ConvertContext } from '../../../convert/types.ts';
import { geminiAdapter } from './index.ts';

const ctx = (stream = false): ConvertContext => ({ model: 'gemini-2.5-flash', upstreamModel: 'gpt-4o', stream });

const weatherDeclaration = {
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: {
    type: 'OBJECT',
    properties: { city: { type: 'STRING', description: 'City name' }, days: { type: 'INTEGER', nullable: true } },
    required: ['city'],
  },
};

describe('Gemini request → hub', () => {
  it('maps the system instruction, roles, text and the model/stream from the context', () => {
    const hub = geminiAdapter.requestToHub(
      {
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        contents: [
          { role: 'user', parts: [{ text: 'Hi' }] },
          { role: 'model', parts: [{ text: 'Hello' }, { text: ' there' }] },
          { parts: [{ text: 'Part one' }, { text: 'part two' }] },
        ],
      },
      ctx(true),
    );
    expect(hub).toEqual({
      model: 'gemini-2.5-flash',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello there' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Part one' },
            { type: 'text', text: 'part two' },
          ],
        },
      ],
    });
    expect(geminiAdapter.requestToHub({ contents: [] }, ctx(false))).toMatchObject({ stream: false });
  });

  it('reads snake_case fields as Google accepts them', () => {
    const hub = geminiAdapter.requestToHub(
      {
        system_instruction: { parts: [{ text: 'sys' }] },
        contents: [{ role: 'user', parts: [{ inline_data: { mime_type: 'image/png', data: 'AAA=' } }] }],
        generation_config: { max_output_tokens: 50, top_p: 0.5 },
      },
      ctx(),
    );
    expect(hub.messages[0]).toEqual({ role: 'system', content: 'sys' });
    expect(hub.messages[1].content).toEqual([{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAA=' } }]);
    expect(hub).toMatchObject({ max_tokens: 50, top_p: 0.5 });
  });

  it('maps inline data and file URIs to image, audio and file parts', () => {
    const hub = geminiAdapter.requestToHub(
      {
        contents: [
          {
            role: 'user',
            parts: [
              { text: 'What is this?' },
              { inlineData: { mimeType: 'image/jpeg', data: 'SU1H' } },
              { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/cat.png' } },
              { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
              { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
            ],
          },
        ],
      },
      ctx(),
    );
    expect(hub.messages[0].content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,SU1H' } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
      { type: 'file', file: { filename: 'file.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
    ]);
  });

  it('maps function declarations, both schema styles, and the calling modes', () => {
    const body = {
      contents: [{ role: 'user', parts: [{ text: 'Weather?' }] }],
      tools: [
        {
          functionDeclarations: [
            weatherDeclaration,
            { name: 'raw', parametersJsonSchema: { type: 'object', properties: { q: { type: 'string' } } } },
            { name: 'noargs' },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
    };
    const hub = geminiAdapter.requestToHub(body, ctx());
    expect(hub.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather of a city',
          parameters: {
            type: 'object',
            properties: {
              city: { type: 'string', description: 'City name' },
              days: { type: ['integer', 'null'] },
            },
            required: ['city'],
          },
        },
      },
      {
        type: 'function',
        function: { name: 'raw', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
      },
      { type: 'function', function: { name: 'noargs', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(hub.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });

    const mode = (functionCallingConfig: object) =>
      geminiAdapter.requestToHub({ ...body, toolConfig: { functionCallingConfig } }, ctx()).tool_choice;
    expect(mode({ mode: 'AUTO' })).toBe('auto');
    expect(mode({ mode: 'NONE' })).toBe('none');
    expect(mode({ mode: 'ANY' })).toBe('required');
    expect(mode({ mode: 'ANY', allowedFunctionNames: ['a', 'b'] })).toEqual({
      type: 'allowed_tools',
      allowed_tools: {
        mode: 'required',
        tools: [
          { type: 'function', function: { name: 'a' } },
          { type: 'function', function: { name: 'b' } },
        ],
      },
    });
    expect(geminiAdapter.requestToHub({ contents: [], tools: [{ googleSearch: {} }] }, ctx())).toMatchObject({
      web_search_options: {},
    });
  });

  it('gives function calls stable ids and answers them by name and order', () => {
    const body = {
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Paris and Rome, and the time?' }] },
        {
          role: 'model',
          parts: [
            { text: 'Let me check.' },
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-1' },
            { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
            { functionCall: { name: 'get_time', args: {} } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_time', response: { output: '12:00' } } },
            { functionResponse: { name: 'get_weather', response: { temperature: 20 } } },
            { functionResponse: { name: 'get_weather', response: { temperature: 25 } } },
            { text: 'Thanks' },
          ],
        },
      ],
    };
    const hub = geminiAdapter.requestToHub(body, ctx());
    expect(hub.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Rome, and the time?' },
      {
        role: 'assistant',
        content: 'Let me check.',
        reasoning_signature: 'sig-1',
        tool_calls: [
          { id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_2', content: '12:00' },
      { role: 'tool', tool_call_id: 'call_0', content: '{"temperature":20}' },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temperature":25}' },
      { role: 'user', content: 'Thanks' },
    ]);
    // The same history gets the same ids every time (they are derived, not random).
    expect(geminiAdapter.requestToHub(body, ctx())).toEqual(hub);
  });

  it('keeps thoughts and their signature as reasoning_content / reasoning_signature', () => {
    const hub = geminiAdapter.requestToHub(
      {
        contents: [
          { role: 'user', parts: [{ text: 'q' }] },
          {
            role: 'model',
            parts: [
              { text: 'pondering', thought: true },
              { text: 'answer', thoughtSignature: 'c2ln' },
            ],
          },
        ],
      },
      ctx(),
    );
    expect(hub.messages[1]).toEqual({
      role: 'assistant',
      content: 'answer',
      reasoning_content: 'pondering',
      reasoning_signature: 'c2ln',
    });
  });

  it('maps the generation config', () => {
    const hub = geminiAdapter.requestToHub(
      {
        contents: [],
        generationConfig: {
          temperature: 0.3,
          topP: 0.9,
          topK: 40,
          maxOutputTokens: 256,
          stopSequences: ['END'],
          candidateCount: 2,
          seed: 7,
          presencePenalty: 0.1,
          frequencyPenalty: 0.2,
          responseMimeType: 'application/json',
          responseSchema: { type: 'OBJECT', properties: { a: { type: 'STRING' } } },
          thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
        },
      },
      ctx(),
    );
    expect(hub).toMatchObject({
      temperature: 0.3,
      top_p: 0.9,
      max_tokens: 256,
      stop: ['END'],
      n: 2,
      seed: 7,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'response', schema: { type: 'object', properties: { a: { type: 'string' } } } },
      },
      reasoning_effort: 'medium',
    });
    expect(hub.top_k).toBeUndefined();
    const json = geminiAdapter.requestToHub(
      {
        contents: [],
        generationConfig: { responseMimeType: 'application/json', thinkingConfig: { thinkingLevel: 'HIGH' } },
      },
      ctx(),
    );
    expect(json).toMatchObject({ response_format: { type: 'json_object' }, reasoning_effort: 'high' });
    const off = geminiAdapter.requestToHub(
      { contents: [], generationConfig: { thinkingConfig: { thinkingBudget: 0 } } },
      ctx(),
    );
    expect(off.reasoning_effort).toBeUndefined();
  });
});

describe('hub request → Gemini', () => {
  it('maps system messages, roles, media and merges consecutive turns', () => {
    const gemini = geminiAdapter.requestFromHub(
      {
        model: 'gpt-4o',
        stream: true,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
          { role: 'user', content: 'Hi' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBO' } },
              { type: 'image_url', image_url: { url: 'https://example.com/a.jpg', detail: 'high' } },
              { type: 'input_audio', input_audio: { data: 'SUQz', format: 'mp3' } },
              { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBE' } },
            ],
          },
          { role: 'assistant', content: 'Hello' },
        ],
      },
      ctx(),
    );
    expect(gemini).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Use metric units.' }] },
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'Hi' },
            { text: 'Look' },
            { inlineData: { mimeType: 'image/png', data: 'iVBO' } },
            { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/a.jpg' } },
            { inlineData: { mimeType: 'audio/mp3', data: 'SUQz' } },
            { inlineData: { mimeType: 'application/pdf', data: 'JVBE' } },
          ],
        },
        { role: 'model', parts: [{ text: 'Hello' }] },
      ],
    });
    expect(gemini.model).toBeUndefined();
    expect(gemini.stream).toBeUndefined();
  });

  it('maps tool calls and tool results, naming each result after its call', () => {
    const gemini = geminiAdapter.requestFromHub(
      {
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: null,
            reasoning_content: 'I should call the tool',
            reasoning_signature: 'sig',
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_b', content: 'noon' },
          { role: 'tool', tool_call_id: 'call_a', content: '{"temperature":20}' },
          { role: 'user', content: 'And tomorrow?' },
        ],
      },
      ctx(),
    );
    expect(gemini.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather?' }] },
      {
        role: 'model',
        parts: [
          { text: 'I should call the tool', thought: true },
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig' },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_time', response: { output: 'noon' } } },
          { functionResponse: { name: 'get_weather', response: { temperature: 20 } } },
          { text: 'And tomorrow?' },
        ],
      },
    ]);
  });

  it('maps tools, tool_choice and a cleaned schema', () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'search',
          description: 'Search',
          strict: true,
          parameters: {
            $schema: 'http://json-schema.org/draft-07/schema#',
            type: 'object',
            additionalProperties: false,
            properties: {
              query: { type: 'string', format: 'uri', minLength: 1 },
              when: { type: 'string', format: 'date-time' },
              limit: { type: ['integer', 'null'], enum: [1, 2] },
              kind: { const: 'web' },
              filter: { $ref: '#/$defs/Filter' },
              tags: { items: { type: 'string' }, maxItems: 3 },
              choice: { oneOf: [{ type: 'string' }, { type: 'number' }] },
            },
            required: ['query'],
            $defs: { Filter: { type: 'object', properties: { lang: { type: 'string' } } } },
          },
        },
      },
      { type: 'function', function: { name: 'ping', parameters: { type: 'object', properties: {} } } },
    ];
    const gemini = geminiAdapter.requestFromHub(
      { messages: [{ role: 'user', content: 'x' }], tools, tool_choice: 'required', web_search_options: {} },
      ctx(),
    );
    expect(gemini.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'search',
            description: 'Search',
            parameters: {
              type: 'OBJECT',
              properties: {
                query: { type: 'STRING', minLength: 1 },
                when: { type: 'STRING', format: 'date-time' },
                limit: { type: 'INTEGER', nullable: true },
                kind: { type: 'STRING', enum: ['web'] },
                filter: { type: 'OBJECT', properties: { lang: { type: 'STRING' } } },
                tags: { type: 'ARRAY', items: { type: 'STRING' }, maxItems: 3 },
                choice: { anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }] },
              },
              required: ['query'],
            },
          },
          { name: 'ping' },
        ],
      },
      { googleSearch: {} },
    ]);
    expect(gemini.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    const choice = (tool_choice: unknown) =>
      geminiAdapter.requestFromHub({ messages: [], tools, tool_choice }, ctx()).toolConfig;
    expect(choice('auto')).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(choice('none')).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(choice({ type: 'function', function: { name: 'ping' } })).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['ping'] },
    });
    expect(choice(undefined)).toBeUndefined();
  });

  it('maps sampling, limits, stop, n, response_format and reasoning effort', () => {
    const gemini = geminiAdapter.requestFromHub(
      {
        messages: [{ role: 'user', content: 'x' }],
        temperature: 0.2,
        top_p: 0.8,
        max_completion_tokens: 300,
        max_tokens: 100,
        stop: 'STOP',
        n: 2,
        seed: 1,
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'r', schema: { type: 'object', properties: { a: { type: 'number' } } } },
        },
        reasoning_effort: 'low',
      },
      ctx(),
    );
    expect(gemini.generationConfig).toEqual({
      temperature: 0.2,
      topP: 0.8,
      maxOutputTokens: 300,
      stopSequences: ['STOP'],
      candidateCount: 2,
      seed: 1,
      responseMimeType: 'application/json',
      responseSchema: { type: 'OBJECT', properties: { a: { type: 'NUMBER' } } },
      thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 },
    });
    const none = geminiAdapter.requestFromHub({ messages: [], max_tokens: 9, reasoning_effort: 'none' }, ctx());
    expect(none.generationConfig).toEqual({ maxOutputTokens: 9, thinkingConfig: { thinkingBudget: 0 } });
    expect(geminiAdapter.requestFromHub({ messages: [] }, ctx()).generationConfig).toBeUndefined();
  });
});

describe('round trips', () => {
  it('Gemini → hub → Gemini keeps the conversation', () => {
    const original = {
      systemInstruction: { parts: [{ text: 'sys' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Weather?' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
        {
          role: 'model',
          parts: [
            { text: 'thinking', thought: true },
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig' },
          ],
        },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temperature: 20 } } }] },
        { role: 'model', parts: [{ text: 'It is 20 degrees.' }] },
      ],
      tools: [{ functionDeclarations: [weatherDeclaration] }],
      toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
      generationConfig: { temperature: 0.5, maxOutputTokens: 100, stopSequences: ['x'] },
    };
    const back = geminiAdapter.requestFromHub(geminiAdapter.requestToHub(original, ctx()), ctx());
    expect(back).toEqual(original);
  });

  it('hub → Gemini → hub keeps the conversation (ids re-derived)', () => {
    const original = {
      model: 'gemini-2.5-flash',
      stream: false,
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          reasoning_signature: 'sig',
          tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'w', arguments: '{"c":"P"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_0', content: 'sunny' },
        { role: 'assistant', content: 'Sunny.' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'w', parameters: { type: 'object', properties: { c: { type: 'string' } } } },
        },
      ],
      tool_choice: 'auto',
      temperature: 1,
      max_tokens: 10,
    };
    expect(geminiAdapter.requestToHub(geminiAdapter.requestFromHub(original, ctx()), ctx())).toEqual(original);
  });
});
