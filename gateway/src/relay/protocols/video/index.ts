import type { WireFormat } from '../../types.ts';
import { parseOpenAIError } from '../openai/errors.ts';
import type { Provider } from '../types.ts';
import { soraVideo } from './sora.ts';

const NONE = {
  observe() {},
  usage: undefined,
  text: '',
  toolCalls: 0,
};

/**
 * OpenAI's Videos API (Sora, type 55). Only the task routes (relay/tasks/video) speak it: a submission
 * is a whole answer billed per call × its seconds and size, never a stream, never a conversion.
 */
export const videoProvider: Provider = {
  name: 'video',
  formats: new Set<WireFormat>(['video']),
  nativeFormat: (format) => (format === 'video' ? 'video' : undefined),
  prepareBody: (_format, body, context) => ({ body, upstreamModel: context.upstreamModel }),
  buildRequest: (input) => ({
    url: `${input.channel.baseUrl.replace(/\/+$/, '')}/v1/videos`,
    method: 'POST',
    headers: { authorization: `Bearer ${input.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(input.body),
  }),
  video: soraVideo,
  usageFromBody: () => undefined,
  streamObserver: () => NONE,
  parseError: parseOpenAIError,
};
