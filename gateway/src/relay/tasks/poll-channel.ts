import { channelType, type Protocol } from '../../domain/channels/registry.ts';
import type { TaskSource } from '../../domain/tasks/index.ts';
import type { RoutingIndex } from '../routing/index-cache.ts';
import type { ChannelSnapshot } from '../types.ts';
import { taskKey } from './keys.ts';

/**
 * The channel a batch of a platform's unfinished tasks is polled on, and the key they were submitted
 * with. The channel must still exist and still speak the platform's protocol: a channel whose type was
 * changed would otherwise be sent another platform's status queries. A refusal is thrown; the engine
 * logs it, and the tasks time out (refunded).
 */
export function pollChannel(
  routing: RoutingIndex,
  source: TaskSource,
  protocol: Protocol,
): { channel: ChannelSnapshot; key: string } {
  const channel = routing.channel(source.channelId);
  const key = channel && taskKey(channel, source.keyIndex);
  if (!channel || key === undefined) throw new Error(`channel ${source.channelId} is gone`);
  if (channelType(channel.type)?.protocol !== protocol) {
    throw new Error(`channel ${source.channelId} is of type ${channel.type}, not a ${protocol} channel`);
  }
  return { channel, key };
}
