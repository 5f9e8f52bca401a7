import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { resolvePrice, taskCallQuota } from '../../../domain/billing/index.ts';
import { channelType } from '../../../domain/channels/registry.ts';
import {
  findUserTasks,
  insertTask,
  type TaskBillingContext,
  taskBillingContext,
} from '../../../store/repositories/task-billing.ts';
import type { TaskRow } from '../../../store/repositories/tasks.ts';
import { assertModelAllowed, type RelayCaller } from '../../auth/key-auth.ts';
import type { RelayPluginDeps } from '../../index.ts';
import { PROVIDERS, type UpstreamRequest } from '../../protocols/index.ts';
import {
  isRefusal,
  type VideoJob,
  type VideoPlan,
  type VideoTaskRef,
  type VideoTasks,
} from '../../protocols/video-tasks.ts';
import { resolveModelMapping } from '../../routing/model-mapping.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { chargeTask, reserveTaskQuota } from '../charge.ts';
import { pickTaskKey, taskKey } from '../keys.ts';
import { routeSubmission } from '../route.ts';
import { VIDEO_PLATFORM } from './platform.ts';
import { invalidVideo, type Submission, VideoFailure } from './submission.ts';
import { sendVideoRequest } from './upstream.ts';
import { videoUrl } from './view.ts';

const SUBMIT_TIMEOUT_MS = 60_000;
/** OpenAI's Videos API makes sora-2 when no model is named. */
const DEFAULT_MODEL = 'sora-2';

/** The video API of a channel's protocol; undefined for channels that make no videos. */
export function videoTasksOf(channel: Pick<ChannelSnapshot, 'type'>): VideoTasks | undefined {
  const row = channelType(channel.type);
  return row?.offered && row.protocol ? PROVIDERS[row.protocol].video : undefined;
}

/** The key a video task was submitted with (keys.ts), or the refusal of a channel left without keys. */
export function videoTaskKey(channel: ChannelSnapshot, index: number | undefined): string {
  const key = taskKey(channel, index);
  if (key === undefined) throw new VideoFailure('channel_has_no_key', 'the channel has no key', 503);
  return key;
}

/** What a route asks to be made: the fields as the route read them, and how to answer with the new task. */
export interface VideoOrder extends Submission {
  action: string;
  /** The route makes videos from an image alone, the prompt optional (Kling's image2video). */
  promptOptional?: boolean;
  /** The answer's shape (the Videos API's video object, the generic API's, a vendor route's own). */
  view: (row: TaskRow) => unknown;
}

/** A new video from a route's submission: channel picked, fields checked and priced, then submitted. */
export async function createVideo(
  deps: RelayPluginDeps,
  who: RelayCaller,
  request: FastifyRequest,
  reply: FastifyReply,
  order: VideoOrder,
): Promise<FastifyReply> {
  const { fields } = order;
  const model = typeof fields.model === 'string' && fields.model !== '' ? fields.model : DEFAULT_MODEL;
  await screenVideoPrompt(deps, order);
  const prompt = typeof fields.prompt === 'string' ? fields.prompt : '';
  if (prompt.trim() === '' && !order.promptOptional) throw invalidVideo('prompt is required');
  assertModelAllowed(who, model);
  // A channel whose protocol makes no videos must never get a video request, even if it lists the model.
  return routeSubmission(deps, who, model, {
    accepts: (channel) => videoTasksOf(channel) !== undefined,
    notAccepted: () => new VideoFailure('channel_not_video', 'the pinned channel makes no videos'),
    noChannel: (group) => new VideoFailure('no_available_channel', `no channel serves ${model} in group ${group}`, 503),
    attempt: (caller, channel) => createOn(deps, caller, channel, { request, reply, order, model, prompt }),
  });
}

/** A route's order as read before it is routed: the client's request, its model and prompt. */
interface VideoCall {
  request: FastifyRequest;
  reply: FastifyReply;
  order: VideoOrder;
  model: string;
  prompt: string;
}

/** A new video on one channel: the route's order, read for that channel's protocol and mapping. */
async function createOn(
  deps: RelayPluginDeps,
  who: RelayCaller,
  channel: ChannelSnapshot,
  { request, reply, order, model, prompt }: VideoCall,
): Promise<FastifyReply> {
  const { fields } = order;
  const tasks = videoTasksOf(channel);
  if (!tasks) throw new VideoFailure('channel_not_video', 'the channel makes no videos');
  const mapping = resolveModelMapping(model, channel.modelMapping);
  if (!mapping.ok) throw mapping.error;
  const job: VideoJob = {
    model,
    upstreamModel: mapping.upstreamModel,
    prompt,
    fields,
    ...(order.form ? { form: order.form } : {}),
    action: order.action,
  };
  const plan = tasks.plan(job);
  if (typeof plan === 'string') throw invalidVideo(plan);
  const chosen = pickTaskKey(channel, deps.routing);
  if (!chosen) throw new VideoFailure('channel_has_no_key', 'the channel has no enabled key', 503);
  return submitVideo(deps, who, request, reply, {
    tasks,
    channel,
    keyIndex: chosen.index,
    job,
    plan,
    upstream: await tasks.submit(channel, chosen.key, job, plan),
    view: order.view,
  });
}

/** The sensitive-word check of a video prompt: in the fields, and in the form a multipart upload is sent on. */
export async function screenVideoPrompt(deps: RelayPluginDeps, submission: Submission): Promise<void> {
  await deps.sensitive.screen('video', submission.fields);
  if (submission.form) await deps.sensitive.screen('video', submission.form);
}

export interface VideoSubmit {
  tasks: VideoTasks;
  channel: ChannelSnapshot;
  keyIndex: number;
  job: VideoJob;
  plan: VideoPlan;
  remixedFrom?: string;
  upstream: UpstreamRequest;
  view: (row: TaskRow) => unknown;
}

/** The public id a client retrieves its video by; the upstream's own id stays in the billing context. */
const publicVideoId = () => `video_${randomBytes(16).toString('hex')}`;

/**
 * Sends a priced submission with its price held, and charges it once the upstream took it
 * (per-call price × group ratio × the plan's ratios); a refusal is passed on and costs nothing.
 */
export async function submitVideo(
  deps: RelayPluginDeps,
  who: RelayCaller,
  request: FastifyRequest,
  reply: FastifyReply,
  submit: VideoSubmit,
): Promise<FastifyReply> {
  const started = Date.now();
  const { options, ledger } = deps;
  const { user, token } = who.identity;
  const { channel, job, plan } = submit;
  const action = plan.action ?? job.action;
  const price = resolvePrice({
    model: job.model,
    usingGroup: who.group,
    userGroup: user.group,
    maps: deps.pricing.maps(),
    options,
    acceptUnset: user.acceptUnsetModels,
  });
  const ratio = Object.values(plan.ratios).reduce((product, value) => product * value, 1);
  const quota = taskCallQuota(price, options, ratio);
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
      const upstream = {
        transport: deps.transport,
        tasks: submit.tasks,
        channel,
        key: videoTaskKey(channel, submit.keyIndex),
      };
      const response = await sendVideoRequest(upstream, submit.upstream, AbortSignal.timeout(SUBMIT_TIMEOUT_MS));
      status = response.status;
      text = await response.body.text();
    } catch (error) {
      throw new VideoFailure(
        'do_request_failed',
        `do_request_failed: ${deps.secrets.scrub(error instanceof Error ? error.message : String(error), channel)}`,
        502,
        true,
      );
    }
    const answer = submit.tasks.accepted(status, text);
    // Refused upstream: nothing charged, the refusal passed on in OpenAI's shape.
    if (isRefusal(answer)) {
      throw new VideoFailure(answer.code, deps.secrets.scrub(answer.message, channel), answer.status, true);
    }

    const taskId = publicVideoId();
    const billing: TaskBillingContext = {
      upstream_task_id: answer.id,
      model_name: job.model,
      upstream_model: job.upstreamModel,
      model_price: price.perCallUsd ?? -1,
      group_ratio: price.groupRatio,
      key_index: submit.keyIndex,
      // A task priced by a configured model ratio is settled by the tokens the upstream reports.
      ...(price.perCallUsd === undefined && price.configured ? { model_ratio: price.modelRatio } : {}),
      ...(Object.keys(plan.ratios).length > 0 ? { other_ratios: plan.ratios } : {}),
    };
    const now = Math.floor(Date.now() / 1000);
    const { state } = answer;
    // The task row and its charge in one transaction: if the database refuses, nothing is charged for
    // a video the client could never retrieve.
    await chargeTask(deps, who, request, {
      reservation,
      channel,
      model: job.model,
      quota,
      price,
      startedMs: started,
      taskId,
      action,
      other: {
        ...Object.fromEntries(Object.entries(plan.ratios).map(([name, value]) => [`${name}_ratio`, value])),
        ...(job.model !== job.upstreamModel ? { is_model_mapped: true, upstream_model_name: job.upstreamModel } : {}),
      },
      insertTask: (trx) =>
        insertTask(trx, {
          created_at: now,
          updated_at: now,
          task_id: taskId,
          platform: VIDEO_PLATFORM,
          user_id: user.id,
          token_id: token.id,
          group: who.group,
          channel_id: channel.id,
          quota,
          action,
          status: state.status,
          progress: state.progress,
          submit_time: Math.floor(started / 1000),
          ...(state.url ? { data: JSON.stringify({ url: state.url }) } : {}),
          properties: JSON.stringify({
            input: job.prompt,
            origin_model_name: job.model,
            upstream_model_name: job.upstreamModel,
            seconds: plan.seconds,
            size: plan.size,
            ...(submit.remixedFrom ? { remixed_from: submit.remixedFrom } : {}),
          }),
          private_data: JSON.stringify(billing),
        }),
    });
    settled = true;
    const [row] = await findUserTasks(deps.db, VIDEO_PLATFORM, user.id, [taskId]);
    reply.header('x-new-api-other-ratios', JSON.stringify(plan.ratios));
    return reply.code(200).send(row ? submit.view(row) : { id: taskId, object: 'video' });
  } finally {
    if (!settled) await ledger.refund(reservation);
  }
}

/** How the upstream knows a task, from the row's billing context: its id, model, action, key and video's address. */
export function videoTaskRef(row: TaskRow): VideoTaskRef & { keyIndex: number | undefined } {
  const context = taskBillingContext(row);
  const url = videoUrl(row);
  return {
    upstreamId: context?.upstream_task_id ?? '',
    upstreamModel: context?.upstream_model ?? '',
    action: row.action,
    keyIndex: context?.key_index,
    ...(url ? { url } : {}),
  };
}
