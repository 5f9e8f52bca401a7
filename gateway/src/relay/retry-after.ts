import { PromptCountBusyError } from '../domain/billing/prompt-count-pool.ts';
import { PeriodQuotaExceeded } from '../domain/ledger/periods/errors.ts';
import { StoreUnavailableError } from '../store/unavailable.ts';
import { RateLimitError } from './rate-limits.ts';

/**
 * Sets `Retry-After` on a refusal that passes by itself with time: a period quota used up, a rate
 * limit reached, the database unreachable, the prompt-count pool's queue full. Every relay error handler (each route family answers in its own shape) calls it.
 */
export function setRetryAfter(reply: { header(name: string, value: string): unknown }, error: unknown): void {
  if (
    error instanceof PeriodQuotaExceeded ||
    error instanceof RateLimitError ||
    error instanceof StoreUnavailableError ||
    error instanceof PromptCountBusyError
  ) {
    reply.header('retry-after', String(error.retryAfterSeconds));
  }
}
