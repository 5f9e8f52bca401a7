import type { QuotaBucket } from '../../store/repositories/usage.ts';

/** The order bucket rows are written in (user, model, hour): the same as every writer's, so upserts do not deadlock. */
export function byBucketKey(a: QuotaBucket, b: QuotaBucket): number {
  return a.userId - b.userId || (a.modelName < b.modelName ? -1 : a.modelName > b.modelName ? 1 : 0) || a.hour - b.hour;
}

/**
 * The usage dashboard's hourly buckets (quota_data) added up in memory between exports
 * (DataExportInterval, as new-api keeps its dashboard data in memory and saves it every so many
 * minutes): each (user, model, hour) is one entry however many requests it counts, so a busy pod
 * writes one upsert per bucket per interval instead of one per flush. The first bucket held after an
 * export starts the clock; the buckets are due that interval later. Only the dashboard waits: consume
 * logs and quota counters are written with every flush.
 */
export class HeldBuckets {
  #buckets = new Map<string, QuotaBucket>();
  #dueAt: number | undefined;

  get size(): number {
    return this.#buckets.size;
  }

  /** When the held buckets are to be written (ms); undefined while none are held. */
  get dueAt(): number | undefined {
    return this.#dueAt;
  }

  /** Merges a flush's buckets; the first held starts the `intervalMs` wait from `now`. */
  add(buckets: readonly QuotaBucket[], now: number, intervalMs: number): void {
    for (const bucket of buckets) {
      const key = `${bucket.userId}\u0000${bucket.hour}\u0000${bucket.modelName}`;
      const held = this.#buckets.get(key);
      if (held) {
        held.quota += bucket.quota;
        held.tokens += bucket.tokens;
        held.count += bucket.count;
        held.username = bucket.username;
      } else this.#buckets.set(key, { ...bucket });
    }
    if (this.#buckets.size > 0) this.#dueAt ??= now + intervalMs;
  }

  due(now: number): boolean {
    return this.#dueAt !== undefined && now >= this.#dueAt;
  }

  /** Every held bucket, in write order; the next one held starts a new wait. */
  take(): QuotaBucket[] {
    const buckets = [...this.#buckets.values()].sort(byBucketKey);
    this.#buckets = new Map();
    this.#dueAt = undefined;
    return buckets;
  }
}
