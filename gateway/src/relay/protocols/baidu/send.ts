import type { UpstreamResponse } from '../../transport.ts';
import { jsonAnswer, jsonAnswerText } from '../answer.ts';
import type { SendInput, UpstreamRequest } from '../types.ts';
import { WENXIN_PREFIX } from './endpoints.ts';
import { statusForBaiduCode, TOKEN_ERRORS } from './errors.ts';
import { parseBaiduKey } from './key.ts';
import { BaiduTokens } from './token.ts';

const tokens = new BaiduTokens();

/**
 * One Baidu exchange: an access token for the key (cached), the call with it, and once more with a
 * fresh token when Baidu says the token is invalid or expired. Baidu reports errors with HTTP 200;
 * they are answered with the status they stand for, so the relay treats them as failures.
 */
export async function sendBaidu(request: UpstreamRequest, input: SendInput): Promise<UpstreamResponse> {
  const key = parseBaiduKey(input.key ?? '');
  if (!key) {
    return jsonAnswer(401, {
      error_code: 14,
      error_msg: 'the channel key is not APIKey|SecretKey (Baidu ERNIE v1 key format)',
    });
  }
  // The token endpoint is on the API's host: the request's URL before the wenxinworkshop path.
  const host = request.url.slice(0, request.url.indexOf(WENXIN_PREFIX));
  for (let attempt = 0; ; attempt++) {
    const got = await tokens.get(host, key, input.transport, input.signal);
    if ('refused' in got) {
      return jsonAnswer(
        got.refused.status,
        parsed(got.refused.text) ?? { error: 'invalid_client', error_description: got.refused.text },
      );
    }
    const url = new URL(request.url);
    url.searchParams.set('access_token', got.token);
    const response = await input.transport.send({ ...request, url: url.toString() }, input.signal);
    const text = await jsonAnswerText(response);
    if (text === undefined) return response;
    const code = errorCode(text);
    if (code === undefined) return jsonAnswer(response.status, text);
    if (TOKEN_ERRORS.has(code) && attempt === 0) {
      tokens.forget(host, key, got.token);
      continue;
    }
    return jsonAnswer(statusForBaiduCode(code), text);
  }
}

/** The `error_code` of a Baidu answer, if it is an error. */
function errorCode(text: string): number | undefined {
  const code = (parsed(text) as { error_code?: unknown } | undefined)?.error_code;
  return typeof code === 'number' && code !== 0 ? code : undefined;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
