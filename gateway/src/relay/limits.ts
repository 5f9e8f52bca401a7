import type { SlidingWindowCounters } from '../cluster/index.ts';
import type { OptionsService } from '../domain/options/index.ts';
import { AppError } from '../errors.ts';
import { RELAY_ERRORS } from './errors.ts';

interface Limit {
  total: number;
  success: number;
  windowMs: number;
  minutes: number;
}

/**
 * The per-user model request limit (spec doc 2 §3 "Rate limit", reference §8.1): a cap on all requests
 * (failures included) and one on successful requests per window, counted in the cluster counters so
 * that it holds across every pod. A group may override both ([total, success]).
 */
export class ModelRequestLimit {
  readonly #counters: SlidingWindowCounters;
  readonly #options: OptionsService;

  constructor(counters: SlidingWindowCounters, options: OptionsService) {
    this.#counters = counters;
    this.#options = options;
  }

  /**
   * Counts the request against the total cap and refuses it when either cap is reached: with both caps
   * on, one atomic step (one round trip to Redis) checks the successes and takes from the total.
   */
  async admit(userId: number, group: string): Promise<void> {
    const limit = this.#limit(group);
    if (!limit) return;
    if (limit.success > 0 && limit.total > 0) {
      const { refusedBy } = await this.#counters.takeGated(totalKey(userId), limit.windowMs, limit.total, {
        key: successKey(userId),
        limit: limit.success,
      });
      if (refusedBy) throw refused(refusedBy === 'gate' ? limit.success : limit.total, limit.minutes);
      return;
    }
    if (limit.success > 0) {
      const successes = await this.#counters.count(successKey(userId), limit.windowMs);
      if (successes >= limit.success) throw refused(limit.success, limit.minutes);
    }
    if (limit.total > 0) {
      const { allowed } = await this.#counters.take(totalKey(userId), limit.windowMs, limit.total);
      if (!allowed) throw refused(limit.total, limit.minutes);
    }
  }

  /** Records a successful request (HTTP status below 400). */
  async succeeded(userId: number, group: string): Promise<void> {
    const limit = this.#limit(group);
    if (limit && limit.success > 0) await this.#counters.add(successKey(userId), limit.windowMs);
  }

  #limit(group: string): Limit | undefined {
    const o = this.#options;
    if (!o.getBoolean('ModelRequestRateLimitEnabled')) return undefined;
    const minutes = o.getNumber('ModelRequestRateLimitDurationMinutes');
    if (minutes <= 0) return undefined;
    const byGroup = o.getJson<Record<string, [number, number]>>('ModelRequestRateLimitGroup')[group];
    return {
      total: byGroup?.[0] ?? o.getNumber('ModelRequestRateLimitCount'),
      success: byGroup?.[1] ?? o.getNumber('ModelRequestRateLimitSuccessCount'),
      windowMs: minutes * 60_000,
      minutes,
    };
  }
}

const successKey = (userId: number) => `mrl:success:${userId}`;
const totalKey = (userId: number) => `mrl:total:${userId}`;
const refused = (count: number, minutes: number) => new AppError(RELAY_ERRORS.rate_limited, { count, minutes });
