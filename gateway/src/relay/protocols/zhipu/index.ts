import type { WireFormat } from '../../types.ts';
import type { Provider } from '../types.ts';
import { parseZhipuError } from './errors.ts';
import { buildZhipuRequest } from './request.ts';
import { sendZhipu } from './send.ts';
import { ZhipuStreamDecoder, ZhipuStreamObserver } from './stream.ts';
import { zhipuUsage } from './usage.ts';

const FORMATS: ReadonlySet<WireFormat> = new Set<WireFormat>(['zhipu-v3']);
const CHAT_LIKE: ReadonlySet<WireFormat> = new Set<WireFormat>([
  'openai-chat',
  'openai-responses',
  'claude-messages',
  'gemini-generate',
]);

/** Zhipu v3 model-api (channel type 16): JWT-signed invoke / sse-invoke per model. */
export const zhipuProvider: Provider = {
  name: 'zhipu',
  formats: FORMATS,
  nativeFormat: (format) => (CHAT_LIKE.has(format) ? 'zhipu-v3' : undefined),
  // The model is in the path, not the body.
  prepareBody: (_format, body, context) => ({ body, upstreamModel: context.upstreamModel }),
  buildRequest: buildZhipuRequest,
  send: sendZhipu,
  streamDecoder: (contentType) => (contentType.includes('text/event-stream') ? new ZhipuStreamDecoder() : undefined),
  usageFromBody: (_format, body) => zhipuUsage((body as { data?: { usage?: unknown } } | undefined)?.data?.usage),
  streamObserver: () => new ZhipuStreamObserver(),
  parseError: parseZhipuError,
};
