import { parseOpenAIError } from '../openai/errors.ts';
import { taskProvider } from '../task-provider.ts';
import { jsonPost } from '../video-tasks.ts';
import { soraVideo } from './sora.ts';

/**
 * OpenAI's Videos API (Sora, type 55). Only the task routes (relay/tasks/video) speak it: a submission
 * is a whole answer billed per call × its seconds and size, never a stream, never a conversion.
 */
export const videoProvider = taskProvider({
  name: 'video',
  format: 'video',
  buildRequest: (input) =>
    jsonPost(
      `${input.channel.baseUrl.replace(/\/+$/, '')}/v1/videos`,
      { authorization: `Bearer ${input.key}` },
      input.body,
    ),
  video: soraVideo,
  parseError: parseOpenAIError,
});
