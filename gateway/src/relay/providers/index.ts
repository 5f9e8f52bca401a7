import { channelType, type Protocol, typeLabel } from '../../domain/channels/registry.ts';
import { channelRuleError } from '../routing/errors.ts';
import { anthropicProvider } from './anthropic/index.ts';
import { geminiProvider } from './gemini/index.ts';
import { openAIProvider } from './openai/index.ts';
import type { Provider } from './types.ts';

/** The provider folder of each protocol the channel-type registry names. */
export const PROVIDERS: Readonly<Record<Protocol, Provider>> = {
  openai: openAIProvider,
  anthropic: anthropicProvider,
  gemini: geminiProvider,
};

/**
 * The provider for a channel type, from the registry's protocol. A type Tollgate does not offer
 * (a stored row from an older version) has none: the routing index leaves such channels out, so
 * only a pinned request or a test reaches here, and it fails saying why instead of sending the
 * upstream a protocol it does not speak.
 */
export function providerFor(type: number): Provider {
  const row = channelType(type);
  if (!row?.offered || !row.protocol) {
    throw channelRuleError('channel:type_unsupported', {
      type: typeLabel(type),
      reason: row?.reason ?? 'unknown type',
    });
  }
  return PROVIDERS[row.protocol];
}

export type { Provider, StreamObserver, UpstreamError, UpstreamRequest } from './types.ts';
