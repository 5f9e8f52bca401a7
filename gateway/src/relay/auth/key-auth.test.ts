import { describe, expect, it } from 'vitest';
import { keyParts } from './key-auth.ts';

describe('keyParts', () => {
  it('answers what dropping sk- and splitting on dashes answered, for every shape of key', () => {
    const keys = [
      'sk-abc',
      'abc',
      'sk-abc-12',
      'abc-12',
      'sk-abc-12-x',
      'sk-abc-',
      'sk--12',
      'sk-',
      '',
      '-',
      'sk-sk-a',
      'a--b',
    ];
    for (const raw of keys) {
      const [key, pin] = raw.replace(/^sk-/, '').split('-');
      expect([raw, ...keyParts(raw)]).toEqual([raw, key, pin]);
    }
  });
});
