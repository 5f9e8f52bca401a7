import { describe, expect, it } from 'vitest';
import { SecretIndex } from './secret-index.ts';

describe('SecretIndex', () => {
  it('answers the resources using a Secret of a namespace', () => {
    const index = new SecretIndex();
    index.set('Channel/ai/a', 'ai', ['keys']);
    index.set('Channel/ai/b', 'ai', ['keys', 'other', 'keys']);
    index.set('Channel/ml/c', 'ml', ['keys']);
    expect(index.lookup('ai', 'keys').sort()).toEqual(['Channel/ai/a', 'Channel/ai/b']);
    expect(index.lookup('ai', 'other')).toEqual(['Channel/ai/b']);
    expect(index.lookup('ml', 'keys')).toEqual(['Channel/ml/c']);
    expect(index.lookup('ai', 'none')).toEqual([]);
  });

  it('follows a resource that switches Secrets, and forgets a removed one', () => {
    const index = new SecretIndex();
    index.set('Channel/ai/a', 'ai', ['old']);
    index.set('Channel/ai/a', 'ai', ['new']);
    expect(index.lookup('ai', 'old')).toEqual([]);
    expect(index.lookup('ai', 'new')).toEqual(['Channel/ai/a']);
    index.remove('Channel/ai/a');
    expect(index.lookup('ai', 'new')).toEqual([]);
  });
});
