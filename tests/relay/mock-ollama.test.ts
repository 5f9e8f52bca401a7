import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockOllama, startMockOllama } from '../support/mock-ollama.ts';

/** The Ollama mock answers Ollama's own JavaScript client as a local Ollama does. */
let mock: MockOllama;
let client: Ollama;

beforeAll(async () => {
  mock = await startMockOllama(['llama3.1']);
  client = new Ollama({ host: mock.url });
});

afterAll(async () => {
  await mock?.close();
});

describe('the ollama client against the mock', () => {
  it('chats whole and streamed, with the token counts on the last answer', async () => {
    mock.behaviour = { reply: 'Bonjour tout le monde', usage: { prompt_eval_count: 12, eval_count: 6 } };
    const whole = await client.chat({ model: 'llama3.1', messages: [{ role: 'user', content: 'hi' }] });
    expect(whole.message.content).toBe('Bonjour tout le monde');
    expect([whole.done, whole.prompt_eval_count, whole.eval_count]).toEqual([true, 12, 6]);

    const parts: string[] = [];
    let last: { done: boolean; eval_count?: number } | undefined;
    for await (const part of await client.chat({
      model: 'llama3.1',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    })) {
      parts.push(part.message.content);
      last = part;
    }
    expect(parts.join('')).toBe('Bonjour tout le monde');
    expect(parts.length).toBeGreaterThan(2);
    expect(last).toMatchObject({ done: true, eval_count: 6 });
  });

  it('answers a tool call with object arguments', async () => {
    const answer = await client.chat({
      model: 'llama3.1',
      messages: [{ role: 'user', content: 'weather in Paris?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
      ],
    });
    expect(answer.message.tool_calls?.[0]?.function).toEqual({ name: 'get_weather', arguments: { city: 'Paris' } });
  });

  it('embeds, lists, pulls with progress, deletes and tells its version', async () => {
    const embedded = await client.embed({ model: 'llama3.1', input: ['a', 'bc'] });
    expect(embedded.embeddings).toHaveLength(2);
    expect((await client.list()).models.map((m) => m.name)).toEqual(['llama3.1']);

    const statuses: string[] = [];
    for await (const progress of await client.pull({ model: 'qwen2.5', stream: true })) statuses.push(progress.status);
    expect(statuses.at(-1)).toBe('success');
    expect((await client.list()).models.map((m) => m.name)).toContain('qwen2.5');

    await client.delete({ model: 'qwen2.5' });
    expect((await client.list()).models.map((m) => m.name)).not.toContain('qwen2.5');
    expect((await client.version()).version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('refuses a model that was not pulled, in the words the client shows', async () => {
    await expect(
      client.chat({ model: 'mistral', messages: [{ role: 'user', content: 'hi' }], stream: false }),
    ).rejects.toThrow('model "mistral" not found, try pulling it first');
  });
});
