import type { WireFormat } from '../../types.ts';
import type { Provider } from '../types.ts';
import { parseBaiduError } from './errors.ts';
import { buildBaiduRequest } from './request.ts';
import { sendBaidu } from './send.ts';
import { BaiduStreamObserver } from './stream.ts';
import { baiduUsage } from './usage.ts';

const FORMATS: ReadonlySet<WireFormat> = new Set<WireFormat>(['baidu-chat', 'baidu-embeddings']);

/** What each client format is sent to Baidu as (chat-like formats through the hub). */
const NATIVE: Partial<Record<WireFormat, WireFormat>> = {
  'openai-chat': 'baidu-chat',
  'openai-responses': 'baidu-chat',
  'claude-messages': 'baidu-chat',
  'gemini-generate': 'baidu-chat',
  'openai-embeddings': 'baidu-embeddings',
  'gemini-embed': 'baidu-embeddings',
};

/** Baidu ERNIE v1 (channel type 15): OAuth access token per key, one path per model, errors with HTTP 200. */
export const baiduProvider: Provider = {
  name: 'baidu',
  formats: FORMATS,
  nativeFormat: (format) => NATIVE[format],
  // The model is in the path, not the body.
  prepareBody: (_format, body, context) => ({ body, upstreamModel: context.upstreamModel }),
  buildRequest: buildBaiduRequest,
  send: sendBaidu,
  usageFromBody: (_format, body) => baiduUsage(body),
  streamObserver: () => new BaiduStreamObserver(),
  parseError: parseBaiduError,
};
