import type { WireFormat } from '../../types.ts';
import { openAIProvider } from '../openai/index.ts';
import { openAIUsage } from '../openai/usage.ts';
import type { Provider } from '../types.ts';
import { parseAliError } from './errors.ts';
import { buildAliRequest } from './request.ts';
import { sendAli } from './send.ts';
import { wanVideo } from './video.ts';

/** DashScope's native formats, for what its OpenAI-compatible mode does not serve. */
const NATIVE: Partial<Record<WireFormat, WireFormat>> = {
  rerank: 'dashscope-rerank',
  'openai-images': 'dashscope-images',
  video: 'video',
};

/**
 * Ali DashScope (channel type 17): chat and embeddings through its OpenAI-compatible mode (the
 * OpenAI protocol's pieces), rerank and text-to-image through its native services, and Wan videos
 * as DashScope tasks for the video routes.
 */
export const aliProvider: Provider = {
  name: 'ali',
  formats: new Set<WireFormat>([...openAIProvider.formats, 'dashscope-rerank', 'dashscope-images', 'video']),
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
  video: wanVideo,
};
