import type { WireFormat } from '../../types.ts';
import type { Provider } from '../types.ts';
import { parseXunfeiError } from './errors.ts';
import { buildXunfeiRequest, finishXunfeiBody, prepareXunfeiBody, signXunfeiRequest } from './request.ts';
import { sparkSession } from './session.ts';
import { XunfeiStreamObserver } from './stream.ts';
import { xunfeiUsageFromBody } from './usage.ts';

const CHAT_LIKE: ReadonlySet<WireFormat> = new Set<WireFormat>([
  'openai-chat',
  'openai-responses',
  'claude-messages',
  'gemini-generate',
]);

/** Xunfei Spark (channel type 18): chat over an HMAC-signed WebSocket, version from the channel's `other`. */
export const xunfeiProvider: Provider = {
  name: 'xunfei',
  formats: new Set<WireFormat>(['xunfei-chat']),
  nativeFormat: (format) => (CHAT_LIKE.has(format) ? 'xunfei-chat' : undefined),
  prepareBody: prepareXunfeiBody,
  finishBody: (_format, body, channel, key) => finishXunfeiBody(body, channel, key),
  buildRequest: buildXunfeiRequest,
  authorize: signXunfeiRequest,
  send: sparkSession,
  usageFromBody: xunfeiUsageFromBody,
  streamObserver: () => new XunfeiStreamObserver(),
  parseError: parseXunfeiError,
};
