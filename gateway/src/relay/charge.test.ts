import { describe, expect, it } from 'vitest';
import { estimatePromptTokens } from '../domain/billing/index.ts';
import { OFF_LOOP_LENGTH } from '../domain/billing/prompt-count-pool.ts';
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
  it('walks the body once, and counts a short prompt only when its estimate is read, and only once', async () => {
    const body = countedChat();
    const charge = await requestCharge('openai-chat', 'gpt-4o', body);
    expect(charge.maxTokens).toBe(50);
    // The walk gathers the texts, to tell a short prompt from a long one (counted in a worker at once).
    expect(body.reads).toBe(1);
    const expected = estimatePromptTokens('openai-chat', 'gpt-4o', {
      messages: [{ role: 'user', content: 'How many tokens does this sentence have?' }],
    });
    expect(charge.promptEstimate).toBe(expected);
    expect(charge.promptEstimate).toBe(expected);
    expect(body.reads).toBe(1);
  });

  it('counts a long prompt at once, in the worker pool, as the estimator counts it', async () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'word '.repeat(OFF_LOOP_LENGTH) }] };
    const charge = await requestCharge('openai-chat', 'gpt-4o', body);
    expect(charge.promptEstimate).toBe(estimatePromptTokens('openai-chat', 'gpt-4o', body));
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
