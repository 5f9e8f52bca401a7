import { parseOpenAIError } from '../openai/errors.ts';
import { taskProvider } from '../task-provider.ts';
import { jimengVideo, SUBMIT_ACTION, signedJimengRequest } from './video.ts';

/**
 * Jimeng on Volcengine's visual API (type 51). Only the video task routes (relay/tasks/video and the
 * native /jimeng route) speak it, every call signed (sign.ts).
 */
export const jimengProvider = taskProvider({
  name: 'jimeng',
  format: 'video',
  buildRequest: (input) => signedJimengRequest(input.channel, input.key, SUBMIT_ACTION, String(input.body)),
  video: jimengVideo,
  parseError: parseOpenAIError,
});
