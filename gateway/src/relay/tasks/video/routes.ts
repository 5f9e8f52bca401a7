import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { resolvePrice, taskCallQuota } from '../../../domain/billing/index.ts';
import { channelType } from '../../../domain/channels/registry.ts';
import { AppError } from '../../../errors.ts';
import { requestLanguage, toAppError } from '../../../http/errors.ts';
import { findUserTasks, insertTask, type TaskBillingContext } from '../../../store/repositories/task-billing.ts';
import type { TaskRow } from '../../../store/repositories/tasks.ts';
import { assertModelAllowed, authenticateKey, type RelayCaller } from '../../auth/key-auth.ts';
import type { RelayPluginDeps } from '../../index.ts';
import { openAIError } from '../../openai-error.ts';
import { pinnedChannel } from '../../pipeline.ts';
import type { UpstreamRequest } from '../../protocols/index.ts';
import { resolveModelMapping } from '../../routing/model-mapping.ts';
import { pickChannel } from '../../routing/picker.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { chargeTask, reserveTaskQuota } from '../charge.ts';
import { VIDEO_PLATFORM } from './platform.ts';
import {
  readSoraVideo,
  type SoraParams,
  soraParams,
  soraRatios,
  soraUrl,
  videoObject,
  videoProperties,
} from './sora.ts';

const SUBMIT_TIMEOUT_MS = 60_000;
const DEFAULT_MODEL = 'sora-2';

/** A refusal in OpenAI's error shape, `code` a stable error code. */
class VideoFailure extends Error {
  readonly status: number;
  readonly code: string;
  constructor(code: string, message: string, status = 400) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

const invalid = (message: string) => new VideoFailure('invalid_request', message);
const notFound = () => new VideoFailure('video_not_found', 'no video with this id', 404);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A submission as read from JSON or multipart: its fields, and the form itself when it came as one. */
interface Submission {
  fields: Record<string, unknown>;
  form?: FormData;
}

async function readSubmission(request: FastifyRequest): Promise<Submission> {
  const contentType = String(request.headers['content-type'] ?? '');
  if (contentType.startsWith('multipart/form-data')) {
    if (!Buffer.isBuffer(request.body)) throw invalid('the multipart body could not be read');
    let form: FormData;
    try {
      form = await new Response(new Uint8Array(request.body), { headers: { 'content-type': contentType } }).formData();
    } catch {
      throw invalid('the multipart body could not be read');
    }
    const fields: Record<string, unknown> = {};
    for (const [name, value] of form) if (typeof value === 'string') fields[name] = value;
    return { fields, form };
  }
  if (!isRecord(request.body)) throw invalid('the body must be a JSON object or multipart/form-data');
  return { fields: request.body };
}

/**
 * OpenAI's Videos API (reference §9.2): submissions routed to a Sora channel and charged once the
 * upstream accepted them (per-call price × group ratio × seconds × size ratio), under a public video
 * id the gateway made; retrieval answered from the database and content proxied, the caller's own only.
 */
export async function videoPlugin(app: FastifyInstance, deps: RelayPluginDeps): Promise<void> {
  const { db, options } = deps;
  app.addContentTypeParser(
    'multipart/form-data',
    { parseAs: 'buffer', bodyLimit: deps.bodyLimitBytes },
    (_request, body, done) => done(null, body),
  );
  app.setErrorHandler(async (error, request, reply) => {
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
  const ownTask = async (who: RelayCaller, id: string): Promise<TaskRow> => {
    const [row] = await findUserTasks(db, VIDEO_PLATFORM, who.identity.user.id, [id]);
    if (!row) throw notFound();
    return row;
  };

  const create = async (
    who: RelayCaller,
    request: FastifyRequest,
    reply: FastifyReply,
    submission: Submission,
    view: (row: TaskRow) => unknown,
  ) => {
    const { fields, form } = submission;
    const model = typeof fields.model === 'string' && fields.model !== '' ? fields.model : DEFAULT_MODEL;
    if (typeof fields.prompt !== 'string' || fields.prompt.trim() === '') throw invalid('prompt is required');
    const params = soraParams(fields.seconds, fields.size);
    if (typeof params === 'string') throw invalid(params);
    assertModelAllowed(who, model);
    const channel = channelFor(deps, who, model);
    const key = channelKey(channel);
    const mapping = resolveModelMapping(model, channel.modelMapping);
    if (!mapping.ok) throw mapping.error;
    const upstream = await createRequest(channel, key, mapping.upstreamModel, fields, form);
    return submit(deps, who, request, reply, {
      channel,
      model,
      upstreamModel: mapping.upstreamModel,
      params,
      prompt: fields.prompt,
      action: 'GENERATE',
      upstream,
      view,
    });
  };

  app.post('/v1/videos', { bodyLimit: deps.bodyLimitBytes }, async (request, reply) => {
    const who = await caller(request);
    return create(who, request, reply, await readSubmission(request), videoObject);
  });

  // new-api's generic video task API, mapped onto the same tasks: `duration` and `width`/`height` name
  // the seconds and size; the answer is the video object with the task id, the fetch the task's state.
  app.post('/v1/video/generations', { bodyLimit: deps.bodyLimitBytes }, async (request, reply) => {
    const who = await caller(request);
    const { fields, form } = await readSubmission(request);
    if (form) throw invalid('send the generic video API a JSON body');
    if (fields.image !== undefined || fields.images !== undefined) {
      throw invalid('a Sora channel takes a reference image as input_reference on POST /v1/videos');
    }
    const generic = { ...fields };
    if (generic.seconds === undefined && generic.duration !== undefined) generic.seconds = String(generic.duration);
    if (generic.size === undefined && generic.width !== undefined && generic.height !== undefined) {
      generic.size = `${generic.width}x${generic.height}`;
    }
    // Only the Videos API's own fields reach a Sora upstream.
    const upstreamFields = Object.fromEntries(
      ['model', 'prompt', 'seconds', 'size'].filter((k) => generic[k] !== undefined).map((k) => [k, generic[k]]),
    );
    return create(who, request, reply, { fields: upstreamFields }, (row) => ({
      ...videoObject(row),
      task_id: row.task_id,
    }));
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
        data: videoObject(row),
      },
    };
  });

  app.get<{ Params: { id: string } }>('/v1/videos/:id', async (request) => {
    const who = await caller(request);
    return videoObject(await ownTask(who, request.params.id));
  });

  app.get<{ Params: { id: string }; Querystring: { variant?: string } }>(
    '/v1/videos/:id/content',
    async (request, reply) => {
      const who = await caller(request);
      const row = await ownTask(who, request.params.id);
      if (row.status !== 'SUCCESS') throw new VideoFailure('video_not_ready', 'the video is not completed', 400);
      const variant = request.query.variant ?? 'video';
      if (!['video', 'thumbnail', 'spritesheet'].includes(variant)) {
        throw invalid('variant must be video, thumbnail or spritesheet');
      }
      const channel = deps.routing.channel(row.channel_id);
      const upstreamId = taskUpstreamId(row);
      if (!channel || upstreamId === '') throw new VideoFailure('channel_gone', 'the video channel is gone', 503);
      const response = await deps.transport.send(
        {
          url: soraUrl(channel, `/videos/${encodeURIComponent(upstreamId)}/content?variant=${variant}`),
          method: 'GET',
          headers: { authorization: `Bearer ${channelKey(channel)}` },
        },
        AbortSignal.timeout(SUBMIT_TIMEOUT_MS),
      );
      if (response.status !== 200) {
        await response.body.text();
        throw new VideoFailure('upstream_error', `the upstream answered HTTP ${response.status}`, 502);
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
      const { fields } = await readSubmission(request);
      if (typeof fields.prompt !== 'string' || fields.prompt.trim() === '') throw invalid('prompt is required');
      if (original.status !== 'SUCCESS') throw new VideoFailure('video_not_ready', 'the video is not completed', 400);
      const props = videoProperties(original);
      const params = soraParams(props?.seconds, props?.size);
      // A remix happens where the original video is: its channel, whatever the routing says today.
      const channel = deps.routing.channel(original.channel_id);
      const upstreamId = taskUpstreamId(original);
      if (!channel || !props || typeof params === 'string' || upstreamId === '') {
        throw new VideoFailure('channel_gone', 'the channel of the original video is gone', 503);
      }
      const key = channelKey(channel);
      return submit(deps, who, request, reply, {
        channel,
        model: props.origin_model_name,
        upstreamModel: props.upstream_model_name,
        params,
        prompt: fields.prompt,
        action: 'REMIX',
        remixedFrom: original.task_id,
        upstream: {
          url: soraUrl(channel, `/videos/${encodeURIComponent(upstreamId)}/remix`),
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ prompt: fields.prompt }),
        },
        view: videoObject,
      });
    },
  );
}

const taskUpstreamId = (row: TaskRow) => {
  try {
    return String((JSON.parse(row.private_data) as TaskBillingContext).upstream_task_id ?? '');
  } catch {
    return '';
  }
};

function channelKey(channel: ChannelSnapshot): string {
  const key = channel.keys[0];
  if (key === undefined) throw new VideoFailure('channel_has_no_key', 'the channel has no key', 503);
  return key;
}

/** The upstream submission in the client's own encoding, with the upstream's model name. */
async function createRequest(
  channel: ChannelSnapshot,
  key: string,
  upstreamModel: string,
  fields: Record<string, unknown>,
  form: FormData | undefined,
): Promise<UpstreamRequest> {
  const url = soraUrl(channel, '/videos');
  const auth = { authorization: `Bearer ${key}`, accept: 'application/json' };
  if (form) {
    form.set('model', upstreamModel);
    const encoded = new Response(form);
    return {
      url,
      method: 'POST',
      headers: { ...auth, 'content-type': encoded.headers.get('content-type') ?? 'multipart/form-data' },
      body: Buffer.from(await encoded.arrayBuffer()),
    };
  }
  return {
    url,
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ ...fields, model: upstreamModel }),
  };
}

const speaksVideo = (channel: ChannelSnapshot) => channelType(channel.type)?.protocol === 'video';

function channelFor(deps: RelayPluginDeps, who: RelayCaller, model: string): ChannelSnapshot {
  if (who.pinnedChannelId !== undefined) {
    const pinned = pinnedChannel(deps.routing, who);
    if (!speaksVideo(pinned)) throw new VideoFailure('channel_not_video', 'the pinned channel is not a video channel');
    return pinned;
  }
  const candidates = deps.routing.candidates(who.group, model);
  // A chat channel that lists a video model by mistake must never get a video request.
  const others = new Set(
    candidates.flatMap((tier) => tier.channels.filter((ch) => !speaksVideo(ch)).map((ch) => ch.id)),
  );
  const channel = pickChannel({ candidates, exclude: others });
  if (!channel) {
    throw new VideoFailure('no_available_channel', `no channel serves ${model} in group ${who.group}`, 503);
  }
  return channel;
}

/** The public id a client retrieves its video by; the upstream's own id stays in the billing context. */
const publicVideoId = () => `video_${randomBytes(16).toString('hex')}`;

interface VideoJob {
  channel: ChannelSnapshot;
  model: string;
  upstreamModel: string;
  params: SoraParams;
  prompt: string;
  action: 'GENERATE' | 'REMIX';
  remixedFrom?: string;
  upstream: UpstreamRequest;
  /** The answer's shape (the Videos API's video object, or the generic API's). */
  view: (row: TaskRow) => unknown;
}

async function submit(
  deps: RelayPluginDeps,
  who: RelayCaller,
  request: FastifyRequest,
  reply: FastifyReply,
  job: VideoJob,
): Promise<FastifyReply> {
  const started = Date.now();
  const { options, ledger } = deps;
  const { user, token } = who.identity;
  const { channel, model } = job;
  const price = resolvePrice({
    model,
    usingGroup: who.group,
    userGroup: user.group,
    maps: deps.pricing.maps(),
    options,
    acceptUnset: user.acceptUnsetModels,
  });
  const ratios = soraRatios(job.params);
  const quota = taskCallQuota(price, options, ratios.seconds * ratios.size);
  const reservation = await reserveTaskQuota(
    deps,
    who,
    quota,
    (message) => new VideoFailure('insufficient_user_quota', message, 403),
  );

  let settled = false;
  try {
    let status: number;
    let text: string;
    try {
      const response = await deps.transport.send(job.upstream, AbortSignal.timeout(SUBMIT_TIMEOUT_MS));
      status = response.status;
      text = await response.body.text();
    } catch (error) {
      throw new VideoFailure(
        'do_request_failed',
        `do_request_failed: ${error instanceof Error ? error.message : String(error)}`,
        502,
      );
    }
    let answer: unknown;
    try {
      answer = JSON.parse(text) as unknown;
    } catch {
      answer = undefined;
    }
    const video = status === 200 ? readSoraVideo(answer) : undefined;
    if (!video) {
      // Refused upstream: nothing charged, the refusal passed on in OpenAI's shape.
      const error = isRecord(answer) && isRecord(answer.error) ? answer.error : undefined;
      throw new VideoFailure(
        typeof error?.code === 'string' ? error.code : 'upstream_error',
        typeof error?.message === 'string' && error.message !== ''
          ? error.message
          : `upstream answered HTTP ${status}: ${text.slice(0, 300)}`,
        status >= 400 ? status : 502,
      );
    }

    const taskId = publicVideoId();
    const billing: TaskBillingContext = {
      upstream_task_id: video.id,
      model_name: model,
      upstream_model: job.upstreamModel,
      model_price: price.perCallUsd ?? -1,
      group_ratio: price.groupRatio,
    };
    const now = Math.floor(Date.now() / 1000);
    // The task row first: if the database refuses it, the reservation goes back and nothing is charged
    // for a video the client could never retrieve.
    await insertTask(deps.db, {
      created_at: now,
      updated_at: now,
      task_id: taskId,
      platform: VIDEO_PLATFORM,
      user_id: user.id,
      token_id: token.id,
      group: who.group,
      channel_id: channel.id,
      quota,
      action: job.action,
      status: video.status === 'FAILURE' ? 'SUBMITTED' : video.status,
      progress: video.status === 'FAILURE' ? '0%' : video.progress,
      submit_time: Math.floor(started / 1000),
      properties: JSON.stringify({
        input: job.prompt,
        origin_model_name: model,
        upstream_model_name: job.upstreamModel,
        seconds: job.params.seconds,
        size: job.params.size,
        ...(job.remixedFrom ? { remixed_from: job.remixedFrom } : {}),
      }),
      private_data: JSON.stringify(billing),
    });
    await chargeTask(deps, who, request, {
      reservation,
      channel,
      model,
      quota,
      price,
      startedMs: started,
      taskId,
      action: job.action,
      other: {
        seconds_ratio: ratios.seconds,
        size_ratio: ratios.size,
        ...(job.model !== job.upstreamModel ? { is_model_mapped: true, upstream_model_name: job.upstreamModel } : {}),
      },
    });
    settled = true;
    const [row] = await findUserTasks(deps.db, VIDEO_PLATFORM, user.id, [taskId]);
    reply.header('x-new-api-other-ratios', JSON.stringify(ratios));
    return reply.code(200).send(row ? job.view(row) : { id: taskId, object: 'video' });
  } finally {
    if (!settled) await ledger.refund(reservation);
  }
}
