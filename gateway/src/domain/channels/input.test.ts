import { describe, expect, it } from 'vitest';
import { applyChannelInput, CHANNEL_DEFAULTS, cleanList } from './input.ts';
import { splitKeys } from './keys.ts';

describe('splitKeys', () => {
  it('reads one key per line, trimmed, distinct, blank lines dropped', () => {
    expect(splitKeys(' a \r\n\nb\na\n')).toEqual(['a', 'b']);
  });
  it('reads a JSON array as several keys and one JSON object as one key', () => {
    expect(splitKeys('["a", {"b": 1}]')).toEqual(['a', '{"b":1}']);
    expect(splitKeys('{\n  "type": "service_account"\n}')).toEqual(['{\n  "type": "service_account"\n}']);
    expect(splitKeys('[]')).toEqual([]);
  });
});

describe('applyChannelInput', () => {
  it('lists only the fields whose value changes', () => {
    const base = { ...CHANNEL_DEFAULTS, name: 'a', models: 'm1,m2', base_url: 'https://x.example' };
    const { changed } = applyChannelInput(
      { name: ' a ', models: ['m1', 'm2'], base_url: 'https://x.example/', priority: 3 },
      base,
    );
    expect(changed).toEqual(['priority']);
  });
  it('keeps the order of models and groups and drops duplicates', () => {
    expect(cleanList('b, a,b,,c')).toEqual(['b', 'a', 'c']);
    expect(applyChannelInput({ groups: [] }, CHANNEL_DEFAULTS).config.group).toBe('default');
  });
  it("refuses a type whose `other` is required without one (Cloudflare's account id)", () => {
    expect(() => applyChannelInput({ type: 39, other: '  ' }, CHANNEL_DEFAULTS)).toThrow(
      expect.objectContaining({ code: 'CHANNEL_OTHER_REQUIRED' }),
    );
    expect(applyChannelInput({ type: 39, other: ' acc-1 ' }, CHANNEL_DEFAULTS).config.other).toBe('acc-1');
    // An update that leaves it out keeps the stored one.
    const stored = { ...CHANNEL_DEFAULTS, type: 39, other: 'acc-1' };
    expect(applyChannelInput({ name: 'cf' }, stored).config.other).toBe('acc-1');
  });
});
