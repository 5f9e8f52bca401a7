import { type ChannelType, channelType, typeLabel } from '../../../domain/channels/registry.ts';
import { channelRuleError } from '../../routing/errors.ts';
import type { ChannelSnapshot, WireFormat } from '../../types.ts';
import type { UpstreamRequest } from '../types.ts';

const OPENAI = 1;
const VOLCENGINE = 45;
export const AZURE_DEFAULT_API_VERSION = '2025-04-01-preview';
const AZURE_V1: ReadonlySet<WireFormat> = new Set<WireFormat>(['openai-responses', 'openai-responses-compact']);
/**
 * The values of an Azure channel's API version (`other`) that choose Azure's GA v1 API, which has no
 * dated versions: `v1`, and `latest` / `preview`, the version names the v1 API itself knows.
 */
const AZURE_V1_VERSIONS: ReadonlySet<string> = new Set(['v1', 'latest', 'preview']);

/** Whether an Azure channel's API version setting chooses Azure's GA v1 API (every operation under /openai/v1). */
export function azureV1(other: string): boolean {
  return AZURE_V1_VERSIONS.has(other.trim().toLowerCase());
}

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
function botsPath(prefix: string, type: number, model: string): string {
  return type === VOLCENGINE && model.startsWith('bot-') ? `${prefix}/bots` : prefix;
}

export function buildOpenAIRequest(input: {
  format: WireFormat;
  channel: ChannelSnapshot;
  key: string;
  upstreamModel: string;
  body: string | Uint8Array | FormData;
}): UpstreamRequest {
  const { format, channel, key, upstreamModel } = input;
  const operation = operationPath(format);
  const type = channelType(channel.type);
  const base = (channel.baseUrl || type?.baseUrl || '').replace(/\/+$/, '');
  const headers: Record<string, string> = {};
  const body = input.body;
  if (typeof body === 'string' || body instanceof Uint8Array) headers['content-type'] = 'application/json';
  let url: string;
  if (type?.openaiUrl === 'azure') {
    const version = channel.other.trim() || AZURE_DEFAULT_API_VERSION;
    // The v1 API serves every operation under /openai/v1, the body's model naming the deployment; with a
    // dated version Azure serves the Responses API (compaction included) there too, not per deployment.
    url = azureV1(channel.other)
      ? `${base}/openai/v1${operation}`
      : AZURE_V1.has(format)
        ? `${base}/openai/v1${operation}?api-version=preview`
        : `${base}/openai/deployments/${encodeURIComponent(azureDeployment(upstreamModel))}${operation}?api-version=${encodeURIComponent(version)}`;
    headers['api-key'] = key;
  } else {
    url =
      type?.openaiUrl === 'template'
        ? base.replaceAll('{model}', encodeURIComponent(upstreamModel))
        : `${base}${type ? botsPath(apiPrefix(type, channel), channel.type, upstreamModel) : '/v1'}${operation}`;
    headers.authorization = `Bearer ${key}`;
    if (channel.type === OPENAI && channel.openaiOrganization)
      headers['openai-organization'] = channel.openaiOrganization;
  }
  return { url, method: 'POST', headers, body };
}

/**
 * Azure deployment names cannot hold dots, so the deployment of gpt-4.1 is gpt-41 and of
 * gpt-3.5-turbo gpt-35-turbo (spec doc 2 §9); the body keeps the model's own name.
 */
export function azureDeployment(model: string): string {
  return model.replaceAll('.', '');
}

/** The type's API prefix, the channel's `other` in place of `{other}` (Cloudflare's account id). */
function apiPrefix(type: ChannelType, channel: ChannelSnapshot): string {
  if (!type.apiPrefix.includes('{other}')) return type.apiPrefix;
  const other = channel.other.trim();
  if (!other) {
    throw channelRuleError('channel:other_required', {
      type: typeLabel(type.id),
      field: type.other?.label.en ?? 'other',
    });
  }
  return type.apiPrefix.replaceAll('{other}', encodeURIComponent(other));
}
