import type { ChannelSnapshot, WireFormat } from '../../types.ts';
import { parseOpenAIError } from '../openai/errors.ts';
import type { Provider, UpstreamRequest } from '../types.ts';

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

const NONE = {
  observe() {},
  usage: undefined,
  text: '',
  toolCalls: 0,
};

/**
 * The Suno API proxy (type 36). Only the task routes (relay/tasks/suno) speak it: a submission is a
 * whole JSON answer billed per call, never a stream, never a conversion from another format.
 */
export const sunoProvider: Provider = {
  name: 'suno',
  formats: new Set<WireFormat>(['suno']),
  nativeFormat: (format) => (format === 'suno' ? 'suno' : undefined),
  prepareBody: (_format, body, context) => ({ body, upstreamModel: context.upstreamModel }),
  buildRequest: (input) => sunoRequest(input.channel, input.key, '/suno/submit/music', input.body),
  usageFromBody: () => undefined,
  streamObserver: () => NONE,
  parseError: parseOpenAIError,
};
