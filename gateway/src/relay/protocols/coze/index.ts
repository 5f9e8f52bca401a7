import type { WireFormat } from '../../types.ts';
import { CHAT_FORMATS } from '../hub-request.ts';
import type { Provider } from '../types.ts';
import { parseCozeError } from './errors.ts';
import { sendCoze } from './poll.ts';
import { buildCozeRequest, finishCozeBody, prepareCozeBody } from './request.ts';
import { CozeStreamObserver } from './stream.ts';
import { cozeChatUsage } from './usage.ts';

/** Coze bots through v3 chat (`POST /v3/chat`, Bearer token); the model is the bot id. */
export const cozeProvider: Provider = {
  name: 'coze',
  formats: new Set<WireFormat>(['coze-chat']),
  nativeFormat: (format) => (format === 'coze-chat' || CHAT_FORMATS.has(format) ? 'coze-chat' : undefined),
  prepareBody: (_format, body, context) => ({
    body: prepareCozeBody(body, context),
    upstreamModel: context.upstreamModel,
  }),
  finishBody: (_format, body) => finishCozeBody(body),
  buildRequest: buildCozeRequest,
  send: (request, input) => sendCoze(request, input),
  usageFromBody: (_format, body) => cozeChatUsage((body as { chat?: unknown } | undefined)?.chat),
  streamObserver: () => new CozeStreamObserver(),
  parseError: parseCozeError,
};
