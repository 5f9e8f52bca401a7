import { channelType } from '../../../domain/channels/registry.ts';
import type { WireFormat } from '../../types.ts';
import type { Provider } from '../types.ts';
import { parseOpenAIError } from './errors.ts';
import { buildOpenAIRequest } from './request.ts';
import { OpenAIStreamObserver } from './stream.ts';
import { keepStrictFields } from './strict-fields.ts';
import { openAIUsage } from './usage.ts';

const FORMATS: ReadonlySet<WireFormat> = new Set<WireFormat>([
  'openai-chat',
  'openai-completions',
  'openai-responses',
  'openai-responses-compact',
  'openai-embeddings',
  'openai-images',
  'openai-image-edits',
  'openai-audio-speech',
  'openai-audio-transcriptions',
  'openai-audio-translations',
  'openai-moderations',
  'rerank',
  // Spoken over a WebSocket by relay/realtime (never through buildRequest), on the types whose registry entry offers it.
  'openai-realtime',
]);

/** Client formats OpenAI-compatible upstreams serve by conversion. */
const CONVERTED: Partial<Record<WireFormat, WireFormat>> = {
  'claude-messages': 'openai-chat',
  'gemini-generate': 'openai-chat',
  'gemini-embed': 'openai-embeddings',
};

/** OpenAI and every OpenAI-compatible upstream (Azure's URL and auth variant, custom full-URL channels). */
export const openAIProvider: Provider = {
  name: 'openai',
  formats: FORMATS,
  nativeFormat: (format) => (FORMATS.has(format) ? format : CONVERTED[format]),
  prepareBody: (_format, body, context) => ({
    body: { ...body, model: context.upstreamModel },
    upstreamModel: context.upstreamModel,
  }),
  finishBody: (format, body, channel) => {
    const strict = channelType(channel.type)?.strictFields;
    return strict ? keepStrictFields(strict, format, body) : body;
  },
  buildRequest: buildOpenAIRequest,
  usageFromBody: openAIUsage,
  streamObserver: (format) => new OpenAIStreamObserver(format),
  parseError: parseOpenAIError,
};
