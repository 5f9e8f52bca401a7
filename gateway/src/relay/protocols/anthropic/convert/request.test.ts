import { describe, expect, it } from 'vitest';
import { claudeAdapter } from './index.ts';

const ctx = { model: 'claude-sonnet-4', upstreamModel: 'claude-sonnet-4-20250514', stream: false };
const toHub = (body: Record<string, any>) => claudeAdapter.requestToHub(body, ctx);
const fromHub = (body: Record<string, any>) => claudeAdapter.requestFromHub(body, ctx);

const PNG = 'iVBORw0KGgo=';

describe('Claude request → hub', () => {
  it('maps the system prompt, turns, sampling, stop sequences, stream and user', () => {
    const hub = toHub({
      model: 'claude-sonnet-4',
      system: [
        { type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Answer in French.' },
      ],
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [{ type: 'text', text: 'Salut' }] },
        { role: 'user', content: [{ type: 'text', text: 'Again' }] },
      ],
      max_tokens: 512,
      temperature: 0.3,
      top_p: 0.9,
      stop_sequences: ['END'],
      stream: true,
      metadata: { user_id: 'user-42' },
    });
    expect(hub).toEqual({
      model: 'claude-sonnet-4',
      messages: [
        { role: 'system', content: 'You are terse.\nAnswer in French.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Salut' },
        { role: 'user', content: 'Again' },
      ],
      max_tokens: 512,
      temperature: 0.3,
      top_p: 0.9,
      stop: ['END'],
      stream: true,
      stream_options: { include_usage: true },
      user: 'user-42',
    });
    expect(toHub({ system: 'Plain', messages: [], max_tokens: 1 }).messages).toEqual([
      { role: 'system', content: 'Plain' },
    ]);
  });

  it('maps base64 and URL images, and PDFs', () => {
    const hub = toHub({
      max_tokens: 10,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            { type: 'image', source: { type: 'url', url: 'https://img.example/cat.jpg' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
          ],
        },
      ],
    });
    expect(hub.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'image_url', image_url: { url: 'https://img.example/cat.jpg' } },
          { type: 'file', file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
        ],
      },
    ]);
  });

  it('maps tools, every tool_choice and parallel calls; server tools stay behind', () => {
    const tools = [
      { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: {} } } },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
    ];
    const base = { max_tokens: 10, messages: [{ role: 'user', content: 'x' }], tools };
    const hub = toHub({ ...base, tool_choice: { type: 'auto', disable_parallel_tool_use: true } });
    expect(hub.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather',
          parameters: { type: 'object', properties: { city: {} } },
        },
      },
    ]);
    expect([hub.tool_choice, hub.parallel_tool_calls]).toEqual(['auto', false]);
    expect(toHub({ ...base, tool_choice: { type: 'any' } }).tool_choice).toBe('required');
    expect(toHub({ ...base, tool_choice: { type: 'none' } }).tool_choice).toBe('none');
    expect(toHub({ ...base, tool_choice: { type: 'tool', name: 'get_weather' } }).tool_choice).toEqual({
      type: 'function',
      function: { name: 'get_weather' },
    });
    expect(toHub({ ...base, tools: [tools[1]], tool_choice: { type: 'any' } })).not.toHaveProperty('tools');
  });

  it('turns tool_use into tool_calls and tool_result blocks into tool messages before the rest of the turn', () => {
    const hub = toHub({
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Two calls.', signature: 'sig-1' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_2',
              content: [
                { type: 'text', text: 'Rainy' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
              ],
              is_error: false,
            },
            { type: 'text', text: 'Thanks' },
          ],
        },
      ],
    });
    expect(hub.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: 'Checking.',
        reasoning_content: 'Two calls.',
        reasoning_signature: 'sig-1',
        redacted_reasoning: ['opaque'],
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Sunny' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Rainy' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
    // An assistant turn of tool calls only has null content, as OpenAI sends it.
    const only = toHub({
      max_tokens: 1,
      messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] }],
    });
    expect(only.messages[0]).toMatchObject({ content: null, tool_calls: [{ function: { arguments: '{}' } }] });
  });

  it('maps thinking to a reasoning effort', () => {
    const effort = (thinking: unknown, extra: Record<string, any> = {}) =>
      toHub({ max_tokens: 32000, messages: [], thinking, ...extra }).reasoning_effort;
    expect(effort({ type: 'enabled', budget_tokens: 1024 })).toBe('low');
    expect(effort({ type: 'enabled', budget_tokens: 8000 })).toBe('medium');
    expect(effort({ type: 'enabled', budget_tokens: 20000 })).toBe('high');
    expect(effort({ type: 'adaptive' }, { output_config: { effort: 'low' } })).toBe('low');
    expect(effort({ type: 'disabled' })).toBeUndefined();
  });
});

describe('hub request → Claude', () => {
  it('collects system and developer messages, keeps turns and maps sampling, stop, stream and user', () => {
    const claude = fromHub({
      model: 'gpt-name',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'No emojis.' }] },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello' },
        { role: 'user', content: [{ type: 'text', text: 'Bye' }] },
      ],
      max_completion_tokens: 300,
      max_tokens: 100,
      temperature: 1.6,
      top_p: 0.5,
      stop: 'STOP',
      stream: true,
      stream_options: { include_usage: true },
      user: 'u-7',
      n: 1,
      presence_penalty: 0.2,
    });
    expect(claude).toEqual({
      model: 'gpt-name',
      system: [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'No emojis.' },
      ],
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello' },
        { role: 'user', content: 'Bye' },
      ],
      max_tokens: 300,
      temperature: 1,
      top_p: 0.5,
      stop_sequences: ['STOP'],
      stream: true,
      metadata: { user_id: 'u-7' },
    });
    expect(fromHub({ messages: [{ role: 'system', content: 'One' }], max_tokens: 5 })).toMatchObject({
      system: 'One',
      max_tokens: 5,
    });
    // No max_tokens at all: left for the provider's default.
    expect(fromHub({ messages: [] })).not.toHaveProperty('max_tokens');
  });

  it('maps data: and http images, PDFs, and keeps cache_control on parts', () => {
    const claude = fromHub({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look', cache_control: { type: 'ephemeral' } },
            { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${PNG}`, detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://img.example/a.png' } },
            { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
            { type: 'input_audio', input_audio: { data: 'xx', format: 'wav' } },
          ],
        },
      ],
    });
    expect(claude.messages[0].content).toEqual([
      { type: 'text', text: 'Look', cache_control: { type: 'ephemeral' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: PNG } },
      { type: 'image', source: { type: 'url', url: 'https://img.example/a.png' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf' },
    ]);
  });

  it('maps tools and every tool_choice; parallel_tool_calls false disables parallel use', () => {
    const tools = [
      { type: 'function', function: { name: 'f', description: 'F', parameters: { type: 'object', properties: {} } } },
      { type: 'function', function: { name: 'g' } },
    ];
    const base = { messages: [{ role: 'user', content: 'x' }], tools };
    const claude = fromHub({ ...base, tool_choice: 'auto' });
    expect(claude.tools).toEqual([
      { name: 'f', description: 'F', input_schema: { type: 'object', properties: {} } },
      { name: 'g', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(claude.tool_choice).toEqual({ type: 'auto' });
    expect(fromHub({ ...base, tool_choice: 'required' }).tool_choice).toEqual({ type: 'any' });
    expect(fromHub({ ...base, tool_choice: 'none' }).tool_choice).toEqual({ type: 'none' });
    expect(fromHub({ ...base, tool_choice: { type: 'function', function: { name: 'g' } } }).tool_choice).toEqual({
      type: 'tool',
      name: 'g',
    });
    expect(fromHub({ ...base, parallel_tool_calls: false }).tool_choice).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    });
    expect(fromHub({ ...base, tools: [], tool_choice: 'required' })).not.toHaveProperty('tool_choice');
  });

  it('turns tool_calls into tool_use blocks and merges tool messages into one user turn', () => {
    const claude = fromHub({
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'Need the tool.',
          reasoning_signature: 'sig-9',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'w', arguments: 'not json' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'Sunny' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: 'Rain' }] },
        { role: 'user', content: 'And tomorrow?' },
      ],
    });
    expect(claude.messages).toEqual([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Need the tool.', signature: 'sig-9' },
          { type: 'tool_use', id: 'call_1', name: 'w', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'w', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: 'Sunny' },
          { type: 'tool_result', tool_use_id: 'call_2', content: 'Rain' },
          { type: 'text', text: 'And tomorrow?' },
        ],
      },
    ]);
  });

  it('leaves unsigned reasoning (another model’s) behind, and restores redacted thinking', () => {
    const claude = fromHub({
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a', reasoning_content: 'deepseek thoughts' },
        { role: 'user', content: 'q2' },
        { role: 'assistant', content: 'b', redacted_reasoning: ['opaque'] },
      ],
    });
    expect(claude.messages[1]).toEqual({ role: 'assistant', content: 'a' });
    expect(claude.messages[3]).toEqual({
      role: 'assistant',
      content: [
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'text', text: 'b' },
      ],
    });
  });

  it('maps reasoning_effort to a thinking budget under max_tokens, dropping what thinking forbids', () => {
    const claude = fromHub({
      messages: [],
      max_tokens: 10000,
      reasoning_effort: 'medium',
      temperature: 0.2,
      top_p: 0.5,
    });
    expect(claude).toMatchObject({ max_tokens: 10000, thinking: { type: 'enabled', budget_tokens: 5000 } });
    expect(claude).not.toHaveProperty('temperature');
    expect(claude).not.toHaveProperty('top_p');
    expect(fromHub({ messages: [], max_tokens: 2000, reasoning_effort: 'low' }).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 1024,
    });
    expect(fromHub({ messages: [], reasoning_effort: 'high' }).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 16384,
    });
    expect(fromHub({ messages: [], max_tokens: 1000, reasoning_effort: 'high' })).not.toHaveProperty('thinking');
    expect(fromHub({ messages: [], max_tokens: 5000, reasoning_effort: 'minimal' })).not.toHaveProperty('thinking');
  });
});

describe('request round trips', () => {
  it('Claude → hub → Claude keeps a tool conversation with thinking and images', () => {
    const original = {
      model: 'claude-sonnet-4',
      system: 'Be helpful.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather here?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Use the tool.', signature: 'sig' },
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris', days: 2 } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' }] },
      ],
      tools: [{ name: 'weather', description: 'W', input_schema: { type: 'object', properties: {} } }],
      tool_choice: { type: 'tool', name: 'weather' },
      max_tokens: 1024,
      temperature: 0.5,
      stop_sequences: ['###'],
      metadata: { user_id: 'me' },
    };
    expect(fromHub(toHub(original))).toEqual(original);
  });

  it('hub → Claude → hub keeps a plain chat', () => {
    const hub = {
      model: 'm',
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'U' },
        { role: 'assistant', content: 'A' },
        { role: 'user', content: 'U2' },
      ],
      max_tokens: 50,
      temperature: 0.7,
      stop: ['x'],
      user: 'u',
    };
    expect(toHub(fromHub(hub))).toEqual(hub);
  });
});
