import { ExprError, type TokenVariable } from '../../domain/billing/expr/index.ts';
import {
  ceilExact,
  type ExprRequest,
  estimatedTokens,
  priceByExpression,
  settleQuota,
  usageTokens,
} from '../../domain/billing/index.ts';
import type { BillingOptions } from '../../domain/billing/options.ts';
import type { ModelPrice, Usage } from '../types.ts';
import type { CompletionBudget } from './budget.ts';
import type { DeliveredCost } from './cost.ts';

/**
 * The completion budget of a model priced by a billing expression: what `tokens` of completion add to
 * the estimated prompt's cost, cost(p, tokens) − cost(p, 0), with the request and clock of the
 * reservation, rounded up as the reservation is. Undefined when the completion costs nothing (an
 * expression that does not price `c`). An expression need not grow with `c` (a cheaper tier for long
 * answers): the budget is then the most it reaches at any completion probed up to `tokens`.
 */
export function expressionBudget(
  price: ModelPrice,
  tokens: number,
  promptEstimate: number,
  request: ExprRequest | undefined,
  options: BillingOptions,
): CompletionBudget | undefined {
  const prompt = estimatedTokens(promptEstimate, 0);
  const rise = completionRise((c) => quotaAt(price, { ...prompt, c }, request, options), 0, tokens);
  if (!rise || !(rise.quota > 0)) return undefined;
  return { tokens, quota: ceilExact(rise.quota), quotaPerToken: rise.perToken };
}

/**
 * What a stream of an expression-priced model has spent: its bill if it ended now (the prompt's cost
 * and cost(p, delivered) − cost(p, 0) on top), by the same request and clock as its reservation and
 * settlement. Never less than the highest bill seen before, so that an expression that is not monotone
 * in `c` cannot hand headroom back mid-stream. A token costs, for the top-up decision, the steepest the
 * expression climbs over the next budget from what was delivered: a tier that changes a little further
 * on brings the next check closer.
 */
export class ExpressionCost implements DeliveredCost {
  readonly #price: ModelPrice;
  readonly #options: BillingOptions;
  readonly #model: string;
  readonly #request: ExprRequest | undefined;
  readonly #budget: CompletionBudget;
  #highest = 0;

  constructor(spec: {
    price: ModelPrice;
    options: BillingOptions;
    model: string;
    request?: ExprRequest;
    budget: CompletionBudget;
  }) {
    this.#price = spec.price;
    this.#options = spec.options;
    this.#model = spec.model;
    this.#request = spec.request;
    this.#budget = spec.budget;
  }

  quota(usage: Usage): number {
    const { quota } = settleQuota({
      price: this.#price,
      usage,
      options: this.#options,
      semantics: 'openai',
      model: this.#model,
      request: this.#request,
      // Where the expression fails on these counts the settlement bills the estimate: so does this.
      estimate: { promptEstimate: usage.promptTokens, maxTokens: 0 },
    });
    this.#highest = Math.max(this.#highest, quota);
    return this.#highest;
  }

  quotaPerToken(usage: Usage): number {
    const tokens = usageTokens(usage, this.#price.expression!.variables);
    const at = (c: number) => quotaAt(this.#price, { ...tokens, c }, this.#request, this.#options);
    const rise = completionRise(at, tokens.c, this.#budget.tokens);
    return Math.max(this.#budget.quotaPerToken, rise?.perToken ?? 0);
  }
}

/**
 * How the quota grows from `from` completion tokens to at most `tokens` more: the largest rise and the
 * steepest average rise a token among the probes, or undefined when the expression fails at `from`.
 * Probes halve from `tokens` down to 1, so that a tier change close ahead shows as much as a far one.
 */
function completionRise(
  at: (c: number) => number | undefined,
  from: number,
  tokens: number,
): { quota: number; perToken: number } | undefined {
  const base = at(from);
  if (base === undefined) return undefined;
  let quota = 0;
  let perToken = 0;
  for (let step = tokens; step >= 1; step = Math.floor(step / 2)) {
    const cost = at(from + step);
    if (cost === undefined) continue;
    quota = Math.max(quota, cost - base);
    perToken = Math.max(perToken, (cost - base) / step);
  }
  return { quota, perToken };
}

/** The expression's quota for these counts, unrounded; undefined where it fails (a divisor that is 0). */
function quotaAt(
  price: ModelPrice,
  tokens: Record<TokenVariable, number>,
  request: ExprRequest | undefined,
  options: BillingOptions,
): number | undefined {
  try {
    const { costUsd } = priceByExpression(price.expression!, tokens, request, options);
    return costUsd * options.getNumber('QuotaPerUnit') * price.groupRatio;
  } catch (error) {
    if (error instanceof ExprError) return undefined;
    throw error;
  }
}
