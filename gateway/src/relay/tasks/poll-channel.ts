import { channelType, type Protocol } from '../../domain/channels/registry.ts';
import type { RoutingIndex } from '../routing/index-cache.ts';
import type { ChannelSnapshot } from '../types.ts';

/**
 * The channel a platform's unfinished tasks are polled on, and its key. It must still exist and still
 * speak the platform's protocol: a channel whose type was changed would otherwise be sent another
 * platform's status queries. A refusal is thrown; the engine logs it, and the tasks time out (refunded).
 */
export function pollChannel(
  routing: RoutingIndex,
  channelId: number,
  protocol: Protocol,
): { channel: ChannelSnapshot; key: string } {
  const channel = routing.channel(channelId);
  const key = channel?.keys[0];
  if (!channel || key === undefined) throw new Error(`channel ${channelId} is gone`);
  if (channelType(channel.type)?.protocol !== protocol) {
    throw new Error(`channel ${channelId} is of type ${channel.type}, not a ${protocol} channel`);
  }
  return { channel, key };
}
