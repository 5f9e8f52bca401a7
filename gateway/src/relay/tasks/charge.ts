import type { FastifyRequest } from 'fastify';
import type { Reservation } from '../../domain/ledger/ledger.ts';
import { AppError } from '../../errors.ts';
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
}

/**
 * Charges a task the upstream accepted: settles its reservation at the per-call quota and writes the
 * consume log carrying the task id (its refund, if the task fails, names the same id).
 */
export async function chargeTask(
  deps: ChargeDeps,
  who: RelayCaller,
  request: FastifyRequest,
  charge: TaskCharge,
): Promise<void> {
  const { user, token } = who.identity;
  await deps.ledger.settle(charge.reservation, charge.quota);
  deps.recorder.recordConsume({
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
      ...charge.other,
    },
  });
  noteTaskCharged(deps.metrics, request, {
    model: charge.model,
    group: who.group,
    channelId: charge.channel.id,
    quota: charge.quota,
  });
  deps.alerts.charged(user, charge.quota, deps.ledger.balance(user.id));
}
