import { typeLabel } from '../../../domain/channels/registry.ts';
import { channelRuleError } from '../../routing/errors.ts';
import type { ChannelSnapshot } from '../../types.ts';

/**
 * The kind of Dify app a channel's key belongs to (its `other`): chat apps (chatflows included) answer
 * chat-messages in both modes, agent apps only stream, workflow apps run at workflows/run.
 */
export type DifyAppKind = 'chat' | 'agent' | 'workflow';

/** Saved channels hold one of the registry's choices; an empty `other` predates the default. */
const KINDS: Record<string, DifyAppKind> = { '': 'chat', chat: 'chat', agent: 'agent', workflow: 'workflow' };

export function difyAppKind(channel: Pick<ChannelSnapshot, 'type' | 'other'>): DifyAppKind {
  const kind = KINDS[channel.other.trim()];
  if (!kind) {
    throw channelRuleError('channel:other_invalid', {
      type: typeLabel(channel.type),
      detail: `"${channel.other}" is not a Dify app kind (chat, agent or workflow)`,
    });
  }
  return kind;
}

/** The app API path of a kind, after the base URL. */
export const difyPath = (kind: DifyAppKind) => (kind === 'workflow' ? '/v1/workflows/run' : '/v1/chat-messages');
