import type { ChannelSnapshot } from '../../types.ts';
import { parseOpenAIError } from '../openai/errors.ts';
import { taskProvider } from '../task-provider.ts';
import type { UpstreamRequest } from '../types.ts';

/** A request to a Suno API proxy server: `{base}{path}` with the channel key as a Bearer token. */
export function sunoRequest(
  channel: Pick<ChannelSnapshot, 'baseUrl'>,
  key: string,
  path: string,
  body?: unknown,
): UpstreamRequest {
  const url = `${channel.baseUrl.replace(/\/+$/, '')}${path}`;
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' };
  if (body === undefined) return { url, method: 'GET', headers };
  headers['content-type'] = 'application/json';
  return { url, method: 'POST', headers, body: JSON.stringify(body) };
}

/**
 * The Suno API proxy (type 36). Only the task routes (relay/tasks/suno) speak it: a submission is a
 * whole JSON answer billed per call, never a stream, never a conversion from another format.
 */
export const sunoProvider = taskProvider({
  name: 'suno',
  format: 'suno',
  buildRequest: (input) => sunoRequest(input.channel, input.key, '/suno/submit/music', input.body),
  parseError: parseOpenAIError,
});
