import type { RoutingIndex } from '../routing/index-cache.ts';
import { pickKey } from '../routing/picker.ts';
import type { ChannelSnapshot } from '../types.ts';

/** The key a new task is submitted with, and its index in the channel's keys (stored with the task). */
export interface ChosenKey {
  index: number;
  key: string;
}

/**
 * A key for a new submission, chosen by the channel's multi-key mode among its enabled keys;
 * undefined when none is enabled (each platform refuses in its own shape).
 */
export function pickTaskKey(channel: ChannelSnapshot, routing: RoutingIndex): ChosenKey | undefined {
  const index = pickKey(channel, routing.keyState(channel.id));
  const key = channel.keys[index];
  return index >= 0 && key !== undefined ? { index, key } : undefined;
}

/**
 * The key a task was submitted with: every later call about it (polls, follow-ups, content) must reach
 * the same upstream account, which alone knows the task — even if that key has been disabled since.
 * Rows from before keys were chosen carry no index and used the first key; an index past the channel's
 * keys (keys edited since) falls back to it too. Undefined when the channel has no key at all.
 */
export function taskKey(channel: ChannelSnapshot, index: number | null | undefined): string | undefined {
  return channel.keys[index ?? 0] ?? channel.keys[0];
}
