import type { WireFormat } from '../../types.ts';
import { parseOpenAIError } from '../openai/errors.ts';
import type { Provider } from '../types.ts';
import { jimengVideo, SUBMIT_ACTION, signedJimengRequest } from './video.ts';

const NONE = {
  observe() {},
  usage: undefined,
  text: '',
  toolCalls: 0,
};

/**
 * Jimeng on Volcengine's visual API (type 51). Only the video task routes (relay/tasks/video and the
 * native /jimeng route) speak it, every call signed (sign.ts).
 */
export const jimengProvider: Provider = {
  name: 'jimeng',
  formats: new Set<WireFormat>(['video']),
  nativeFormat: (format) => (format === 'video' ? 'video' : undefined),
  prepareBody: (_format, body, context) => ({ body, upstreamModel: context.upstreamModel }),
  buildRequest: (input) => signedJimengRequest(input.channel, input.key, SUBMIT_ACTION, String(input.body)),
  video: jimengVideo,
  usageFromBody: () => undefined,
  streamObserver: () => NONE,
  parseError: parseOpenAIError,
};
