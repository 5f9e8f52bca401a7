import type { WireFormat } from '../../types.ts';
import { openAIProvider } from '../openai/index.ts';
import { openAIUsage } from '../openai/usage.ts';
import type { Provider } from '../types.ts';
import { parseAliError } from './errors.ts';
import { buildAliRequest } from './request.ts';
import { sendAli } from './send.ts';

/** DashScope's native formats, for what its OpenAI-compatible mode does not serve. */
const NATIVE: Partial<Record<WireFormat, WireFormat>> = {
  rerank: 'dashscope-rerank',
  'openai-images': 'dashscope-images',
};

/**
 * Ali DashScope (channel type 17): chat and embeddings through its OpenAI-compatible mode (the
 * OpenAI protocol's pieces), rerank and text-to-image through its native services.
 */
export const aliProvider: Provider = {
  name: 'ali',
  formats: new Set<WireFormat>([...openAIProvider.formats, 'dashscope-rerank', 'dashscope-images']),
  nativeFormat: (format, model) => NATIVE[format] ?? openAIProvider.nativeFormat(format, model),
  prepareBody: (format, body, context) =>
    format === 'dashscope-rerank' || format === 'dashscope-images'
      ? { body: { ...body, model: context.upstreamModel }, upstreamModel: context.upstreamModel }
      : openAIProvider.prepareBody(format, body, context),
  buildRequest: buildAliRequest,
  send: sendAli,
  usageFromBody: (format, body) => {
    if (format === 'dashscope-images') return undefined;
    if (format !== 'dashscope-rerank') return openAIUsage(format, body);
    const tokens = Number((body as { usage?: { total_tokens?: unknown } })?.usage?.total_tokens) || 0;
    return { promptTokens: tokens, completionTokens: 0 };
  },
  streamObserver: (format) => openAIProvider.streamObserver(format),
  parseError: parseAliError,
};
