import type { OptionsService } from '../../../domain/options/index.ts';
import type { Json } from '../../convert/types.ts';
import type { ChannelSnapshot, WireFormat } from '../../types.ts';
import type { UpstreamRequest } from '../types.ts';

export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com';
const DEFAULT_VERSION = 'v1beta';

/** The API version for a model: `gemini.version_settings` by model name, else its "default" (v1beta). */
export function apiVersion(options: Pick<OptionsService, 'getJson'>, model: string): string {
  let settings: unknown;
  try {
    settings = options.getJson('gemini.version_settings');
  } catch {
    settings = undefined;
  }
  const map = typeof settings === 'object' && settings !== null ? (settings as Record<string, unknown>) : {};
  const version = map[model] ?? map.default;
  return typeof version === 'string' && version.trim() !== '' ? version.trim() : DEFAULT_VERSION;
}

/** The method of the Gemini REST API a body goes to: a body with a list of `requests` is a batch. */
function method(format: WireFormat, json: Json | undefined, stream: boolean): string {
  if (format === 'gemini-generate') return stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  if (format === 'gemini-embed') return Array.isArray(json?.requests) ? 'batchEmbedContents' : 'embedContent';
  throw new Error(`the Gemini protocol has no operation for ${format}`);
}

/**
 * `{base}/{version}/models/{model}:{method}` with the key in `x-goog-api-key` (never in the URL,
 * where proxies and logs would keep it).
 */
export function buildGeminiRequest(input: {
  format: WireFormat;
  channel: ChannelSnapshot;
  key: string;
  upstreamModel: string;
  body: string | Uint8Array | FormData;
  json?: Json | undefined;
  stream: boolean;
  options: OptionsService;
}): UpstreamRequest {
  const { format, channel, key, upstreamModel, body, json, stream, options } = input;
  const base = (channel.baseUrl || GEMINI_BASE_URL).replace(/\/+$/, '');
  const model = upstreamModel.replace(/^models\//, '');
  const url = `${base}/${apiVersion(options, model)}/models/${encodeURIComponent(model)}:${method(format, json, stream)}`;
  const headers: Record<string, string> = { 'x-goog-api-key': key };
  if (typeof body === 'string' || body instanceof Uint8Array) headers['content-type'] = 'application/json';
  return { url, method: 'POST', headers, body };
}
