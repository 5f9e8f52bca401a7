import { SseParser } from '../../sse.ts';
import type { WireFormat } from '../../types.ts';
import type { Provider } from '../types.ts';
import { parseBedrockError, sendBedrock } from './errors.ts';
import { listBedrockModels } from './listing.ts';
import { isClaudeModel } from './models.ts';
import { authorizeBedrock, buildBedrockRequest, EVENT_STREAM, prepareBedrockBody } from './request.ts';
import { BedrockClaudeObserver, BedrockStreamDecoder, ConverseStreamObserver } from './stream.ts';
import { bedrockUsageFromBody } from './usage.ts';

const FORMATS: ReadonlySet<WireFormat> = new Set<WireFormat>(['claude-messages', 'bedrock-converse']);

/** Chat-like client formats; each reaches a Claude model as Claude Messages and any other as Converse. */
const CHAT_LIKE: ReadonlySet<WireFormat> = new Set<WireFormat>([
  'openai-chat',
  'openai-responses',
  'claude-messages',
  'gemini-generate',
]);

/**
 * AWS Bedrock (channel type 33): Claude models through InvokeModel(WithResponseStream) with the
 * Anthropic body, so a Claude client's request passes unchanged; every other model through
 * Converse(Stream). Requests are SigV4-signed with the key's access key pair, or carry a Bedrock API key.
 */
export const bedrockProvider: Provider = {
  name: 'bedrock',
  formats: FORMATS,
  nativeFormat: (format, upstreamModel) => {
    if (!CHAT_LIKE.has(format)) return undefined;
    return upstreamModel !== undefined && isClaudeModel(upstreamModel) ? 'claude-messages' : 'bedrock-converse';
  },
  prepareBody: prepareBedrockBody,
  buildRequest: buildBedrockRequest,
  authorize: authorizeBedrock,
  send: sendBedrock,
  streamDecoder: (contentType) => {
    if (contentType.includes(EVENT_STREAM)) return new BedrockStreamDecoder();
    return contentType.includes('text/event-stream') ? new SseParser() : undefined;
  },
  listModels: listBedrockModels,
  usageFromBody: bedrockUsageFromBody,
  streamObserver: (format) =>
    format === 'claude-messages' ? new BedrockClaudeObserver() : new ConverseStreamObserver(),
  parseError: parseBedrockError,
};
