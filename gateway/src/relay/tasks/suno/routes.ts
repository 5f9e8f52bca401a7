import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { resolvePrice, taskCallQuota } from '../../../domain/billing/index.ts';
import { channelType } from '../../../domain/channels/registry.ts';
import { AppError } from '../../../errors.ts';
import { requestLanguage, toAppError } from '../../../http/errors.ts';
import { findUserTasks, insertTask, type TaskBillingContext } from '../../../store/repositories/task-billing.ts';
import { assertModelAllowed, authenticateKey, type RelayCaller } from '../../auth/key-auth.ts';
import type { RelayPluginDeps } from '../../index.ts';
import { sunoRequest } from '../../protocols/suno/index.ts';
import { setRetryAfter } from '../../retry-after.ts';
import { resolveModelMapping } from '../../routing/model-mapping.ts';
import type { ChannelSnapshot } from '../../types.ts';
import { chargeTask, reserveTaskQuota } from '../charge.ts';
import { pickTaskKey } from '../keys.ts';
import { routeSubmission } from '../route.ts';
import { SUNO_PLATFORM } from './platform.ts';
import { isSunoAction, SUNO_ACTIONS, type SunoAction, sunoTaskView } from './wire.ts';

const SUBMIT_TIMEOUT_MS = 60_000;
/** Ids one batch fetch may ask for. */
const MAX_FETCH_IDS = 500;

/**
 * A refusal in the Suno proxy's shape `{code, message, data}`, `code` a stable error code;
 * `upstream` when the upstream refused or did not answer, so that another channel may take the submission.
 */
class SunoFailure extends Error {
  readonly status: number;
  readonly code: string;
  readonly upstream: boolean;
  constructor(code: string, message: string, status = 400, upstream = false) {
    super(message);
    this.code = code;
    this.status = status;
    this.upstream = upstream;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const success = (data: unknown) => ({ code: 'success', message: '', data });

/**
 * The Suno proxy routes (reference §9.2, route table): submissions routed to a type-36 channel and
 * charged per call once the upstream accepted them, under a public task id the gateway made; fetches
 * answered from the database, the caller's own tasks only.
 */
export async function sunoPlugin(app: FastifyInstance, deps: RelayPluginDeps): Promise<void> {
  const { db, options } = deps;
  app.setErrorHandler(async (error, request, reply) => {
    setRetryAfter(reply, error);
    if (error instanceof SunoFailure) {
      return reply.code(error.status).send({ code: error.code, message: error.message, data: null });
    }
    const appError = toAppError(error);
    if (appError.status >= 500 && !(error instanceof AppError))
      request.log.error({ err: error }, 'suno request failed');
    return reply.code(appError.status).send({
      code: appError.code,
      message: `${appError.localized(requestLanguage(request))} (request id: ${request.id})`,
      data: null,
    });
  });
  const caller = (request: FastifyRequest) => authenticateKey(request, deps.keys, options);

  app.post<{ Params: { action: string } }>(
    '/suno/submit/:action',
    { bodyLimit: deps.bodyLimitBytes },
    async (request, reply) => {
      const who = await caller(request);
      const action = request.params.action.toLowerCase();
      if (!isSunoAction(action)) {
        throw new SunoFailure('invalid_action', `action must be one of ${SUNO_ACTIONS.join(', ')}`);
      }
      return submit(deps, who, action, request, reply);
    },
  );

  app.post('/suno/fetch', async (request) => {
    const who = await caller(request);
    const ids = isRecord(request.body) ? request.body.ids : undefined;
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
      throw new SunoFailure('invalid_request', 'ids must be a list of task ids');
    }
    if (ids.length > MAX_FETCH_IDS) throw new SunoFailure('invalid_request', `at most ${MAX_FETCH_IDS} ids at once`);
    const rows = await findUserTasks(db, SUNO_PLATFORM, who.identity.user.id, ids as string[]);
    return success(rows.map(sunoTaskView));
  });

  app.get<{ Params: { id: string } }>('/suno/fetch/:id', async (request) => {
    const who = await caller(request);
    const [row] = await findUserTasks(db, SUNO_PLATFORM, who.identity.user.id, [request.params.id]);
    if (!row) throw new SunoFailure('task_not_exist', 'task_not_exist', 404);
    return success(sunoTaskView(row));
  });
}

const speaksSuno = (channel: ChannelSnapshot) => channelType(channel.type)?.protocol === 'suno';

/** The public id a client fetches its task by; the upstream's own id stays in the billing context. */
const publicTaskId = () => `task_${randomBytes(16).toString('base64url')}`;

async function submit(
  deps: RelayPluginDeps,
  who: RelayCaller,
  action: SunoAction,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const started = Date.now();
  if (!isRecord(request.body)) throw new SunoFailure('invalid_request', 'the body must be a JSON object');
  const body = request.body;
  const model = typeof body.model === 'string' && body.model !== '' ? body.model : `suno_${action}`;
  assertModelAllowed(who, model);
  await deps.sensitive.screen('suno', body);
  // A chat channel that lists a suno_ model by mistake must never get a music request.
  return routeSubmission(deps, who, model, {
    accepts: speaksSuno,
    notAccepted: () => new SunoFailure('channel_not_suno', 'the pinned channel is not a Suno channel'),
    noChannel: (group) => new SunoFailure('no_available_channel', `no channel serves ${model} in group ${group}`, 503),
    attempt: (caller, channel) =>
      sendSubmission(deps, { who: caller, channel, action, model, body, started }, request, reply),
  });
}

/** A submission on its way to one channel, priced and billed in the group of `who`. */
interface SunoSend {
  who: RelayCaller;
  channel: ChannelSnapshot;
  action: SunoAction;
  model: string;
  body: Record<string, unknown>;
  started: number;
}

/** Sends a submission with its price held; charged when the upstream took it, refused (and released) otherwise. */
async function sendSubmission(
  deps: RelayPluginDeps,
  { who, channel, action, model, body, started }: SunoSend,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { options, ledger } = deps;
  const { user, token } = who.identity;
  const chosen = pickTaskKey(channel, deps.routing);
  if (!chosen) throw new SunoFailure('channel_has_no_key', 'the channel has no enabled key', 503);
  const mapping = resolveModelMapping(model, channel.modelMapping);
  if (!mapping.ok) throw mapping.error;

  const price = resolvePrice({
    model,
    usingGroup: who.group,
    userGroup: user.group,
    maps: deps.pricing.maps(),
    options,
    acceptUnset: user.acceptUnsetModels,
  });
  const quota = taskCallQuota(price, options);
  const reservation = await reserveTaskQuota(
    deps,
    who,
    quota,
    (message) => new SunoFailure('quota_not_enough', message, 403),
  );

  let settled = false;
  try {
    // The client's model name is the gateway's; a mapped one becomes the upstream's model version (mv).
    // A notify_hook would be called with the upstream's ids, which the client never sees: not forwarded.
    const { model: _model, notify_hook: _hook, ...upstreamBody } = body;
    if (mapping.mapped) upstreamBody.mv = mapping.upstreamModel;
    const upstream = sunoRequest(channel, chosen.key, `/suno/submit/${action}`, upstreamBody);
    let status: number;
    let text: string;
    try {
      const response = await deps.transport.send(upstream, AbortSignal.timeout(SUBMIT_TIMEOUT_MS));
      status = response.status;
      text = await response.body.text();
    } catch (error) {
      throw new SunoFailure(
        'do_request_failed',
        `do_request_failed: ${deps.secrets.scrub(error instanceof Error ? error.message : String(error), channel)}`,
        502,
        true,
      );
    }
    let answer: Record<string, unknown> | undefined;
    try {
      const parsed = JSON.parse(text) as unknown;
      answer = isRecord(parsed) ? parsed : undefined;
    } catch {
      answer = undefined;
    }
    const upstreamId = typeof answer?.data === 'string' ? answer.data : '';
    if (status !== 200 || answer?.code !== 'success' || upstreamId === '') {
      // Refused upstream: nothing charged, the refusal passed on in the proxy's shape.
      const message =
        typeof answer?.message === 'string' && answer.message !== '' ? answer.message : text.slice(0, 500);
      throw new SunoFailure(
        typeof answer?.code === 'string' && answer.code !== 'success' ? answer.code : 'upstream_error',
        deps.secrets.scrub(message, channel) || `upstream answered HTTP ${status}`,
        status >= 400 ? status : 502,
        true,
      );
    }

    const taskId = publicTaskId();
    const billing: TaskBillingContext = {
      upstream_task_id: upstreamId,
      model_name: model,
      upstream_model: mapping.upstreamModel,
      model_price: price.perCallUsd ?? -1,
      group_ratio: price.groupRatio,
      // Its polls must reach the account that took it.
      key_index: chosen.index,
    };
    const now = Math.floor(Date.now() / 1000);
    // The task row and its charge in one transaction: if the database refuses, nothing is charged for
    // a task the client could never fetch.
    await chargeTask(deps, who, request, {
      reservation,
      channel,
      model,
      quota,
      price,
      startedMs: started,
      taskId,
      action: action.toUpperCase(),
      other: mapping.mapped ? { is_model_mapped: true, upstream_model_name: mapping.upstreamModel } : {},
      insertTask: (trx) =>
        insertTask(trx, {
          created_at: now,
          updated_at: now,
          task_id: taskId,
          platform: SUNO_PLATFORM,
          user_id: user.id,
          token_id: token.id,
          group: who.group,
          channel_id: channel.id,
          quota,
          action: action.toUpperCase(),
          status: 'SUBMITTED',
          progress: '0%',
          submit_time: Math.floor(started / 1000),
          // What the task log page shows of the request (new-api's task properties).
          properties: JSON.stringify({
            input: typeof body.prompt === 'string' ? body.prompt : '',
            origin_model_name: model,
            upstream_model_name: mapping.upstreamModel,
          }),
          private_data: JSON.stringify(billing),
        }),
    });
    settled = true;
    return reply.code(200).send(success(taskId));
  } finally {
    if (!settled) await ledger.refund(reservation);
  }
}
