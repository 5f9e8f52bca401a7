import type { UpstreamResponse } from '../../transport.ts';
import { jsonAnswer, jsonAnswerText } from '../answer.ts';
import type { SendInput, UpstreamRequest } from '../types.ts';
import { statusForZhipuCode } from './errors.ts';
import { parseZhipuKey, ZhipuTokens } from './jwt.ts';

const tokens = new ZhipuTokens();

/**
 * Signs the request with a token from the key (the raw token in `Authorization`, as Zhipu's SDK
 * sends it) and sends it. A v3 answer with `success: false` is an error whatever its HTTP status.
 */
export async function sendZhipu(request: UpstreamRequest, input: SendInput): Promise<UpstreamResponse> {
  const key = parseZhipuKey(input.key ?? '');
  if (!key) {
    return jsonAnswer(401, {
      code: 1002,
      msg: 'the channel key is not id.secret (Zhipu v3 key format)',
      success: false,
    });
  }
  const signed = { ...request, headers: { ...request.headers, authorization: tokens.get(key) } };
  const response = await input.transport.send(signed, input.signal);
  const text = await jsonAnswerText(response);
  if (text === undefined) return response;
  let body: { success?: unknown; code?: unknown } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (response.status >= 400 || body?.success !== false) return jsonAnswer(response.status, text);
  return jsonAnswer(typeof body.code === 'number' ? statusForZhipuCode(body.code) : 400, text);
}
