import { PeriodQuotaExceeded } from '../domain/ledger/periods/errors.ts';
import { asStoreUnavailable, StoreUnavailableError } from '../store/unavailable.ts';
import { RateLimitError } from './rate-limits.ts';

/**
 * Sets `Retry-After` on a refusal that passes by itself with time: a period quota used up, a rate
 * limit reached, the database unreachable. Every relay error handler (each route family answers in its own shape) calls it.
 */
export function setRetryAfter(reply: { header(name: string, value: string): unknown }, error: unknown): void {
  const refusal = asStoreUnavailable(error);
  if (
    refusal instanceof PeriodQuotaExceeded ||
    refusal instanceof RateLimitError ||
    refusal instanceof StoreUnavailableError
  ) {
    reply.header('retry-after', String(refusal.retryAfterSeconds));
  }
}
