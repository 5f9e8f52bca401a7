import { channelType } from '../../../domain/channels/registry.ts';
import { buildOpenAIRequest } from '../openai/request.ts';
import type { BuildInput, UpstreamRequest } from '../types.ts';

export const RERANK_PATH = '/api/v1/services/rerank/text-rerank/text-rerank';
export const IMAGE_SYNTHESIS_PATH = '/api/v1/services/aigc/text2image/image-synthesis';

/**
 * DashScope's native services for rerank and images (the image job asynchronous, as DashScope
 * requires for text-to-image); everything else goes to its OpenAI-compatible mode.
 */
export function buildAliRequest(input: BuildInput): UpstreamRequest {
  if (input.format !== 'dashscope-rerank' && input.format !== 'dashscope-images') return buildOpenAIRequest(input);
  const base = (input.channel.baseUrl || channelType(input.channel.type)?.baseUrl || '').replace(/\/+$/, '');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    authorization: `Bearer ${input.key}`,
  };
  if (input.format === 'dashscope-images') headers['x-dashscope-async'] = 'enable';
  const path = input.format === 'dashscope-rerank' ? RERANK_PATH : IMAGE_SYNTHESIS_PATH;
  return { url: `${base}${path}`, method: 'POST', headers, body: input.body };
}
