import type { UpstreamResponse } from '../../transport.ts';
import type { WireFormat } from '../../types.ts';
import type { AuthorizeInput, Provider, SendInput, UpstreamRequest } from '../types.ts';
import { parseVertexError } from './errors.ts';
import { listVertexModels } from './listing.ts';
import { isClaude } from './models.ts';
import { googleRefusal } from './refusal.ts';
import { buildVertexRequest, credentialsOf, prepareVertexBody } from './request.ts';
import { vertexStreamObserver } from './stream.ts';
import { AccessTokens, TokenRefused } from './token.ts';
import { vertexUsage } from './usage.ts';
import { vertexVideo } from './video.ts';

const FORMATS: ReadonlySet<WireFormat> = new Set<WireFormat>(['gemini-generate', 'claude-messages']);

/** Client formats a Vertex model answers: chat-like ones (Vertex embeddings are not spoken). */
const CHAT_LIKE: ReadonlySet<WireFormat> = new Set<WireFormat>([
  'openai-chat',
  'openai-responses',
  'claude-messages',
  'gemini-generate',
]);

const tokens = new AccessTokens();

/** Requests whose token fetch was refused, and the refusal to answer instead of sending them. */
const refused = new WeakMap<UpstreamRequest, TokenRefused>();

/** Adds the service account's access token (an API key is already in the headers); a refusal is marked for `send`. */
async function authorizeVertex(request: UpstreamRequest, { key, transport }: AuthorizeInput): Promise<UpstreamRequest> {
  const credentials = credentialsOf(key);
  if ('apiKey' in credentials) return request;
  try {
    const token = await tokens.token(credentials.account, transport);
    return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } };
  } catch (error) {
    if (!(error instanceof TokenRefused)) throw error;
    // Answered by `send` as the upstream's refusal (401), not as an unreachable upstream.
    const marked = { ...request };
    refused.set(marked, error);
    return marked;
  }
}

async function sendVertex(request: UpstreamRequest, { transport, signal }: SendInput): Promise<UpstreamResponse> {
  const refusal = refused.get(request);
  if (!refusal) return transport.send(request, signal);
  const status = refusal.status >= 500 ? 502 : 401;
  return googleRefusal(
    status,
    status === 401 ? 'UNAUTHENTICATED' : 'UNAVAILABLE',
    `Google's token endpoint refused the service account: ${refusal.message}`,
  );
}

/**
 * Google Vertex AI (channel type 41): Gemini through Google's publisher (generateContent) and Claude
 * through Anthropic's (rawPredict), each in its own native format, and Veo videos (predictLongRunning),
 * with an OAuth access token a service account's signed JWT buys.
 */
export const vertexProvider: Provider = {
  name: 'vertex',
  formats: FORMATS,
  nativeFormat: (format, upstreamModel) => {
    if (!CHAT_LIKE.has(format)) return undefined;
    return upstreamModel !== undefined && isClaude(upstreamModel) ? 'claude-messages' : 'gemini-generate';
  },
  prepareBody: prepareVertexBody,
  buildRequest: buildVertexRequest,
  authorize: authorizeVertex,
  send: sendVertex,
  listModels: (input) => listVertexModels(input, tokens),
  usageFromBody: vertexUsage,
  streamObserver: vertexStreamObserver,
  parseError: parseVertexError,
  // Video requests get the same access token, fetched before each is sent.
  video: vertexVideo(async (request, input) => sendVertex(await authorizeVertex(request, input), input)),
};

export { parseVertexError } from './errors.ts';
export { publicClaudeId, vertexClaudeId } from './models.ts';
export { DEFAULT_REGION, regionFor, vertexHost } from './region.ts';
export { buildVertexRequest, prepareVertexBody, VERTEX_ANTHROPIC_VERSION } from './request.ts';
export { AccessTokens, CLOUD_PLATFORM_SCOPE, signAssertion, TokenRefused } from './token.ts';
