import { taskProvider } from '../task-provider.ts';
import { jsonPost } from '../video-tasks.ts';
import { viduVideo } from './video.ts';

/** Vidu's answers to a refused call: `{reason, message}` or its `err_code`. */
function parseViduError(status: number, text: string) {
  let message = text.slice(0, 300);
  let code: string | null = null;
  try {
    const body = JSON.parse(text) as { reason?: unknown; message?: unknown; err_code?: unknown };
    const reason = body.reason ?? body.err_code;
    if (typeof reason === 'string') code = reason;
    if (typeof body.message === 'string' && body.message !== '') message = body.message;
    else if (code) message = code;
  } catch {
    // Not JSON: the start of the text says it.
  }
  return { status, message, type: 'upstream_error', code };
}

/**
 * Vidu (channel type 52): video generation only. The task routes (relay/tasks/video) speak it through
 * `video`; a submission is billed per call, never streamed, never converted.
 */
export const viduProvider = taskProvider({
  name: 'vidu',
  format: 'video',
  buildRequest: (input) =>
    jsonPost(
      `${input.channel.baseUrl.replace(/\/+$/, '')}/ent/v2/text2video`,
      { authorization: `Token ${input.key}` },
      input.body,
    ),
  video: viduVideo,
  parseError: parseViduError,
});
