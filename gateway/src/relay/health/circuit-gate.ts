import { StreamBroken, UpstreamFailure } from '../exchange/failure.ts';
import type { RoutingIndex } from '../routing/index-cache.ts';
import { pickKey } from '../routing/picker.ts';
import type { PickReason } from '../routing/route-plan.ts';
import type { ChannelSnapshot } from '../types.ts';
import { type Circuits, type CircuitTicket, countsAsCircuitFailure } from './circuits.ts';

/** The key an attempt uses, and its pass through that key's circuit (none when the channel has no usable key). */
export interface GatePass {
  keyIndex: number;
  ticket: CircuitTicket | undefined;
}

/**
 * Picks the key for one attempt on `channel`, passing over keys whose circuits are open, and lets the
 * attempt through that key's circuit. A `forced` attempt (a pinned channel, the fallback when every
 * candidate is open) goes through whatever its circuit says; otherwise a half-open circuit lets only the
 * one request that takes its probe by. Undefined when another request holds that probe: the caller
 * picks again (the channel is then passed over while the probe runs).
 */
export async function passCircuit(
  circuits: Circuits,
  routing: RoutingIndex,
  channel: ChannelSnapshot,
  model: string,
  forced: boolean,
): Promise<GatePass | undefined> {
  const keys = channel.keys.length;
  const keyIndex = pickKey(
    channel,
    circuits.keyStateAvoidingOpen(channel.id, keys, model, routing.keyState(channel.id)),
  );
  if (keyIndex < 0) return { keyIndex, ticket: undefined };
  const ticket = await circuits.admit(channel.id, keyIndex, model, forced);
  return ticket ? { keyIndex, ticket } : undefined;
}

/** What a failed attempt tells its circuit: an upstream fault counts, anything else leaves the probe to another request. */
export function circuitVerdict(circuits: Circuits, ticket: CircuitTicket, error: unknown): Promise<void> {
  if (error instanceof StreamBroken) return circuits.failed(ticket);
  if (error instanceof UpstreamFailure && countsAsCircuitFailure(error.error.status)) return circuits.failed(ticket);
  // The upstream answered (a 4xx of the request's own making): it is alive.
  if (error instanceof UpstreamFailure) return circuits.succeeded(ticket);
  return circuits.released(ticket);
}

/** Whether a pick goes through its circuit whatever it says: a pinned channel, or the fallback of an all-open group. */
export function forcedThroughCircuit(reason: PickReason | 'pinned'): boolean {
  return reason === 'pinned' || reason.how === 'circuit_fallback';
}
