import type { WireFormat } from '../../types.ts';
import type { Provider } from '../types.ts';
import { parseCohereError } from './errors.ts';
import { buildCohereRequest, prepareCohereBody } from './request.ts';
import { CohereStreamObserver } from './stream.ts';
import { cohereUsage } from './usage.ts';

const FORMATS: ReadonlySet<WireFormat> = new Set<WireFormat>(['cohere-chat', 'cohere-embed', 'cohere-rerank']);

/** What each client format is sent to Cohere as (chat-like formats by way of the hub). */
const NATIVE: Partial<Record<WireFormat, WireFormat>> = {
  'openai-chat': 'cohere-chat',
  'openai-responses': 'cohere-chat',
  'claude-messages': 'cohere-chat',
  'gemini-generate': 'cohere-chat',
  'openai-embeddings': 'cohere-embed',
  'gemini-embed': 'cohere-embed',
  rerank: 'cohere-rerank',
};

/** Cohere's v2 API (channel type 34): chat with streaming and tools, embed, rerank. */
export const cohereProvider: Provider = {
  name: 'cohere',
  formats: FORMATS,
  nativeFormat: (format) => NATIVE[format],
  prepareBody: prepareCohereBody,
  buildRequest: buildCohereRequest,
  usageFromBody: cohereUsage,
  streamObserver: () => new CohereStreamObserver(),
  parseError: parseCohereError,
};
