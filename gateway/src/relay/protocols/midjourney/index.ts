import type { ChannelSnapshot } from '../../types.ts';
import { parseOpenAIError } from '../openai/errors.ts';
import { taskProvider } from '../task-provider.ts';
import type { UpstreamRequest } from '../types.ts';

/**
 * A request to a midjourney-proxy server: `{base}{path}` with the channel key in `mj-api-secret`, the
 * header every midjourney-proxy build checks.
 */
export function midjourneyRequest(
  channel: Pick<ChannelSnapshot, 'baseUrl'>,
  key: string,
  path: string,
  body?: unknown,
): UpstreamRequest {
  const headers: Record<string, string> = { 'mj-api-secret': key, accept: 'application/json' };
  if (body === undefined) return { url: `${channel.baseUrl.replace(/\/+$/, '')}${path}`, method: 'GET', headers };
  headers['content-type'] = 'application/json';
  return {
    url: `${channel.baseUrl.replace(/\/+$/, '')}${path}`,
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

/**
 * Midjourney-proxy (types 2 and 5). Only the task routes (relay/tasks/midjourney) speak it: a submission
 * is a whole JSON answer billed per call, never a stream, never a conversion from another format.
 */
export const midjourneyProvider = taskProvider({
  name: 'midjourney',
  format: 'midjourney',
  buildRequest: (input) => midjourneyRequest(input.channel, input.key, '/mj/submit/imagine', input.body),
  parseError: parseOpenAIError,
});
