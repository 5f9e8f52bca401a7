import { parseOpenAIError } from '../openai/errors.ts';
import { taskProvider } from '../task-provider.ts';
import { jsonPost } from '../video-tasks.ts';
import { klingHeaders } from './jwt.ts';
import { klingUrl, klingVideo, TEXT2VIDEO } from './video.ts';

/**
 * Kling (type 50), video generation only. Only the task routes (relay/tasks/video: the generic video
 * API and the /kling routes) speak it: a submission is a whole answer billed per call, never a
 * stream, never a conversion. Every request carries a JWT signed from the channel's key (jwt.ts).
 */
export const klingProvider = taskProvider({
  name: 'kling',
  format: 'video',
  buildRequest: (input) => jsonPost(klingUrl(input.channel, TEXT2VIDEO), klingHeaders(input.key), input.body),
  video: klingVideo,
  // Kling's errors are `{code, message}`: the message is read where OpenAI's would be.
  parseError: parseOpenAIError,
});
