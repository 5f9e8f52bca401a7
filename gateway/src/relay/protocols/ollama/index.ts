import { SseParser } from '../../sse.ts';
import type { WireFormat } from '../../types.ts';
import { OpenAIStreamObserver } from '../openai/stream.ts';
import type { Provider } from '../types.ts';
import { parseOllamaError } from './errors.ts';
import { buildOllamaRequest } from './request.ts';
import { NdjsonDecoder, OllamaStreamObserver } from './stream.ts';
import { ollamaUsage } from './usage.ts';

const FORMATS: ReadonlySet<WireFormat> = new Set<WireFormat>(['ollama-chat', 'ollama-embed', 'openai-completions']);

/** What each client format is sent to Ollama as (chat-like formats through the hub). */
const NATIVE: Partial<Record<WireFormat, WireFormat>> = {
  'openai-chat': 'ollama-chat',
  'openai-responses': 'ollama-chat',
  'claude-messages': 'ollama-chat',
  'gemini-generate': 'ollama-chat',
  'openai-embeddings': 'ollama-embed',
  'gemini-embed': 'ollama-embed',
  'openai-completions': 'openai-completions',
};

/** Ollama (channel type 4): its native chat (NDJSON streams) and embed APIs. */
export const ollamaProvider: Provider = {
  name: 'ollama',
  formats: FORMATS,
  nativeFormat: (format) => NATIVE[format],
  prepareBody: (_format, body, context) => ({
    body: { ...body, model: context.upstreamModel },
    upstreamModel: context.upstreamModel,
  }),
  buildRequest: buildOllamaRequest,
  streamDecoder: (contentType) => {
    if (contentType.includes('application/x-ndjson')) return new NdjsonDecoder();
    return contentType.includes('text/event-stream') ? new SseParser() : undefined;
  },
  usageFromBody: ollamaUsage,
  streamObserver: (format) =>
    format === 'ollama-chat' ? new OllamaStreamObserver() : new OpenAIStreamObserver(format),
  parseError: parseOllamaError,
};
