import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { resolvePrice, taskCallQuota } from '../../../domain/billing/index.ts';
import { channelType } from '../../../domain/channels/registry.ts';
import { AppError } from '../../../errors.ts';
import { requestLanguage, toAppError } from '../../../http/errors.ts';
import {
  findMidjourneyByMjId,
  findUserMidjourney,
  findUserMidjourneys,
  insertMidjourney,
} from '../../../store/repositories/task-billing.ts';
import { assertModelAllowed, authenticateKey, type RelayCaller } from '../../auth/key-auth.ts';
import type { RelayPluginDeps } from '../../index.ts';
import { midjourneyRequest } from '../../protocols/midjourney/index.ts';
import { setRetryAfter } from '../../retry-after.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { chargeTask, reserveTaskQuota } from '../charge.ts';
import { type ChosenKey, pickTaskKey, taskKey } from '../keys.ts';
import { admitSubmission, inTaskGroup, routeSubmission } from '../route.ts';
import { describeSubmission, MjRequestError, type MjSubmission, SUBMIT_PATHS, upstreamBody } from './actions.ts';
import { mjTaskView } from './view.ts';

/** midjourney-proxy's submit result codes that mean the task was taken (and is billed). */
const ACCEPTED = new Set([1, 21, 22]);
/** midjourney-proxy's code for a refusal before any upstream: the client reads `description`. */
const MJ_FAILURE = 4;
/** The mode prefixes midjourney-proxy-plus serves the same routes under. */
const PREFIXES = ['', '/mj-fast', '/mj-relax', '/mj-turbo'];
const SUBMIT_TIMEOUT_MS = 60_000;

/**
 * A refusal in midjourney-proxy's error shape (as new-api answers it): HTTP 400, 429 for code 30.
 * `upstream` when the upstream failed to answer, so that another channel may take the submission.
 */
class MjFailure extends Error {
  readonly status: number;
  readonly code: number;
  readonly upstream: boolean;
  constructor(description: string, code = MJ_FAILURE, status = 400, upstream = false) {
    super(description);
    this.code = code;
    this.status = code === 30 ? 429 : status;
    this.upstream = upstream;
  }
}

/** The upstream's refusal of a submission with an HTTP error: passed on as it came, unless another channel takes it. */
class MjRefused extends Error {
  readonly status: number;
  readonly answer: Record<string, unknown>;
  readonly upstream = true;
  constructor(status: number, answer: Record<string, unknown>) {
    super(`the upstream refused the submission with HTTP ${status}`);
    this.status = status;
    this.answer = answer;
  }
}

/** A callback URL worth keeping: http(s) only. */
function webHook(value: unknown): string {
  if (typeof value !== 'string') return '';
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : '';
  } catch {
    return '';
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The midjourney-proxy routes (reference §9.1, route table): submissions routed to a type 2/5 channel
 * (follow-ups to the channel of their original task), charged per call once the upstream accepted them,
 * and the task queries, answered from the database for the caller's own tasks only.
 */
export async function midjourneyPlugin(app: FastifyInstance, deps: RelayPluginDeps): Promise<void> {
  const { db, options } = deps;
  app.setErrorHandler(async (error, request, reply) => {
    setRetryAfter(reply, error);
    if (error instanceof MjRefused) return reply.code(error.status).send(error.answer);
    if (error instanceof MjFailure) {
      return reply.code(error.status).send({ code: error.code, description: error.message, type: 'upstream_error' });
    }
    if (error instanceof MjRequestError) {
      return reply.code(400).send({ code: MJ_FAILURE, description: error.description, type: 'upstream_error' });
    }
    const appError = toAppError(error);
    if (appError.status >= 500 && !(error instanceof AppError))
      request.log.error({ err: error }, 'midjourney request failed');
    return reply.code(appError.status).send({
      code: MJ_FAILURE,
      description: `${appError.localized(requestLanguage(request))} (request id: ${request.id})`,
      type: 'new_api_error',
    });
  });
  const caller = (request: FastifyRequest) => authenticateKey(request, deps.keys, options);
  const forwardBase = () =>
    options.getBoolean('MjForwardUrlEnabled') ? options.get('ServerAddress').replace(/\/+$/, '') : undefined;

  for (const prefix of PREFIXES) {
    for (const path of SUBMIT_PATHS) {
      app.post(`${prefix}/mj/${path}`, { bodyLimit: deps.bodyLimitBytes }, async (request, reply) =>
        submit(deps, await caller(request), path, request, reply),
      );
    }

    app.get<{ Params: { id: string } }>(`${prefix}/mj/task/:id/fetch`, async (request) => {
      const who = await caller(request);
      const row = await findUserMidjourney(db, who.identity.user.id, request.params.id);
      if (!row) throw new MjFailure('task_no_found');
      return mjTaskView(row, forwardBase());
    });

    app.post(`${prefix}/mj/task/list-by-condition`, async (request) => {
      const who = await caller(request);
      const ids = isRecord(request.body) ? request.body.ids : undefined;
      if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) throw new MjFailure('ids_is_required');
      const rows = await findUserMidjourneys(db, who.identity.user.id, ids as string[]);
      return rows.map((row) => mjTaskView(row, forwardBase()));
    });

    // The seed lives upstream only: asked of the channel and key (the account) that ran the task.
    app.get<{ Params: { id: string } }>(`${prefix}/mj/task/:id/image-seed`, async (request, reply) => {
      const who = await caller(request);
      const row = await findUserMidjourney(db, who.identity.user.id, request.params.id);
      if (!row) throw new MjFailure('task_no_found');
      const channel = deps.routing.channel(row.channel_id);
      const key = channel && taskKey(channel, row.key_index);
      if (!channel || key === undefined) throw new MjFailure('channel_not_found');
      const upstream = midjourneyRequest(channel, key, `/mj/task/${encodeURIComponent(row.mj_id)}/image-seed`);
      const response = await deps.transport.send(upstream, AbortSignal.timeout(SUBMIT_TIMEOUT_MS));
      const text = await response.body.text();
      return reply.code(response.status).header('content-type', 'application/json').send(text);
    });

    // Public, as in new-api: the id is the upstream's unguessable task id.
    app.get<{ Params: { id: string } }>(`${prefix}/mj/image/:id`, async (request, reply) => {
      const row = await findMidjourneyByMjId(db, request.params.id);
      if (!row?.image_url) throw new MjFailure('image_not_found', MJ_FAILURE, 404);
      // The URL is the upstream's answer: fetched only where fetch_setting.* allows, redirects checked too.
      const response = await deps.outbound.send({
        url: row.image_url,
        method: 'GET',
        signal: AbortSignal.timeout(SUBMIT_TIMEOUT_MS),
        maxRedirects: 3,
      });
      if (response.status !== 200) {
        await response.body.text().catch(() => '');
        throw new MjFailure(`image upstream answered ${response.status}`, MJ_FAILURE, 502);
      }
      reply.code(200).header('content-type', String(response.headers['content-type'] ?? 'image/png'));
      return reply.send(response.body);
    });
  }
}

/** Where a follow-up goes: its original task's channel and key (only that account knows the original), and its group. */
async function followUpTarget(
  deps: RelayPluginDeps,
  who: RelayCaller,
  originalTaskId: string,
): Promise<{ channel: ChannelSnapshot; key: ChosenKey; group: string }> {
  const original = await findUserMidjourney(deps.db, who.identity.user.id, originalTaskId);
  if (!original) throw new MjFailure('task_not_found');
  if (deps.options.getBoolean('MjActionCheckSuccessEnabled') && original.status !== 'SUCCESS') {
    throw new MjFailure('task_status_not_success');
  }
  const channel = deps.routing.channel(original.channel_id);
  if (channel?.status !== 1) throw new MjFailure('channel_not_available');
  const key = taskKey(channel, original.key_index);
  if (key === undefined) throw new MjFailure('channel_has_no_key');
  return { channel, key: { index: original.key_index ?? 0, key }, group: original.group };
}

const speaksMidjourney = (channel: ChannelSnapshot) => channelType(channel.type)?.protocol === 'midjourney';

async function submit(
  deps: RelayPluginDeps,
  who: RelayCaller,
  path: string,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const started = Date.now();
  if (!isRecord(request.body)) throw new MjFailure('the body must be a JSON object');
  const body = request.body;
  const submission = describeSubmission(path, body);
  assertModelAllowed(who, submission.model);
  await deps.sensitive.screen('midjourney', body);
  const send = (caller: RelayCaller, channel: ChannelSnapshot, key: ChosenKey) =>
    sendSubmission(deps, { who: caller, channel, key, body, submission, started }, request, reply);
  if (submission.originalTaskId !== undefined) {
    const target = await followUpTarget(deps, who, submission.originalTaskId);
    const caller = inTaskGroup(who, target.group);
    await admitSubmission(deps, caller, submission.model);
    return send(caller, target.channel, target.key);
  }
  // A chat channel that lists an mj_ model by mistake must never get a drawing request.
  return routeSubmission(deps, who, submission.model, {
    accepts: speaksMidjourney,
    notAccepted: () => new MjFailure('channel_not_midjourney'),
    noChannel: (group) => new MjFailure(`no channel serves ${submission.model} in group ${group}`),
    attempt: (caller, channel) => {
      const key = pickTaskKey(channel, deps.routing);
      if (!key) throw new MjFailure('channel_has_no_key');
      return send(caller, channel, key);
    },
  });
}

/** A submission on its way to one channel, priced and billed in the group of `who`. */
interface MjSend {
  who: RelayCaller;
  channel: ChannelSnapshot;
  key: ChosenKey;
  body: Record<string, unknown>;
  submission: MjSubmission;
  started: number;
}

/** Sends a submission with its price held; charged when the upstream took it, refused (and released) otherwise. */
async function sendSubmission(
  deps: RelayPluginDeps,
  { who, channel, key, body, submission, started }: MjSend,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { options, ledger } = deps;
  const { user, token } = who.identity;
  const price = resolvePrice({
    model: submission.model,
    usingGroup: who.group,
    userGroup: user.group,
    maps: deps.pricing.maps(),
    options,
    acceptUnset: user.acceptUnsetModels,
  });
  const quota = taskCallQuota(price, options);
  const reservation = await reserveTaskQuota(deps, who, quota, () => new MjFailure('quota_not_enough'));

  let settled = false;
  try {
    const upstreamPath = (request.url.split('?')[0] ?? '').replace(/\/+$/, '');
    const upstream = midjourneyRequest(
      channel,
      key.key,
      upstreamPath,
      upstreamBody(body, {
        keepAccountFilter: options.getBoolean('MjAccountFilterEnabled'),
        clearMode: options.getBoolean('MjModeClearEnabled'),
      }),
    );
    let status: number;
    let text: string;
    try {
      const response = await deps.transport.send(upstream, AbortSignal.timeout(SUBMIT_TIMEOUT_MS));
      status = response.status;
      text = await response.body.text();
    } catch (error) {
      throw new MjFailure(
        `do_request_failed: ${deps.secrets.scrub(error instanceof Error ? error.message : String(error), channel)}`,
        MJ_FAILURE,
        502,
        true,
      );
    }
    let answer: Record<string, unknown>;
    try {
      const parsed = JSON.parse(text) as unknown;
      if (!isRecord(parsed)) throw new Error('not an object');
      // What the client and the task list read of the upstream's answer: never the channel's secrets.
      answer = deps.secrets.scrubDeep(parsed, channel);
    } catch {
      throw new MjFailure(
        `unmarshal_response_body_failed (HTTP ${status})`,
        MJ_FAILURE,
        status === 200 ? 502 : status,
        true,
      );
    }
    const code = typeof answer.code === 'number' ? answer.code : 0;
    const taskId = typeof answer.result === 'string' ? answer.result : '';
    const description = typeof answer.description === 'string' ? answer.description : '';
    // An upload answers the uploaded image URLs: done at once, nothing to poll.
    const uploaded = Array.isArray(answer.result);
    const accepted = status === 200 && ACCEPTED.has(code) && (taskId !== '' || uploaded);
    const row = {
      code,
      user_id: user.id,
      token_id: token.id,
      group: who.group,
      model_name: submission.model,
      action: submission.action,
      mj_id: taskId,
      prompt: typeof body.prompt === 'string' ? body.prompt : '',
      description,
      submit_time: started,
      channel_id: channel.id,
      key_index: key.index,
      properties: isRecord(answer.properties) ? JSON.stringify(answer.properties) : '',
      notify_hook: options.getBoolean('MjNotifyEnabled') ? webHook(body.notifyHook) : '',
    };
    if (!accepted) {
      // Refused upstream (queue full 23, banned prompt 24, …): nothing charged, the refusal kept on record.
      await ledger.refund(reservation);
      settled = true;
      if (taskId || status === 200) {
        await insertMidjourney(deps.db, { ...row, status: 'FAILURE', fail_reason: description, quota: 0 });
      }
      // An HTTP error may be another channel's to take; a refusal in a 200 (queue full, banned prompt) is final.
      if (status !== 200) throw new MjRefused(status, answer);
      return reply.code(status).send(answer);
    }

    // The task row and its charge in one transaction: if the database refuses, nothing is charged for
    // a task the client could never fetch (and the books hold no charge without its log).
    await chargeTask(deps, who, request, {
      reservation,
      channel,
      model: submission.model,
      quota,
      price,
      startedMs: started,
      taskId,
      action: submission.action,
      insertTask: (trx) =>
        insertMidjourney(
          trx,
          uploaded
            ? { ...row, status: 'SUCCESS', progress: '100%', finish_time: Date.now(), quota }
            : { ...row, status: 'SUBMITTED', progress: '0%', quota },
        ),
    });
    settled = true;
    // 21 (exists) and 22 (queued) are as good as submitted to clients (new-api rewrites them).
    return reply.code(200).send({ ...answer, code: 1 });
  } finally {
    if (!settled) await ledger.refund(reservation);
  }
}
