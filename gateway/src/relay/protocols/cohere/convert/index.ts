import type { UpstreamAdapter } from '../../../convert/types.ts';
import { hubToCohereChat } from './chat-request.ts';
import { cohereChatToHub } from './chat-response.ts';
import { CohereToHubStream } from './chat-stream.ts';
import { cohereEmbedToHub, hubToCohereEmbed } from './embed.ts';
import { cohereRerankToRelay, rerankToCohere } from './rerank.ts';

/** Cohere v2 chat, spoken only upstream: from the hub and back. */
export const cohereChatAdapter: UpstreamAdapter = {
  format: 'cohere-chat',
  hub: 'openai-chat',
  requestFromHub: hubToCohereChat,
  responseToHub: cohereChatToHub,
  streamToHub: (ctx) => new CohereToHubStream(ctx),
};

/** Cohere v2 embed, from OpenAI embeddings and back. */
export const cohereEmbedAdapter: UpstreamAdapter = {
  format: 'cohere-embed',
  hub: 'openai-embeddings',
  requestFromHub: hubToCohereEmbed,
  responseToHub: cohereEmbedToHub,
  streamToHub: () => {
    throw new Error('Cohere embed answers do not stream');
  },
};

/** Cohere v2 rerank, from the relay's rerank format and back. */
export const cohereRerankAdapter: UpstreamAdapter = {
  format: 'cohere-rerank',
  hub: 'rerank',
  requestFromHub: rerankToCohere,
  responseToHub: cohereRerankToRelay,
  streamToHub: () => {
    throw new Error('Cohere rerank answers do not stream');
  },
};
