import { describe, expect, it } from 'vitest';
import { estimatePromptTokens } from '../domain/billing/index.ts';
import { requestCharge } from './charge.ts';

/** A chat body that counts how often its messages are read: the tokenizer reads them, nothing else does. */
function countedChat() {
  const messages = [{ role: 'user', content: 'How many tokens does this sentence have?' }];
  const body = {
    model: 'gpt-4o',
    max_tokens: 50,
    reads: 0,
    get messages() {
      body.reads++;
      return messages;
    },
  };
  return body;
}

describe('request charge', () => {
  it('counts the prompt only when its estimate is read, and only once', async () => {
    const body = countedChat();
    const charge = await requestCharge('openai-chat', 'gpt-4o', body);
    expect(charge.maxTokens).toBe(50);
    expect(body.reads).toBe(0);
    const expected = estimatePromptTokens('openai-chat', 'gpt-4o', {
      messages: [{ role: 'user', content: 'How many tokens does this sentence have?' }],
    });
    expect(charge.promptEstimate).toBe(expected);
    expect(charge.promptEstimate).toBe(expected);
    expect(body.reads).toBe(1);
  });

  it('keeps the image fields next to a lazy estimate', async () => {
    const charge = await requestCharge('openai-images', 'dall-e-3', {
      prompt: 'a lighthouse',
      n: 2,
      size: '1024x1024',
    });
    expect(charge).toMatchObject({ maxTokens: 0, n: 2 });
    expect(charge.priceMultiplier).toBeGreaterThan(0);
    expect(charge.promptEstimate).toBe(estimatePromptTokens('openai-images', 'dall-e-3', { prompt: 'a lighthouse' }));
  });
});
