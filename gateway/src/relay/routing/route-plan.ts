import { canConvert } from '../convert/index.ts';
import { providerFor } from '../protocols/index.ts';
import type { ChannelSnapshot, WireFormat } from '../types.ts';
import type { RoutingIndex } from './index-cache.ts';
import { resolveModelMapping } from './model-mapping.ts';
import { pickChannel, type Tier } from './picker.ts';

export interface RoutePlanInput {
  routing: RoutingIndex;
  /** The groups to walk, in order (one for a plain token; the auto groups with a channel for an auto token). */
  groups: readonly string[];
  /** Cross-group retry: a group that has used its attempts hands the next one to the next group. */
  crossGroup: boolean;
  /** RetryTimes: each group gets this many retries after its first attempt. */
  retries: number;
  model: string;
  /** The request's wire format: channels that cannot serve it are passed over. None for the task platforms. */
  format?: WireFormat | undefined;
  /** The channels that speak the request's protocol at all (a task platform's, Realtime's): no other is picked. */
  accepts?: ((channel: ChannelSnapshot) => boolean) | undefined;
  /** The channel channel affinity remembers for this request: tried first when it can serve. */
  preferred?: number | undefined;
  /**
   * When the channel cannot take the request because its circuits are open: since when (ms) the last
   * of them opened; undefined when it can (relay/health/circuits.ts). Such channels are passed over.
   */
  blockedSince?: ((channel: ChannelSnapshot) => number | undefined) | undefined;
  random?: (() => number) | undefined;
}

/** How a channel was chosen: the "why this route" of the log's admin detail and the debug header. */
export interface PickReason {
  /** `affinity`: the remembered channel; `weighted`: the weighted draw in its tier; `only`: the one left
   * in its tier; `circuit_fallback`: every candidate's circuit was open, the least recently opened taken. */
  how: 'affinity' | 'weighted' | 'only' | 'circuit_fallback';
  priority: number;
  /** The channel's weight and the weight of the candidates it was drawn among (`weighted`). */
  weight?: number;
  tierWeight?: number;
  /** Channels passed over in this pick because their circuits were open. */
  circuitsSkipped: number[];
}

/** A channel to try, and the group it is tried (and, if it answers, billed) in. */
export interface Pick {
  channel: ChannelSnapshot;
  group: string;
  /** The channel is the one channel affinity remembered. */
  preferred: boolean;
  reason: PickReason;
}

/**
 * The channels one request may go to, attempt by attempt (reference §4.2–§4.3): the first group's
 * candidates, a failed channel never again; with cross-group retry, once a group has had RetryTimes + 1
 * attempts or has no untried channel left, the next group's. The remembered channel of channel
 * affinity goes first when one of the groups offers it.
 */
export class RoutePlan {
  readonly #input: RoutePlanInput;
  readonly #failed = new Set<number>();
  #groupIndex = 0;
  #attemptsInGroup = 0;
  #preferredOffered = false;

  constructor(input: RoutePlanInput) {
    this.#input = input;
  }

  /** The group the plan is in now: the one the next attempt is made (and billed) in. */
  get group(): string {
    return this.#input.groups[this.#groupIndex] ?? this.#input.groups[0] ?? '';
  }

  /** Channel ids tried so far, in order. */
  get tried(): number[] {
    return [...this.#failed];
  }

  /** Whether the remembered channel is among the candidates (enabled, serving the model in one of the groups). */
  preferredAvailable(): boolean {
    return this.#findPreferred() !== undefined;
  }

  /** The next channel to try; undefined when the plan is spent. */
  next(): Pick | undefined {
    const { groups, crossGroup, retries } = this.#input;
    if (!this.#preferredOffered) {
      this.#preferredOffered = true;
      const found = this.#findPreferred();
      if (found) {
        this.#groupIndex = found.groupIndex;
        const reason: PickReason = { how: 'affinity', priority: found.channel.priority, circuitsSkipped: [] };
        return this.#take(found.channel, true, reason);
      }
    }
    while (this.#groupIndex < groups.length) {
      if (this.#attemptsInGroup <= retries) {
        const candidates = this.#candidates(this.group);
        const excluded = this.#excluded(candidates);
        const open = this.#openCircuits(candidates, excluded);
        const exclude = open.size > 0 ? new Set([...excluded, ...open.keys()]) : excluded;
        const channel = pickChannel({ candidates, exclude, random: this.#input.random });
        if (channel) return this.#take(channel, false, drawReason(candidates, exclude, channel, [...open.keys()]));
        const fallback = leastRecentlyOpened(candidates, open);
        if (fallback) {
          const reason: PickReason = { how: 'circuit_fallback', priority: fallback.priority, circuitsSkipped: [] };
          return this.#take(fallback, false, reason);
        }
      }
      if (!crossGroup) return undefined;
      this.#groupIndex++;
      this.#attemptsInGroup = 0;
    }
    return undefined;
  }

  /** Attempts still allowed after the last one: in this group, and in the next groups with cross-group retry. */
  remainingRetries(): number {
    const { groups, crossGroup, retries } = this.#input;
    const here = Math.max(0, retries + 1 - this.#attemptsInGroup);
    const later = crossGroup ? (groups.length - this.#groupIndex - 1) * (retries + 1) : 0;
    return here + Math.max(0, later);
  }

  /**
   * Takes back the last pick, which was never sent (its half-open circuit's one probe was taken by
   * another request): it costs no attempt, and the next pick passes it over while its circuit says so.
   */
  putBack(pick: { channel: ChannelSnapshot }): void {
    this.#failed.delete(pick.channel.id);
    this.#attemptsInGroup--;
  }

  #take(channel: ChannelSnapshot, preferred: boolean, reason: PickReason): Pick {
    this.#failed.add(channel.id);
    this.#attemptsInGroup++;
    return { channel, group: this.group, preferred, reason };
  }

  /** Candidates not otherwise excluded whose circuits are open, with since when. */
  #openCircuits(candidates: readonly Tier[], excluded: ReadonlySet<number>): Map<number, number> {
    const open = new Map<number, number>();
    const blockedSince = this.#input.blockedSince;
    if (!blockedSince) return open;
    for (const tier of candidates) {
      for (const channel of tier.channels) {
        if (excluded.has(channel.id)) continue;
        const since = blockedSince(channel);
        if (since !== undefined) open.set(channel.id, since);
      }
    }
    return open;
  }

  #findPreferred(): { channel: ChannelSnapshot; groupIndex: number } | undefined {
    const id = this.#input.preferred;
    if (id === undefined || this.#failed.has(id)) return undefined;
    const walkable = this.#input.crossGroup ? this.#input.groups.length : Math.min(1, this.#input.groups.length);
    for (let groupIndex = 0; groupIndex < walkable; groupIndex++) {
      const candidates = this.#candidates(this.#input.groups[groupIndex] ?? '');
      const excluded = this.#excluded(candidates);
      for (const tier of candidates) {
        for (const channel of tier.channels) {
          // A remembered channel whose circuits are open is not preferred: the normal pick decides.
          if (channel.id === id && !excluded.has(id) && this.#input.blockedSince?.(channel) === undefined)
            return { channel, groupIndex };
        }
      }
    }
    return undefined;
  }

  #candidates(group: string): readonly Tier[] {
    return this.#input.routing.candidates(group, this.#input.model);
  }

  /** Channels never picked: those that failed in this request, and those that cannot serve its format or protocol. */
  #excluded(candidates: readonly Tier[]): Set<number> {
    const { format, accepts, model } = this.#input;
    const excluded = format ? unservable(candidates, format, model) : new Set<number>();
    if (accepts) {
      for (const tier of candidates)
        for (const channel of tier.channels) if (!accepts(channel)) excluded.add(channel.id);
    }
    for (const id of this.#failed) excluded.add(id);
    return excluded;
  }
}

/**
 * When every candidate left has its circuits open, the one whose circuits opened longest ago. Failing
 * the request outright would turn a fault of the upstreams into a certain outage for the client; the
 * channel that has rested the longest is the likeliest to have recovered, and its answer serves as a
 * probe (a success closes its circuit). Undefined when no candidate is merely open.
 */
function leastRecentlyOpened(
  candidates: readonly Tier[],
  open: ReadonlyMap<number, number>,
): ChannelSnapshot | undefined {
  let best: ChannelSnapshot | undefined;
  let bestSince = Number.POSITIVE_INFINITY;
  for (const tier of candidates) {
    for (const channel of tier.channels) {
      const since = open.get(channel.id);
      if (since !== undefined && since < bestSince) {
        best = channel;
        bestSince = since;
      }
    }
  }
  return best;
}

/** Why the draw chose `channel`: alone in its tier, or by weight among the tier's remaining candidates. */
function drawReason(
  candidates: readonly Tier[],
  exclude: ReadonlySet<number>,
  channel: ChannelSnapshot,
  circuitsSkipped: number[],
): PickReason {
  const tier = candidates.find((t) => t.priority === channel.priority);
  let count = 0;
  let tierWeight = 0;
  for (const other of tier?.channels ?? []) {
    if (exclude.has(other.id)) continue;
    count++;
    tierWeight += other.weight > 0 && Number.isFinite(other.weight) ? other.weight : 0;
  }
  if (count <= 1) return { how: 'only', priority: channel.priority, circuitsSkipped };
  return { how: 'weighted', priority: channel.priority, weight: channel.weight, tierWeight, circuitsSkipped };
}

/**
 * The candidates whose protocol cannot serve a request of this format (a Responses compaction on an
 * Anthropic channel), passed over while another candidate can; none when none can (the pick then
 * fails with format_unsupported, which says why).
 */
function unservable(candidates: readonly Tier[], format: WireFormat, model: string): Set<number> {
  const cannot = new Set<number>();
  let can = false;
  for (const tier of candidates) {
    for (const channel of tier.channels) {
      const mapping = resolveModelMapping(model, channel.modelMapping);
      const upstream = providerFor(channel.type).nativeFormat(format, mapping.ok ? mapping.upstreamModel : model);
      if (upstream && canConvert(format, upstream)) can = true;
      else cannot.add(channel.id);
    }
  }
  if (!can) cannot.clear();
  return cannot;
}
