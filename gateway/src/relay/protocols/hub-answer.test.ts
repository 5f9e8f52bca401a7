import { describe, expect, it } from 'vitest';
import type { SseEvent } from '../sse.ts';
import { HubChunks, hubAnswer, hubError, hubUsage } from './hub-answer.ts';

const bodies = (events: SseEvent[]) => events.map((event) => JSON.parse(event.data));
const deltas = (events: SseEvent[]) => bodies(events).map((body) => body.choices[0]?.delta);

describe('HubChunks', () => {
  it('opens an answer with a role chunk of its own, once, then text and reasoning deltas', () => {
    const chunks = new HubChunks('chatcmpl-1', 'm');
    const events = [...chunks.reasoning('think'), ...chunks.text(''), ...chunks.text('Hi'), ...chunks.start()];
    expect(deltas(events)).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'think' },
      { content: 'Hi' },
    ]);
    const [first] = bodies(events);
    expect(first).toMatchObject({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'm' });
    expect(typeof first.created).toBe('number');
  });

  it('puts the role inside the first delta when asked for deltas, and only the first', () => {
    const chunks = new HubChunks('c', 'm');
    expect(deltas([chunks.delta({ content: 'a' }), chunks.delta({ content: 'b' }, 'stop')])).toEqual([
      { role: 'assistant', content: 'a' },
      { content: 'b' },
    ]);
    expect(chunks.started).toBe(true);
  });

  it('finishes once: the finish chunk, then a usage chunk without choices', () => {
    const chunks = new HubChunks('c', 'm');
    const events = [...chunks.finish(hubUsage(3, 4), 'length'), ...chunks.finish(undefined)];
    const [role, finish, usage] = bodies(events);
    expect(events).toHaveLength(3);
    expect(role.choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(finish.choices).toEqual([{ index: 0, delta: {}, finish_reason: 'length' }]);
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    expect(chunks.finished).toBe(true);
  });

  it('carries extra fields and a later id and creation time on every later chunk', () => {
    const chunks = new HubChunks('', 'm');
    chunks.carry({ conversation_id: 'conv-1' });
    chunks.id = 'chatcmpl-2';
    chunks.created = 42;
    const [body] = bodies([chunks.choices([{ index: 1, delta: { content: 'x' }, finish_reason: null }])]);
    expect(body).toEqual({
      id: 'chatcmpl-2',
      object: 'chat.completion.chunk',
      created: 42,
      model: 'm',
      choices: [{ index: 1, delta: { content: 'x' }, finish_reason: null }],
      conversation_id: 'conv-1',
    });
  });

  it('streams an upstream failure as an error chunk and ends the answer', () => {
    const chunks = new HubChunks('c', 'm');
    expect(bodies(chunks.error('boom', 'E1'))).toEqual([
      { error: { message: 'boom', type: 'upstream_error', code: 'E1' } },
    ]);
    expect(chunks.finish(undefined)).toEqual([]);
    expect(bodies([hubError('bad', null, 'ollama_error')])).toEqual([
      { error: { message: 'bad', type: 'ollama_error', code: null } },
    ]);
  });
});

describe('hubAnswer', () => {
  it('is a chat completion of the assistant message, with usage and extra fields when given', () => {
    const answer = hubAnswer({
      id: 'chatcmpl-3',
      model: 'm',
      message: { content: 'Hello' },
      usage: hubUsage(1, 2),
      extra: { conversation_id: 'conv-2' },
    });
    expect(answer).toMatchObject({
      id: 'chatcmpl-3',
      object: 'chat.completion',
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
      conversation_id: 'conv-2',
    });
    expect(hubAnswer({ id: 'c', model: 'm', message: {}, finishReason: 'tool_calls' })).not.toHaveProperty('usage');
  });
});
