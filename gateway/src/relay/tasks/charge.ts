import type { FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import type { Reservation } from '../../domain/ledger/ledger.ts';
import { writeUsageBatch } from '../../domain/usage/writer.ts';
import { AppError } from '../../errors.ts';
import type { Database } from '../../store/database.ts';
import type { RelayCaller } from '../auth/key-auth.ts';
import { clientType } from '../client-type.ts';
import type { RelayPluginDeps } from '../index.ts';
import type { ChannelSnapshot, ModelPrice } from '../types.ts';
import { noteTaskCharged } from './metrics.ts';

type ChargeDeps = Pick<RelayPluginDeps, 'ledger' | 'recorder' | 'alerts' | 'metrics'>;

/**
 * Holds a task's price on the caller's wallet and token (the playground has no token) until the
 * upstream accepts the task. `short` makes the platform's own refusal when they cannot cover it.
 */
export async function reserveTaskQuota(
  deps: ChargeDeps,
  who: RelayCaller,
  amount: number,
  short: (message: string) => Error,
): Promise<Reservation> {
  const { user, token } = who.identity;
  try {
    return await deps.ledger.reserve({
      userId: user.id,
      tokenId: token.id > 0 ? token.id : undefined,
      tokenUnlimited: token.unlimited,
      amount,
      periodLimits: { user: user.periodLimits, token: token.periodLimits },
    });
  } catch (error) {
    if (error instanceof AppError && error.status === 403) throw short(error.message);
    throw error;
  }
}

export interface TaskCharge {
  reservation: Reservation;
  channel: ChannelSnapshot;
  /** The model the client asked for (the consume log's model). */
  model: string;
  quota: number;
  price: ModelPrice;
  startedMs: number;
  /** The task id the client knows, carried by the log so its refund can be matched to it. */
  taskId: string;
  action: string;
  /** Platform fields of the log's `other` (ratios, the upstream model of a mapping). */
  other?: Record<string, unknown>;
  /** Inserts the task row (tasks or midjourneys, with its `quota`) in the charge's transaction. */
  insertTask: (trx: Transaction<Database>) => Promise<unknown>;
}

/**
 * Records a task the upstream accepted and charges it, all in one transaction: the task row, the
 * consume log carrying the task id, the dashboard bucket, the used quota of user, token and channel,
 * and the charge itself out of the reservation's lease (ledger.settleWithin). A task row therefore
 * never exists without its charge on the books, even if the pod dies right after: a refund of the
 * task (it fails or times out) gives back exactly what this committed. If the database refuses,
 * nothing is charged and no task exists for the client to fetch.
 */
export async function chargeTask(
  deps: ChargeDeps,
  who: RelayCaller,
  request: FastifyRequest,
  charge: TaskCharge,
): Promise<void> {
  const { user, token } = who.identity;
  const usage = deps.recorder.batchOf({
    userId: user.id,
    username: user.username,
    tokenId: token.id,
    tokenName: token.name,
    channelId: charge.channel.id,
    channelName: charge.channel.name,
    modelName: charge.model,
    group: who.group,
    useTimeSeconds: Math.round((Date.now() - charge.startedMs) / 1000),
    isStream: false,
    ip: '',
    requestId: request.id,
    content: '',
    quota: charge.quota,
    promptTokens: 0,
    completionTokens: 0,
    clientType: clientType(request.headers['user-agent']),
    other: {
      task_id: charge.taskId,
      action: charge.action,
      model_price: charge.price.perCallUsd ?? -1,
      model_ratio: charge.price.modelRatio,
      group_ratio: charge.price.groupRatio,
      per_call: true,
      request_path: request.url.split('?')[0] ?? '',
      // As the relay logs it: the auto group the task was routed and billed in.
      ...(who.autoGroups ? { auto_group: who.group } : {}),
      ...charge.other,
    },
  });
  await deps.ledger.settleWithin(charge.reservation, charge.quota, async (trx, chargeBalances) => {
    await charge.insertTask(trx);
    await writeUsageBatch(trx, usage, chargeBalances);
  });
  noteTaskCharged(deps.metrics, request, {
    model: charge.model,
    group: who.group,
    channelId: charge.channel.id,
    quota: charge.quota,
  });
  deps.alerts.charged(user, charge.quota, deps.ledger.balance(user.id));
}
