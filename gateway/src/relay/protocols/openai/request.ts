import { channelType } from '../../../domain/channels/registry.ts';
import type { ChannelSnapshot, WireFormat } from '../../types.ts';
import type { UpstreamRequest } from '../types.ts';

const OPENAI = 1;
const VOLCENGINE = 45;
export const AZURE_DEFAULT_API_VERSION = '2025-04-01-preview';
const AZURE_V1: ReadonlySet<WireFormat> = new Set<WireFormat>(['openai-responses', 'openai-responses-compact']);

/** The path of each OpenAI operation, after the API prefix (usually /v1). */
const OPERATION: Partial<Record<WireFormat, string>> = {
  'openai-chat': '/chat/completions',
  'openai-completions': '/completions',
  'openai-responses': '/responses',
  'openai-responses-compact': '/responses/compact',
  'openai-embeddings': '/embeddings',
  'openai-images': '/images/generations',
  'openai-image-edits': '/images/edits',
  'openai-audio-speech': '/audio/speech',
  'openai-audio-transcriptions': '/audio/transcriptions',
  'openai-audio-translations': '/audio/translations',
  'openai-moderations': '/moderations',
  rerank: '/rerank',
};

export function operationPath(format: WireFormat): string {
  const path = OPERATION[format];
  if (!path) throw new Error(`the OpenAI protocol has no operation for ${format}`);
  return path;
}

/** VolcEngine Ark serves its bot applications (model ids `bot-…`) under /api/v3/bots. */
function apiPrefix(type: number, prefix: string, model: string): string {
  return type === VOLCENGINE && model.startsWith('bot-') ? `${prefix}/bots` : prefix;
}

export function buildOpenAIRequest(input: {
  format: WireFormat;
  channel: ChannelSnapshot;
  key: string;
  upstreamModel: string;
  body: string | FormData;
}): UpstreamRequest {
  const { format, channel, key, upstreamModel, body } = input;
  const operation = operationPath(format);
  const type = channelType(channel.type);
  const base = (channel.baseUrl || type?.baseUrl || '').replace(/\/+$/, '');
  const headers: Record<string, string> = {};
  if (typeof body === 'string') headers['content-type'] = 'application/json';
  let url: string;
  if (type?.openaiUrl === 'azure') {
    const version = channel.other || AZURE_DEFAULT_API_VERSION;
    // Azure serves the Responses API (compaction included) under its v1 path, not per deployment.
    url = AZURE_V1.has(format)
      ? `${base}/openai/v1${operation}?api-version=preview`
      : `${base}/openai/deployments/${encodeURIComponent(upstreamModel)}${operation}?api-version=${encodeURIComponent(version)}`;
    headers['api-key'] = key;
  } else {
    url =
      type?.openaiUrl === 'template'
        ? base.replaceAll('{model}', encodeURIComponent(upstreamModel))
        : `${base}${apiPrefix(channel.type, type?.apiPrefix ?? '/v1', upstreamModel)}${operation}`;
    headers.authorization = `Bearer ${key}`;
    if (channel.type === OPENAI && channel.openaiOrganization)
      headers['openai-organization'] = channel.openaiOrganization;
  }
  return { url, method: 'POST', headers, body };
}
