import type { ChannelSnapshot } from '../types.ts';

/** Channels of one priority, as the routing index hands them out (shared, never modified). */
export interface Tier {
  readonly priority: number;
  readonly channels: readonly ChannelSnapshot[];
}

export interface PickInput {
  /** Priority tiers, highest first (RoutingIndex.candidates). */
  candidates: readonly Tier[];
  /** Channels that already failed in this request: never picked again (reference §11 #8). */
  exclude?: ReadonlySet<number> | undefined;
  /** A number in [0, 1); Math.random unless a test seeds its own. */
  random?: (() => number) | undefined;
}

/**
 * Picks the channel for one attempt (DESIGN.md §3 step 4): the highest tier that still has a
 * channel not in `exclude`, then weighted random inside it. Undefined when every candidate failed.
 *
 * Weights are proportional to `weight`. new-api multiplies weights by 100 when their average is
 * below 10; that only matters for its integer random draw and does not change the odds, so a
 * continuous draw over the raw weights is the same distribution. As in new-api, a weight-0
 * channel next to weighted ones is a stand-by: it gets traffic only once the weighted channels
 * of its tier are excluded, and a tier whose remaining channels all weigh 0 is picked uniformly.
 *
 * Unlike new-api (tier index = retry number, the failed channel not excluded), a retry stays in
 * the top tier while it has untried channels, and a failed channel is never tried twice.
 * No allocation: two passes over the tier.
 */
export function pickChannel(input: PickInput): ChannelSnapshot | undefined {
  const exclude = input.exclude !== undefined && input.exclude.size > 0 ? input.exclude : undefined;
  const random = input.random ?? Math.random;
  for (const tier of input.candidates) {
    const channels = tier.channels;
    let count = 0;
    let total = 0;
    let only: ChannelSnapshot | undefined;
    for (const channel of channels) {
      if (exclude?.has(channel.id)) continue;
      count++;
      total += weightOf(channel);
      only = channel;
    }
    if (count === 0) continue;
    if (count === 1) return only;
    if (total > 0) {
      let left = random() * total;
      let last: ChannelSnapshot | undefined;
      for (const channel of channels) {
        if (exclude?.has(channel.id)) continue;
        const weight = weightOf(channel);
        if (weight === 0) continue;
        left -= weight;
        last = channel;
        if (left < 0) return channel;
      }
      // Rounding can leave `left` at a hair above 0 after the last weighted channel.
      return last;
    }
    let index = Math.floor(random() * count);
    for (const channel of channels) {
      if (exclude?.has(channel.id)) continue;
      if (index-- <= 0) return channel;
    }
    return only;
  }
  return undefined;
}

function weightOf(channel: ChannelSnapshot): number {
  const weight = channel.weight;
  return weight > 0 && Number.isFinite(weight) ? weight : 0;
}

/** Groups channels into priority tiers, highest first; within a tier, by id (stable for tests). */
export function buildTiers(channels: readonly ChannelSnapshot[]): Tier[] {
  const sorted = [...channels].sort((a, b) => b.priority - a.priority || a.id - b.id);
  const tiers: Tier[] = [];
  let current: ChannelSnapshot[] = [];
  for (const channel of sorted) {
    const first = current[0];
    if (first !== undefined && first.priority !== channel.priority) {
      tiers.push(Object.freeze({ priority: first.priority, channels: Object.freeze(current) }));
      current = [];
    }
    current.push(channel);
  }
  const first = current[0];
  if (first !== undefined) tiers.push(Object.freeze({ priority: first.priority, channels: Object.freeze(current) }));
  return tiers;
}

/**
 * The in-memory key state of a multi-key channel (reference §4.6 "Multi-key"): where round-robin
 * goes next, and which keys are disabled (channel_info.multi_key_status_list). The routing index
 * keeps one per channel and carries the cursor across reloads.
 */
export interface KeyState {
  cursor: number;
  readonly disabled: ReadonlySet<number>;
}

/**
 * The index of the key to use for one attempt, or -1 when no key is enabled (the relay answers
 * `channel:no_available_key`, which retries on another channel). `random` mode draws uniformly
 * among enabled keys; `polling` takes the next enabled key after the cursor and moves it on.
 */
export function pickKey(
  channel: ChannelSnapshot,
  state: KeyState | undefined,
  random: () => number = Math.random,
): number {
  const keys = channel.keys.length;
  if (keys === 0) return -1;
  const disabled = state?.disabled;
  if (keys === 1) return disabled?.has(0) ? -1 : 0;
  if (channel.multiKeyMode === 'polling') {
    const cursor = state?.cursor ?? 0;
    const start = cursor >= 0 && cursor < keys ? cursor : 0;
    for (let i = 0; i < keys; i++) {
      const index = (start + i) % keys;
      if (disabled?.has(index)) continue;
      if (state) state.cursor = (index + 1) % keys;
      return index;
    }
    return -1;
  }
  let enabled = keys;
  if (disabled) for (const index of disabled) if (index >= 0 && index < keys) enabled--;
  if (enabled <= 0) return -1;
  let skip = Math.floor(random() * enabled);
  for (let index = 0; index < keys; index++) {
    if (disabled?.has(index)) continue;
    if (skip-- <= 0) return index;
  }
  return -1;
}
