import { parseOpenAIError } from '../openai/errors.ts';
import { taskProvider } from '../task-provider.ts';
import { channelBase } from '../video-fields.ts';
import { jsonPost } from '../video-tasks.ts';
import { seedanceVideo } from './video.ts';

/**
 * Doubao Seedance on Volcengine Ark (DoubaoVideo, type 54). Only the video task routes
 * (relay/tasks/video) speak it; its errors are Ark's OpenAI-shaped `{error: {code, message}}`.
 */
export const seedanceProvider = taskProvider({
  name: 'seedance',
  format: 'video',
  buildRequest: (input) =>
    jsonPost(
      `${channelBase(input.channel)}/api/v3/contents/generations/tasks`,
      { authorization: `Bearer ${input.key}` },
      input.body,
    ),
  video: seedanceVideo,
  parseError: parseOpenAIError,
});
