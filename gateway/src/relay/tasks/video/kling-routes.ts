import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../../errors.ts';
import { requestLanguage, toAppError } from '../../../http/errors.ts';
import { findUserTasks } from '../../../store/repositories/task-billing.ts';
import type { TaskRow } from '../../../store/repositories/tasks.ts';
import { authenticateKey } from '../../auth/key-auth.ts';
import type { RelayPluginDeps } from '../../index.ts';
import { IMAGE2VIDEO, TEXT2VIDEO } from '../../protocols/kling/video.ts';
import { isRecord } from '../../protocols/video-fields.ts';
import { setRetryAfter } from '../../retry-after.ts';
import { VIDEO_PLATFORM } from './platform.ts';
import { invalidVideo, VideoFailure } from './submission.ts';
import { createVideo } from './submit.ts';
import { videoProperties, videoUrl } from './view.ts';

/** Kling names a model `model_name`; without one it makes kling-v1. */
const DEFAULT_MODEL = 'kling-v1';

const KLING_STATUS: Record<string, string> = {
  SUBMITTED: 'submitted',
  QUEUED: 'submitted',
  IN_PROGRESS: 'processing',
  SUCCESS: 'succeed',
  FAILURE: 'failed',
};

/** Kling's error codes for the statuses the gateway answers (Kling's documented table). */
const KLING_CODE: Record<number, number> = {
  400: 1201,
  401: 1000,
  403: 1103,
  404: 1203,
  413: 1201,
  429: 1302,
  503: 5001,
  504: 5002,
};
const klingCode = (status: number) => KLING_CODE[status] ?? (status >= 500 ? 5000 : 1200);

/** A stored task as Kling's task answer, under the gateway's public id (the upstream's stays private). */
export function klingTask(row: TaskRow, requestId: string) {
  const url = row.status === 'SUCCESS' ? videoUrl(row) : undefined;
  return {
    code: 0,
    message: 'SUCCEED',
    request_id: requestId,
    data: {
      task_id: row.task_id,
      task_status: KLING_STATUS[row.status] ?? 'submitted',
      task_status_msg: row.status === 'FAILURE' ? row.fail_reason : '',
      task_info: {},
      // Kling's times are Unix milliseconds.
      created_at: Number(row.submit_time) * 1000,
      updated_at: Number(row.updated_at) * 1000,
      task_result: {
        videos: url ? [{ id: row.task_id, url, duration: videoProperties(row)?.seconds ?? '' }] : [],
      },
    },
  };
}

/**
 * Kling's own API on the gateway's video tasks: `POST /kling/v1/videos/{text2video|image2video}` with
 * Kling's body (`model_name`, `prompt`, `image`, `duration`, `mode`, …) and `GET` of the same path's
 * `/{task_id}`, answered in Kling's shapes with the gateway's task id; the same channels, billing and
 * polling as the generic video API. Failures are Kling's `{code, message, request_id}`.
 */
export async function klingRoutes(app: FastifyInstance, deps: RelayPluginDeps): Promise<void> {
  app.setErrorHandler(async (error, request, reply) => {
    setRetryAfter(reply, error);
    let status: number;
    let code: number;
    let message: string;
    if (error instanceof VideoFailure) {
      status = error.status;
      // A refusal of Kling's own keeps its code; the gateway's are Kling's code for the status.
      code = /^\d+$/.test(error.code) ? Number(error.code) : klingCode(status);
      message = error.message;
    } else {
      const appError = toAppError(error);
      if (appError.status >= 500 && !(error instanceof AppError)) {
        request.log.error({ err: error }, 'kling request failed');
      }
      status = appError.status;
      code = klingCode(status);
      message = `${appError.localized(requestLanguage(request))} (request id: ${request.id})`;
    }
    if (reply.sent || reply.raw.headersSent) return;
    return reply.code(status).send({ code, message, request_id: request.id });
  });
  const caller = (request: FastifyRequest) => authenticateKey(request, deps.keys, deps.options);

  for (const [endpoint, action] of [
    ['text2video', TEXT2VIDEO],
    ['image2video', IMAGE2VIDEO],
  ] as const) {
    app.post(`/kling/v1/videos/${endpoint}`, { bodyLimit: deps.bodyLimitBytes }, async (request, reply) => {
      const who = await caller(request);
      if (!isRecord(request.body)) throw invalidVideo('the body must be a JSON object');
      const body = request.body;
      const named = [body.model_name, body.model].find((value) => typeof value === 'string' && value !== '');
      return createVideo(deps, who, request, reply, {
        fields: { ...body, model: named ?? DEFAULT_MODEL },
        action,
        // Kling animates an image without a prompt; a text video needs one.
        promptOptional: action === IMAGE2VIDEO,
        view: (row) => klingTask(row, request.id),
      });
    });

    app.get<{ Params: { id: string } }>(`/kling/v1/videos/${endpoint}/:id`, async (request) => {
      const who = await caller(request);
      const [row] = await findUserTasks(deps.db, VIDEO_PLATFORM, who.identity.user.id, [request.params.id]);
      if (!row) throw new VideoFailure('video_not_found', 'no task with this id', 404);
      return klingTask(row, request.id);
    });
  }
}
