import type { WireFormat } from '../../types.ts';
import { parseOpenAIError } from '../openai/errors.ts';
import type { Provider } from '../types.ts';
import { channelBase } from '../video-fields.ts';
import { seedanceVideo } from './video.ts';

const NONE = {
  observe() {},
  usage: undefined,
  text: '',
  toolCalls: 0,
};

/**
 * Doubao Seedance on Volcengine Ark (DoubaoVideo, type 54). Only the video task routes
 * (relay/tasks/video) speak it; its errors are Ark's OpenAI-shaped `{error: {code, message}}`.
 */
export const seedanceProvider: Provider = {
  name: 'seedance',
  formats: new Set<WireFormat>(['video']),
  nativeFormat: (format) => (format === 'video' ? 'video' : undefined),
  prepareBody: (_format, body, context) => ({ body, upstreamModel: context.upstreamModel }),
  buildRequest: (input) => ({
    url: `${channelBase(input.channel)}/api/v3/contents/generations/tasks`,
    method: 'POST',
    headers: { authorization: `Bearer ${input.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(input.body),
  }),
  video: seedanceVideo,
  usageFromBody: () => undefined,
  streamObserver: () => NONE,
  parseError: parseOpenAIError,
};
