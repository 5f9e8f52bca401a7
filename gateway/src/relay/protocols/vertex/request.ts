import { type GoogleCredentials, parseGoogleCredentials } from '../../../domain/channels/service-account.ts';
import type { Json } from '../../convert/types.ts';
import type { ChannelSnapshot, WireFormat } from '../../types.ts';
import { buildClaudeRequest, prepareClaudeBody } from '../anthropic/index.ts';
import { prepareGeminiBody } from '../gemini/index.ts';
import type { BuildInput, ProviderContext, UpstreamRequest } from '../types.ts';
import { vertexChannelError } from './errors.ts';
import { vertexClaudeId } from './models.ts';
import { regionFor, vertexHost } from './region.ts';

/** The API version Claude on Vertex takes in the body (there is no anthropic-version header). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** Express mode: an API key reaches Google's models at the global host, without project or region. */
export const EXPRESS_BASE_URL = 'https://aiplatform.googleapis.com';

/** The channel key's credentials; a key that is neither kind is the channel's error, not a crash. */
export function credentialsOf(key: string): GoogleCredentials {
  const parsed = parseGoogleCredentials(key);
  if ('problem' in parsed) throw vertexChannelError('channel:key_invalid', { problem: parsed.problem });
  return parsed;
}

/**
 * Finishes a body for Vertex: Gemini bodies as for Google's Gemini API; Claude bodies as for
 * Anthropic's, then without `model` (it is in the URL) and with Vertex's `anthropic_version`, the
 * model renamed to Vertex's `name@date`.
 */
export function prepareVertexBody(
  format: WireFormat,
  input: Json,
  context: ProviderContext,
): { body: Json; upstreamModel: string } {
  if (format !== 'claude-messages') return prepareGeminiBody(format, input, context);
  const prepared = prepareClaudeBody(format, input, context);
  const { model: _model, ...body } = prepared.body;
  return {
    body: { ...body, anthropic_version: VERTEX_ANTHROPIC_VERSION },
    upstreamModel: vertexClaudeId(prepared.upstreamModel),
  };
}

/**
 * A value as one path segment: what a segment may hold stays (Vertex's `model@date`); `/` and `;`
 * (which some servers cut the path at) are escaped.
 */
const pathSegment = (value: string) => value.replace(/[^A-Za-z0-9\-._~!$&'()*+,=@]+/g, encodeURIComponent);

/** The publisher and method of a request: Google's Gemini or Anthropic's Claude, whole or streamed. */
function operation(format: WireFormat, stream: boolean): { publisher: string; method: string } {
  if (format === 'gemini-generate') {
    return { publisher: 'google', method: stream ? 'streamGenerateContent?alt=sse' : 'generateContent' };
  }
  if (format === 'claude-messages')
    return { publisher: 'anthropic', method: stream ? 'streamRawPredict' : 'rawPredict' };
  throw new Error(`the Vertex protocol has no operation for ${format}`);
}

/**
 * `POST {host}/v1/projects/{project}/locations/{region}/publishers/{google|anthropic}/models/{model}:{method}`.
 * The host is the region's, or the channel's base URL when it has one (a proxy; a path prefix is kept).
 * The access token is added by `authorize`, after the channel's header override. An API key instead
 * goes to express mode's `{host}/v1/publishers/google/models/{model}:{method}` in `x-goog-api-key`.
 */
export function buildVertexRequest(input: BuildInput): UpstreamRequest {
  const { format, channel, key, upstreamModel, body, stream } = input;
  const credentials = credentialsOf(key);
  const model = upstreamModel.replace(/^models\//, '');
  const { publisher, method } = operation(format, stream);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if ('apiKey' in credentials) {
    if (publisher !== 'google') {
      throw vertexChannelError('channel:key_invalid', {
        problem: 'an API key reaches only Google models (express mode); Claude needs a service-account key',
      });
    }
    headers['x-goog-api-key'] = credentials.apiKey;
  }
  const url = publisherModelUrl(channel, credentials, { publisher, model, method });
  if (format === 'claude-messages') {
    // Anthropic's beta flags and per-model header settings apply on Vertex too; its key and version header do not.
    const { 'x-api-key': _key, 'anthropic-version': _version, ...claude } = buildClaudeRequest(input).headers;
    return { url, method: 'POST', headers: claude, body };
  }
  return { url, method: 'POST', headers, body };
}

/**
 * A publisher model's method: `{host}/v1/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{method}`
 * for a service account (the region by the channel's setting unless given), or express mode's
 * `{host}/v1/publishers/google/models/{model}:{method}` for an API key. The host is the region's, or
 * the channel's base URL when it has one (a proxy; a path prefix is kept).
 */
export function publisherModelUrl(
  channel: Pick<ChannelSnapshot, 'baseUrl' | 'other'>,
  credentials: GoogleCredentials,
  target: { publisher: string; model: string; method: string; region?: string },
): string {
  const { publisher, model, method } = target;
  if ('apiKey' in credentials) {
    const base = (channel.baseUrl || EXPRESS_BASE_URL).replace(/\/+$/, '');
    return `${base}/v1/publishers/google/models/${pathSegment(model)}:${method}`;
  }
  let region = target.region;
  if (region === undefined) {
    const located = regionFor(channel.other, model);
    if ('problem' in located) throw vertexChannelError('channel:region_invalid', { problem: located.problem });
    region = located.region;
  }
  const base = (channel.baseUrl || `https://${vertexHost(region)}`).replace(/\/+$/, '');
  const path = [
    'projects',
    credentials.account.project_id,
    'locations',
    region,
    'publishers',
    publisher,
    'models',
    model,
  ]
    .map((part, i) => (i % 2 === 1 ? pathSegment(part) : part))
    .join('/');
  return `${base}/v1/${path}:${method}`;
}
