import { describe, expect, it } from 'vitest';
import type { WireFormat } from '../types.ts';
import { editPromptTexts } from './prompt-texts.ts';

/** Every text the edit was given, and the body with each text upper-cased. */
function run(format: WireFormat, body: Record<string, unknown> | FormData) {
  const seen: string[] = [];
  editPromptTexts(format, body, (text) => {
    seen.push(text);
    return text.toUpperCase();
  });
  return seen;
}

describe('editPromptTexts', () => {
  it('OpenAI chat: string contents and text parts, not images or tool schemas', () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'system', content: 'sys' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hello' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
        { role: 'tool', tool_call_id: 't', content: 'tool out' },
      ],
      tools: [{ type: 'function', function: { name: 'f', description: 'describe' } }],
    };
    expect(run('openai-chat', body)).toEqual(['sys', 'hello', 'tool out']);
    expect(body.messages[0]!.content).toBe('SYS');
    expect(body.messages[1]!.content).toEqual([
      { type: 'text', text: 'HELLO' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
    ]);
    expect(body.tools[0]!.function.description).toBe('describe');
  });

  it('legacy completions: a prompt or prompts, not token ids', () => {
    const body = { prompt: ['one', [1, 2], 'two'] };
    expect(run('openai-completions', body)).toEqual(['one', 'two']);
    expect(body.prompt).toEqual(['ONE', [1, 2], 'TWO']);
    expect(run('openai-completions', { prompt: 'single' })).toEqual(['single']);
  });

  it('Responses: instructions, a string input, message items and tool outputs', () => {
    expect(run('openai-responses', { instructions: 'be kind', input: 'hi' })).toEqual(['be kind', 'hi']);
    const body = {
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'question' }] },
        { type: 'message', role: 'assistant', content: 'answer' },
        { type: 'function_call', name: 'f', arguments: '{"a":1}' },
        { type: 'function_call_output', call_id: 'c', output: 'result' },
      ],
    };
    expect(run('openai-responses-compact', body)).toEqual(['question', 'answer', 'result']);
    expect(body.input[3]).toEqual({ type: 'function_call_output', call_id: 'c', output: 'RESULT' });
  });

  it('Claude: system as a string or blocks, text blocks and tool results', () => {
    const body = {
      system: [{ type: 'text', text: 'sys' }],
      messages: [
        { role: 'user', content: 'plain' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'block' },
            { type: 'tool_result', tool_use_id: 'x', content: 'tool text' },
            { type: 'tool_result', tool_use_id: 'y', content: [{ type: 'text', text: 'nested' }] },
          ],
        },
      ],
    };
    expect(run('claude-messages', body)).toEqual(['sys', 'plain', 'block', 'tool text', 'nested']);
    expect(run('claude-messages', { system: 'string system', messages: [] })).toEqual(['string system']);
  });

  it('Gemini: system instruction (either spelling) and content parts; embeddings', () => {
    const body = {
      systemInstruction: { parts: [{ text: 'sys' }] },
      contents: [{ role: 'user', parts: [{ text: 'hi' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] }],
    };
    expect(run('gemini-generate', body)).toEqual(['sys', 'hi']);
    expect(body.contents[0]!.parts[0]).toEqual({ text: 'HI' });
    expect(run('gemini-generate', { system_instruction: { parts: [{ text: 'snake' }] } })).toEqual(['snake']);
    expect(
      run('gemini-embed', {
        content: { parts: [{ text: 'one' }] },
        requests: [{ content: { parts: [{ text: 'two' }] } }],
      }),
    ).toEqual(['one', 'two']);
  });

  it('embeddings, moderations, images, speech and rerank', () => {
    expect(run('openai-embeddings', { input: ['a', 'b'] })).toEqual(['a', 'b']);
    expect(run('openai-moderations', { input: [{ type: 'text', text: 'm' }] })).toEqual(['m']);
    expect(run('openai-images', { prompt: 'a cat' })).toEqual(['a cat']);
    expect(run('openai-audio-speech', { input: 'say this', voice: 'alloy' })).toEqual(['say this']);
    expect(run('rerank', { query: 'q', documents: ['d1', { text: 'd2' }] })).toEqual(['q', 'd1', 'd2']);
  });

  it('task submissions: Midjourney and video prompts, Suno lyrics, description, tags and title', () => {
    expect(run('midjourney', { prompt: 'a lighthouse --v 6', base64Array: ['data:image/png;base64,AAAA'] })).toEqual([
      'a lighthouse --v 6',
    ]);
    expect(run('video', { model: 'sora-2', prompt: 'a wave', seconds: '4' })).toEqual(['a wave']);
    const song = { prompt: 'lyrics', gpt_description_prompt: 'about rain', tags: 'pop', title: 'Rain', mv: 'chirp' };
    expect(run('suno', song)).toEqual(['lyrics', 'about rain', 'pop', 'Rain']);
    expect(song).toEqual({
      prompt: 'LYRICS',
      gpt_description_prompt: 'ABOUT RAIN',
      tags: 'POP',
      title: 'RAIN',
      mv: 'chirp',
    });
  });

  it('Realtime client events: instructions, item text and tool output, not audio', () => {
    expect(run('openai-realtime', { type: 'session.update', session: { instructions: 'be brief' } })).toEqual([
      'be brief',
    ]);
    const item = {
      type: 'conversation.item.create',
      item: {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'hello' },
          { type: 'input_audio', audio: 'AAAA' },
        ],
      },
    };
    expect(run('openai-realtime', item)).toEqual(['hello']);
    expect(item.item.content[0]).toEqual({ type: 'input_text', text: 'HELLO' });
    expect(
      run('openai-realtime', {
        type: 'conversation.item.create',
        item: { type: 'function_call_output', call_id: 'c', output: 'tool said' },
      }),
    ).toEqual(['tool said']);
    expect(
      run('openai-realtime', {
        type: 'response.create',
        response: {
          instructions: 'answer',
          input: [{ type: 'message', content: [{ type: 'input_text', text: 'q' }] }],
        },
      }),
    ).toEqual(['answer', 'q']);
    expect(run('openai-realtime', { type: 'input_audio_buffer.append', audio: 'AAAA' })).toEqual([]);
  });

  it('multipart uploads: the prompt field only, replaced in the form', () => {
    const form = new FormData();
    form.set('model', 'gpt-image-1');
    form.set('prompt', 'edit it');
    form.set('image', new Blob(['png']), 'a.png');
    expect(run('openai-image-edits', form)).toEqual(['edit it']);
    expect(form.get('prompt')).toBe('EDIT IT');
    expect(form.get('model')).toBe('gpt-image-1');
  });

  it('leaves the body untouched when the edit keeps every text, and skips what is not text', () => {
    const body = { messages: [{ role: 'user', content: 'same' }, null, 'junk', { content: 42 }], prompt: 7 };
    const copy = structuredClone(body);
    editPromptTexts('openai-chat', body, (text) => text);
    expect(body).toEqual(copy);
    expect(run('bedrock-converse', { messages: [{ content: [{ text: 'upstream only' }] }] })).toEqual([]);
  });
});
