import { parseOpenAIError } from '../openai/errors.ts';
import { taskProvider } from '../task-provider.ts';
import { soraVideo } from './sora.ts';

/**
 * OpenAI's Videos API (Sora, type 55). Only the task routes (relay/tasks/video) speak it: a submission
 * is a whole answer billed per call × its seconds and size, never a stream, never a conversion.
 */
export const videoProvider = taskProvider({
  name: 'video',
  format: 'video',
  buildRequest: (input) => ({
    url: `${input.channel.baseUrl.replace(/\/+$/, '')}/v1/videos`,
    method: 'POST',
    headers: { authorization: `Bearer ${input.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(input.body),
  }),
  video: soraVideo,
  parseError: parseOpenAIError,
});
