import type { WireFormat } from '../../types.ts';
import { jsonAnswerText, providerAnswer } from '../answer.ts';
import type { Provider } from '../types.ts';
import { parseTencentError, tencentError, tencentErrorStatus } from './errors.ts';
import { buildTencentRequest, prepareTencentBody, signTencentRequest } from './request.ts';
import { TencentStreamObserver } from './stream.ts';
import { tencentUsageFromBody } from './usage.ts';

const CHAT_LIKE: ReadonlySet<WireFormat> = new Set<WireFormat>([
  'openai-chat',
  'openai-responses',
  'claude-messages',
  'gemini-generate',
]);

/** Tencent Hunyuan (channel type 23): ChatCompletions signed with TC3-HMAC-SHA256. */
export const tencentProvider: Provider = {
  name: 'tencent',
  formats: new Set<WireFormat>(['tencent-chat']),
  nativeFormat: (format) => (CHAT_LIKE.has(format) ? 'tencent-chat' : undefined),
  prepareBody: prepareTencentBody,
  buildRequest: buildTencentRequest,
  authorize: signTencentRequest,
  async send(request, { transport, signal }) {
    const response = await transport.send(request, signal);
    const text = await jsonAnswerText(response);
    if (text === undefined) return response;
    // Errors come with HTTP 200: the answer is given the status its error code deserves.
    const error = tencentError(text);
    const status = error ? tencentErrorStatus(error.code) : response.status;
    return providerAnswer(status, 'application/json', Buffer.from(text));
  },
  usageFromBody: tencentUsageFromBody,
  streamObserver: () => new TencentStreamObserver(),
  parseError: parseTencentError,
};
