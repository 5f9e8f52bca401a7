import type { FastifyRequest } from 'fastify';
import type { SlidingWindowCounters } from '../cluster/index.ts';
import type { RateLimit } from '../config.ts';
import { ACCOUNT_ERRORS } from '../domain/accounts/errors.ts';
import { AppError } from '../errors.ts';

/**
 * A per-client-IP limit over a sliding window, counted in the cluster counters so that the limit
 * holds across every gateway pod, not per pod.
 */
export function ipRateLimit(counters: SlidingWindowCounters, name: string, limit: RateLimit) {
  return async (request: FastifyRequest): Promise<void> => {
    if (!limit.enabled) return;
    const { allowed } = await counters.take(`ratelimit:${name}:${request.ip}`, limit.windowMs, limit.count);
    if (!allowed) throw new AppError(ACCOUNT_ERRORS.RATE_LIMITED);
  };
}
