import type { UpstreamResponse } from '../../transport.ts';
import { isJson, jsonResponse, readWhole } from '../synthetic-response.ts';
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
    return jsonResponse(401, {
      code: 1002,
      msg: 'the channel key is not id.secret (Zhipu v3 key format)',
      success: false,
    });
  }
  const signed = { ...request, headers: { ...request.headers, authorization: tokens.get(key) } };
  const response = await input.transport.send(signed, input.signal);
  if (!isJson(response)) return response;
  const whole = await readWhole(response);
  let body: { success?: unknown; code?: unknown } | undefined;
  try {
    body = JSON.parse(whole.text);
  } catch {
    return whole.response;
  }
  if (response.status >= 400 || body?.success !== false) return whole.response;
  return jsonResponse(typeof body.code === 'number' ? statusForZhipuCode(body.code) : 400, body);
}
