import { type ExprRequest, settleQuota } from '../../domain/billing/index.ts';
import type { BillingOptions } from '../../domain/billing/options.ts';
import type { ModelPrice, Usage } from '../types.ts';
import type { CompletionBudget } from './budget.ts';
import { ExpressionCost } from './expression.ts';

/** How a stream guard prices what a stream delivered. */
export interface DeliveredCost {
  /** What the delivered usage costs, with the prompt: the bill if the stream ended now. */
  quota(usage: Usage): number;
  /** What the next completion tokens cost each, at most: how fast the headroom may go. */
  quotaPerToken(usage: Usage): number;
}

/** The delivered cost of a model priced by ratio (its bill, its completion price) or by an expression. */
export function deliveredCost(spec: {
  price: ModelPrice;
  options: BillingOptions;
  model: string;
  request?: ExprRequest;
  budget: CompletionBudget;
}): DeliveredCost {
  if (spec.price.expression) return new ExpressionCost(spec);
  const { price, options, model, budget } = spec;
  return {
    quota: (usage) => settleQuota({ price, usage, options, semantics: 'openai', model }).quota,
    quotaPerToken: () => budget.quotaPerToken,
  };
}
