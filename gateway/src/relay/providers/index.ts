import { openAIProvider } from './openai/index.ts';
import type { Provider } from './types.ts';

/**
 * The provider for a channel type. Types with their own protocol (Anthropic 14, Gemini 24, …) get
 * their own folder; everything else speaks OpenAI's protocol.
 */
export function providerFor(_channelType: number): Provider {
  return openAIProvider;
}

export type { Provider, StreamObserver, UpstreamError, UpstreamRequest } from './types.ts';
