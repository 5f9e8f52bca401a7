import { describe, expect, it } from 'vitest';
import type { RoutingIndex } from '../routing/index-cache.ts';
import type { KeyState } from '../routing/picker.ts';
import type { ChannelSnapshot } from '../types.ts';
import { pickTaskKey, taskKey } from './keys.ts';

const channel = (keys: string[], multiKeyMode: 'random' | 'polling' = 'polling') =>
  ({ id: 3, keys, multiKeyMode }) as ChannelSnapshot;
const routing = (state?: KeyState) => ({ keyState: () => state }) as unknown as RoutingIndex;

describe('pickTaskKey', () => {
  it("takes the channel's keys in turn in polling mode, skipping disabled ones", () => {
    const state: KeyState = { cursor: 0, disabled: new Set([1]) };
    const three = channel(['k0', 'k1', 'k2']);
    const picks = [1, 2, 3, 4].map(() => pickTaskKey(three, routing(state)));
    expect(picks).toEqual([
      { index: 0, key: 'k0' },
      { index: 2, key: 'k2' },
      { index: 0, key: 'k0' },
      { index: 2, key: 'k2' },
    ]);
  });

  it('reaches every enabled key in random mode', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) seen.add(pickTaskKey(channel(['k0', 'k1'], 'random'), routing())!.index);
    expect([...seen].sort()).toEqual([0, 1]);
  });

  it('answers nothing when no key is enabled, or the channel has none', () => {
    expect(pickTaskKey(channel(['k0', 'k1']), routing({ cursor: 0, disabled: new Set([0, 1]) }))).toBeUndefined();
    expect(pickTaskKey(channel([]), routing())).toBeUndefined();
  });
});

describe('taskKey', () => {
  it('answers the key a task was submitted with, even one disabled since', () => {
    expect(taskKey(channel(['k0', 'k1']), 1)).toBe('k1');
  });

  it('falls back to the first key for tasks from before keys were chosen, or keys removed since', () => {
    expect(taskKey(channel(['k0', 'k1']), undefined)).toBe('k0');
    expect(taskKey(channel(['k0', 'k1']), null)).toBe('k0');
    expect(taskKey(channel(['k0']), 4)).toBe('k0');
    expect(taskKey(channel([]), 0)).toBeUndefined();
  });
});
