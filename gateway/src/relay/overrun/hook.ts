import type { ExprRequest } from '../../domain/billing/index.ts';
import type { BillingOptions } from '../../domain/billing/options.ts';
import type { QuotaLedger, Reservation } from '../../domain/ledger/index.ts';
import type { RequestCharge } from '../charge.ts';
import type { RelayMetrics } from '../metrics.ts';
import type { RelayNotes } from '../outcome.ts';
import type { ModelPrice } from '../types.ts';
import type { CompletionBudget } from './budget.ts';
import { StreamGuard } from './guard.ts';

/**
 * The guard of a streamed request that holds a completion budget, or undefined: a request that sets
 * max_tokens, holds nothing (free, or trusted: the trust bypass reserves 0 for holders above $10) or
 * is answered whole (its reservation covers the budget; the bill may exceed it by that answer's extra).
 */
export function streamGuardFor(
  deps: { ledger: QuotaLedger; metrics: RelayMetrics; options: BillingOptions },
  request: {
    stream: boolean;
    reservation: Reservation | undefined;
    budget: CompletionBudget | undefined;
    price: ModelPrice;
    model: string;
    group: string;
    charge: RequestCharge;
    notes: RelayNotes;
    /** What a billing expression reads: the reservation's request and clock. */
    exprRequest: ExprRequest;
  },
): StreamGuard | undefined {
  const { reservation, budget } = request;
  if (!request.stream || !reservation || reservation.amount === 0 || !budget) return undefined;
  return new StreamGuard({
    ledger: deps.ledger,
    reservation,
    budget,
    price: request.price,
    options: deps.options,
    model: request.model,
    request: request.exprRequest,
    promptEstimate: () => request.charge.promptEstimate,
    onCut: () => {
      deps.metrics.streamCut({ model: request.model, group: request.group });
      // Noted before the stream ends: the request counts with error_type quota (status 200).
      request.notes.failed('quota');
    },
  });
}
