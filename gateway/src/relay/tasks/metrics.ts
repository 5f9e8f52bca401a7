import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.ts';
import type { RelayErrorType, RelayMetrics } from '../metrics.ts';
import {
  errorTypeOf,
  errorTypeOfStatus,
  isTimeout,
  noteRelay,
  noteRelayFailure,
  trackRelayOutcome,
} from '../outcome.ts';
import type { WireFormat } from '../types.ts';

const QUOTA_CODES = new Set(['insufficient_user_quota', 'pre_consume_token_quota_failed', 'quota_not_enough']);
const NO_CHANNEL_CODES = new Set(['no_available_channel', 'channel_not_available', 'channel_gone']);
const UPSTREAM_CODES = new Set(['do_request_failed', 'upstream_error']);

/**
 * The error type of a task route's refusal: the platforms answer in their own shapes (a numeric
 * midjourney-proxy code, a Suno or OpenAI string code) with an HTTP status beside it.
 */
export function taskErrorType(error: unknown): RelayErrorType {
  if (error instanceof AppError || isTimeout(error)) return errorTypeOf(error);
  const { code, status } = (error ?? {}) as { code?: unknown; status?: unknown };
  if (typeof code === 'string' && QUOTA_CODES.has(code)) return 'quota';
  if (typeof code === 'string' && NO_CHANNEL_CODES.has(code)) return 'no_channel';
  if (typeof code === 'string' && UPSTREAM_CODES.has(code)) return 'upstream';
  return typeof status === 'number' ? errorTypeOfStatus(status) : errorTypeOf(error);
}

/**
 * Counts every request of a task platform's routes in the relay metrics like any relay request
 * (tollgate_relay_requests_total, the duration histogram, in-flight), with the platform as its
 * format; the charge names its model, group and channel (relay/tasks/charge.ts).
 */
export function trackTaskRequests(app: FastifyInstance, metrics: RelayMetrics, format: WireFormat): void {
  app.addHook('onRequest', async (request, reply) => trackRelayOutcome(request, reply, metrics, format));
  app.addHook('onError', async (request, reply, error) => noteRelayFailure(request, reply, taskErrorType(error)));
}

/** A task charged: its model, group and channel label the request's count, its quota the billed metrics. */
export function noteTaskCharged(
  metrics: RelayMetrics,
  request: FastifyRequest,
  facts: { model: string; group: string; channelId: number; quota: number },
): void {
  noteRelay(request, { model: facts.model, group: facts.group, channel: String(facts.channelId) });
  metrics.billed({
    model: facts.model,
    group: facts.group,
    firstTokenMs: undefined,
    usage: { promptTokens: 0, completionTokens: 0 },
    quota: facts.quota,
  });
}
