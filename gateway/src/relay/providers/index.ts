import { anthropicProvider } from './anthropic/index.ts';
import { geminiProvider } from './gemini/index.ts';
import { openAIProvider } from './openai/index.ts';
import type { Provider } from './types.ts';

/** Channel types with a protocol of their own. */
const BY_TYPE: ReadonlyMap<number, Provider> = new Map([
  [14, anthropicProvider],
  [24, geminiProvider],
]);

/**
 * The provider for a channel type. Types with their own protocol (Anthropic 14, Gemini 24, …) get
 * their own folder; everything else speaks OpenAI's protocol.
 */
export function providerFor(channelType: number): Provider {
  return BY_TYPE.get(channelType) ?? openAIProvider;
}

export type { Provider, StreamObserver, UpstreamError, UpstreamRequest } from './types.ts';
