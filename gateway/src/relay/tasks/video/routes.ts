import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from '../../../api/auth.ts';
import { AppError } from '../../../errors.ts';
import { requestCookie } from '../../../http/cookies.ts';
import { requestLanguage, toAppError } from '../../../http/errors.ts';
import { findUserTasks, listUserTasks } from '../../../store/repositories/task-billing.ts';
import type { TaskRow } from '../../../store/repositories/tasks.ts';
import { authenticateKey, type RelayCaller } from '../../auth/key-auth.ts';
import type { RelayPluginDeps } from '../../index.ts';
import { openAIError } from '../../openai-error.ts';
import { setRetryAfter } from '../../retry-after.ts';
import type { UpstreamResponse } from '../../transport.ts';
import { admitSubmission, inTaskGroup } from '../route.ts';
import { jimengRoutes } from './jimeng-routes.ts';
import { klingRoutes } from './kling-routes.ts';
import { VIDEO_PLATFORM } from './platform.ts';
import { invalidVideo, readSubmission, VideoFailure } from './submission.ts';
import { createVideo, screenVideoPrompt, submitVideo, videoTaskKey, videoTaskRef, videoTasksOf } from './submit.ts';
import { fetchVideoContent } from './upstream.ts';
import { videoObject, videoProperties, videoUrl } from './view.ts';

const CONTENT_TIMEOUT_MS = 60_000;
const VARIANTS = ['video', 'thumbnail', 'spritesheet'];
const notFound = () => new VideoFailure('video_not_found', 'no video with this id', 404);
const notReady = () => new VideoFailure('video_not_ready', 'the video is not completed', 400);

/**
 * The video task routes: OpenAI's Videos API and new-api's generic video API, over every protocol
 * that makes videos (relay/protocols/video-tasks.ts). Submissions are charged once the upstream took
 * them, under a public id the gateway made; retrieval is answered from the database, and content is
 * proxied to the caller who owns the task only.
 */
export interface VideoPluginDeps extends RelayPluginDeps {
  /**
   * The console's signed-in user (session cookie and New-Api-User header), for the content route: as in
   * new-api it takes a key or the owner's console session, so the task log can play the video.
   */
  consoleUserId?: (request: FastifyRequest) => Promise<number>;
}

export async function videoPlugin(app: FastifyInstance, deps: VideoPluginDeps): Promise<void> {
  const { db, options } = deps;
  // The console session's user, set by its guard on the content route.
  app.decorateRequest('auth', null);
  app.addContentTypeParser(
    'multipart/form-data',
    { parseAs: 'buffer', bodyLimit: deps.bodyLimitBytes },
    (_request, body, done) => done(null, body),
  );
  app.setErrorHandler(async (error, request, reply) => {
    setRetryAfter(reply, error);
    if (error instanceof VideoFailure) {
      return reply.code(error.status).send(openAIError(error.message, 'invalid_request_error', error.code));
    }
    const appError = toAppError(error);
    if (appError.status >= 500 && !(error instanceof AppError))
      request.log.error({ err: error }, 'video request failed');
    if (reply.sent || reply.raw.headersSent) return;
    return reply
      .code(appError.status)
      .send(
        openAIError(
          `${appError.localized(requestLanguage(request))} (request id: ${request.id})`,
          'new_api_error',
          appError.code,
        ),
      );
  });
  const caller = (request: FastifyRequest) => authenticateKey(request, deps.keys, options);
  const serverAddress = () => options.get('ServerAddress').replace(/\/+$/, '');
  // Kling's and Jimeng's native routes: the same tasks in their shapes, with their error answers.
  await app.register(klingRoutes, deps);
  await app.register(jimengRoutes, deps);
  const ownTask = async (who: RelayCaller | number, id: string): Promise<TaskRow> => {
    const userId = typeof who === 'number' ? who : who.identity.user.id;
    const [row] = await findUserTasks(db, VIDEO_PLATFORM, userId, [id]);
    if (!row) throw notFound();
    return row;
  };
  /** A key when the request carries one; else the console session, where the plugin was given one. */
  const contentOwner = async (request: FastifyRequest): Promise<number> => {
    if (deps.consoleUserId && !request.headers.authorization && requestCookie(request, SESSION_COOKIE)) {
      return deps.consoleUserId(request);
    }
    return (await caller(request)).identity.user.id;
  };
  /** The task's channel, its video API and the key that submitted it; 503 when the channel is gone. */
  const upstreamOf = (row: TaskRow) => {
    const channel = deps.routing.channel(row.channel_id);
    const tasks = channel && videoTasksOf(channel);
    const ref = videoTaskRef(row);
    if (!channel || !tasks || ref.upstreamId === '') {
      throw new VideoFailure('channel_gone', 'the channel of this video is gone', 503);
    }
    return { channel, tasks, ref, key: videoTaskKey(channel, ref.keyIndex) };
  };

  app.post('/v1/videos', { bodyLimit: deps.bodyLimitBytes }, async (request, reply) => {
    const who = await caller(request);
    const submission = await readSubmission(request);
    return createVideo(deps, who, request, reply, { ...submission, action: 'GENERATE', view: videoObject });
  });

  // new-api's generic video API on the same tasks: `duration` and `width`/`height` name the seconds
  // and size; the answer is the video object with the task id, the fetch the task's state.
  app.post('/v1/video/generations', { bodyLimit: deps.bodyLimitBytes }, async (request, reply) => {
    const who = await caller(request);
    const { fields, form } = await readSubmission(request);
    if (form) throw invalidVideo('send the generic video API a JSON body');
    const generic = { ...fields };
    if (generic.seconds === undefined && generic.duration !== undefined) generic.seconds = String(generic.duration);
    if (generic.size === undefined && generic.width !== undefined && generic.height !== undefined) {
      generic.size = `${generic.width}x${generic.height}`;
    }
    return createVideo(deps, who, request, reply, {
      fields: generic,
      action: 'GENERATE',
      view: (row) => ({ ...videoObject(row), task_id: row.task_id }),
    });
  });

  app.get<{ Params: { id: string } }>('/v1/video/generations/:id', async (request) => {
    const who = await caller(request);
    const row = await ownTask(who, request.params.id);
    return {
      code: 'success',
      message: '',
      data: {
        task_id: row.task_id,
        action: row.action,
        status: row.status,
        fail_reason: row.fail_reason,
        submit_time: Number(row.submit_time),
        start_time: Number(row.start_time),
        finish_time: Number(row.finish_time),
        progress: row.progress,
        // The gateway's own content route, whatever the vendor: only the owner's key downloads it, and a
        // vendor's address (which may need the channel's key, or expire) is never handed out.
        url: row.status === 'SUCCESS' ? `${serverAddress()}/v1/videos/${encodeURIComponent(row.task_id)}/content` : '',
        data: videoObject(row),
      },
    };
  });

  // OpenAI's list: the caller's videos, newest first, paged by `after` (a video id) and `limit`.
  app.get<{ Querystring: { limit?: string; after?: string; order?: string } }>('/v1/videos', async (request) => {
    const who = await caller(request);
    const limit = request.query.limit === undefined ? 20 : Number(request.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalidVideo('limit must be from 1 to 100');
    const order = request.query.order ?? 'desc';
    if (order !== 'asc' && order !== 'desc') throw invalidVideo('order must be asc or desc');
    let afterId: number | undefined;
    if (request.query.after !== undefined) afterId = (await ownTask(who, request.query.after)).id;
    const rows = await listUserTasks(db, VIDEO_PLATFORM, who.identity.user.id, { afterId, order, limit: limit + 1 });
    const page = rows.slice(0, limit).map(videoObject);
    return {
      object: 'list',
      data: page,
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
      has_more: rows.length > limit,
    };
  });

  app.get<{ Params: { id: string } }>('/v1/videos/:id', async (request) => {
    const who = await caller(request);
    return videoObject(await ownTask(who, request.params.id));
  });

  app.get<{ Params: { id: string }; Querystring: { variant?: string } }>(
    '/v1/videos/:id/content',
    async (request, reply) => {
      const row = await ownTask(await contentOwner(request), request.params.id);
      if (row.status !== 'SUCCESS') throw notReady();
      const variant = request.query.variant ?? 'video';
      if (!VARIANTS.includes(variant)) throw invalidVideo('variant must be video, thumbnail or spritesheet');
      const { channel, tasks, ref, key } = upstreamOf(row);
      const signal = AbortSignal.timeout(CONTENT_TIMEOUT_MS);
      let response: UpstreamResponse;
      if (tasks.content) {
        const upstream = await tasks.content(channel, key, ref, variant);
        if (!upstream) {
          throw new VideoFailure('variant_unavailable', `the upstream gave no ${variant} for this video`, 404);
        }
        response = await fetchVideoContent(
          { transport: deps.transport, tasks, channel, key },
          deps.outbound,
          upstream,
          signal,
        );
      } else {
        const url = videoUrl(row);
        if (!url || variant !== 'video') {
          throw new VideoFailure('variant_unavailable', `the upstream gave no ${variant} for this video`, 404);
        }
        // The file's address came in the upstream's answer: fetched only where fetch_setting.* allows.
        response = await deps.outbound.send({ url, method: 'GET', signal, maxRedirects: 3 });
      }
      if (response.status !== 200) {
        await response.body.text();
        throw new VideoFailure('upstream_error', `the upstream answered HTTP ${response.status}`, 502);
      }
      if (tasks.contentBytes) {
        // The vendor answered with a document holding the bytes (Vertex's operation, base64).
        const video = tasks.contentBytes(await response.body.text());
        if (typeof video === 'string') throw new VideoFailure('upstream_error', video, 502);
        return reply.header('content-type', video.type).send(video.bytes);
      }
      const type = response.headers['content-type'];
      reply.header('content-type', typeof type === 'string' ? type : 'application/octet-stream');
      return reply.send(response.body);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/videos/:id/remix',
    { bodyLimit: deps.bodyLimitBytes },
    async (request, reply) => {
      const who = await caller(request);
      const original = await ownTask(who, request.params.id);
      const submission = await readSubmission(request);
      const { fields } = submission;
      if (typeof fields.prompt !== 'string' || fields.prompt.trim() === '') throw invalidVideo('prompt is required');
      await screenVideoPrompt(deps, submission);
      if (original.status !== 'SUCCESS') throw notReady();
      const props = videoProperties(original);
      // A remix happens where the original video is: its channel and key, whatever the routing says today.
      const { channel, tasks, ref, key } = upstreamOf(original);
      if (!tasks.remix) throw new VideoFailure('remix_unsupported', 'this video cannot be remixed');
      if (!props) throw new VideoFailure('channel_gone', 'the original video is unreadable', 503);
      const job = {
        model: props.origin_model_name,
        upstreamModel: props.upstream_model_name,
        prompt: fields.prompt,
        fields: { seconds: props.seconds, size: props.size },
        action: 'REMIX',
      };
      const plan = tasks.plan(job);
      if (typeof plan === 'string') throw new VideoFailure('channel_gone', plan, 503);
      const remixer = inTaskGroup(who, original.group);
      await admitSubmission(deps, remixer, props.origin_model_name);
      return submitVideo(deps, remixer, request, reply, {
        tasks,
        channel,
        keyIndex: ref.keyIndex ?? 0,
        job,
        plan,
        remixedFrom: original.task_id,
        upstream: await tasks.remix(channel, key, ref, fields.prompt),
        view: videoObject,
      });
    },
  );
}
