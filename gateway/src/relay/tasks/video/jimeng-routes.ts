import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../errors.ts';
import { requestLanguage, toAppError } from '../../../http/errors.ts';
import { findUserTasks } from '../../../store/repositories/task-billing.ts';
import type { TaskRow } from '../../../store/repositories/tasks.ts';
import { authenticateKey } from '../../auth/key-auth.ts';
import type { RelayPluginDeps } from '../../index.ts';
import { JIMENG_OK, JIMENG_VERSION, RESULT_ACTION, SUBMIT_ACTION } from '../../protocols/jimeng/video.ts';
import { isRecord } from '../../protocols/video-fields.ts';
import { setRetryAfter } from '../../retry-after.ts';
import { VIDEO_PLATFORM } from './platform.ts';
import { invalidVideo, VideoFailure } from './submission.ts';
import { createVideo } from './submit.ts';
import { videoUrl } from './view.ts';

/** The visual API's codes for a refusal: 50000 + the HTTP status (50400 bad request, 50429 limits, 50500 errors). */
const refusalCode = (status: number) => 50000 + status;

/** A visual API answer: `code` 10000 and the data, or a refusal's code and message. */
const answer = (request: FastifyRequest, code: number, message: string, data: unknown) => ({
  code,
  message,
  request_id: request.id,
  status: code,
  time_elapsed: '',
  data,
});

/** The visual API's task status for a task row (SUCCESS is `done`, running ones `in_queue` or `generating`). */
function resultData(row: TaskRow) {
  const status = row.status === 'SUCCESS' ? 'done' : row.status === 'IN_PROGRESS' ? 'generating' : 'in_queue';
  return { status, video_url: row.status === 'SUCCESS' ? (videoUrl(row) ?? '') : '', resp_data: '' };
}

/**
 * new-api's native Jimeng route: `POST /jimeng/?Action=CVSync2AsyncSubmitTask|CVSync2AsyncGetResult&Version=2022-08-31`
 * with the visual API's own body (`req_key` is the model), answered in its shape under the gateway's
 * public task id. Submissions go through the same video tasks as /v1/video/generations: priced,
 * charged once accepted, polled, refunded on failure.
 */
export async function jimengRoutes(app: FastifyInstance, deps: RelayPluginDeps): Promise<void> {
  app.setErrorHandler(async (error, request, reply) => {
    setRetryAfter(reply, error);
    const failure =
      error instanceof VideoFailure
        ? { status: error.status, message: `${error.code}: ${error.message}` }
        : (() => {
            const appError = toAppError(error);
            if (appError.status >= 500 && !(error instanceof AppError)) {
              request.log.error({ err: error }, 'jimeng request failed');
            }
            return {
              status: appError.status,
              message: `${appError.code}: ${appError.localized(requestLanguage(request))}`,
            };
          })();
    if (reply.sent || reply.raw.headersSent) return;
    return reply.code(failure.status).send(answer(request, refusalCode(failure.status), failure.message, null));
  });

  const route = async (
    request: FastifyRequest<{ Querystring: { Action?: string; Version?: string } }>,
    reply: FastifyReply,
  ) => {
    const who = await authenticateKey(request, deps.keys, deps.options);
    const { Action: action, Version: version } = request.query;
    if (version !== JIMENG_VERSION) throw invalidVideo(`Version must be ${JIMENG_VERSION}`);
    if (!isRecord(request.body)) throw invalidVideo('the body must be a JSON object');
    const body = request.body;
    if (typeof body.req_key !== 'string' || body.req_key === '') throw invalidVideo('req_key is required');
    if (action === SUBMIT_ACTION) {
      return createVideo(deps, who, request, reply, {
        fields: { ...body, model: body.req_key },
        action: 'GENERATE',
        view: (row) => answer(request, JIMENG_OK, 'Success', { task_id: row.task_id }),
      });
    }
    if (action === RESULT_ACTION) {
      if (typeof body.task_id !== 'string' || body.task_id === '') throw invalidVideo('task_id is required');
      const [row] = await findUserTasks(deps.db, VIDEO_PLATFORM, who.identity.user.id, [body.task_id]);
      // Another user's task, like one that never was, is not found (the visual API's own answer for it).
      if (!row) return answer(request, JIMENG_OK, 'Success', { status: 'not_found', video_url: '', resp_data: '' });
      if (row.status === 'FAILURE') return answer(request, refusalCode(500), row.fail_reason, null);
      return answer(request, JIMENG_OK, 'Success', resultData(row));
    }
    throw invalidVideo(`Action must be ${SUBMIT_ACTION} or ${RESULT_ACTION}`);
  };
  app.post('/jimeng', { bodyLimit: deps.bodyLimitBytes }, route);
  app.post('/jimeng/', { bodyLimit: deps.bodyLimitBytes }, route);
}
