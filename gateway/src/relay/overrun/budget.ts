import type { ExprRequest } from '../../domain/billing/index.ts';
import { type BillingOptions, isRecord } from '../../domain/billing/options.ts';
import type { RequestCharge } from '../charge.ts';
import type { ModelPrice, WireFormat } from '../types.ts';
import { expressionBudget } from './expression.ts';

/** The option naming, per model, the completion a request without max_tokens reserves (Tollgate's own). */
const DEFAULT_COMPLETION_OPTION = 'quota_setting.default_completion_tokens';

/** Formats whose answer is generated text a request may leave unbounded (no max_tokens). */
const GENERATING = new Set<WireFormat>([
  'openai-chat',
  'openai-completions',
  'openai-responses',
  'claude-messages',
  'gemini-generate',
]);

/**
 * What a request without max_tokens may produce before it must hold more: `tokens` of completion, whose
 * `quota` is reserved up front and added again by each top-up of its stream. `quotaPerToken` is what a
 * completion token costs: the completion's price (model ratio × group ratio × completion ratio), or for
 * a model priced by an expression the steepest the expression climbs over the budget (expression.ts).
 */
export interface CompletionBudget {
  tokens: number;
  quota: number;
  quotaPerToken: number;
}

/**
 * The completion budget of a request, or undefined when it needs none: it sets its own max_tokens
 * (reserved as new-api does), its format generates no text, its price is per call or free, or the
 * option gives the model 0 tokens. `request` is what a billing expression reads, with the
 * reservation's clock.
 */
export function completionBudget(
  format: WireFormat,
  model: string,
  price: ModelPrice,
  charge: RequestCharge,
  options: BillingOptions,
  request?: ExprRequest,
): CompletionBudget | undefined {
  if (charge.maxTokens > 0 || !GENERATING.has(format) || price.perCallUsd !== undefined) return undefined;
  const tokens = defaultCompletionTokens(options, model);
  if (tokens === 0) return undefined;
  if (price.expression) return expressionBudget(price, tokens, charge.promptEstimate, request, options);
  const quotaPerToken = price.modelRatio * price.groupRatio * price.completionRatio;
  if (!(quotaPerToken > 0)) return undefined;
  // Rounded up so that a reservation never falls short of it.
  return { tokens, quota: Math.ceil(tokens * quotaPerToken), quotaPerToken };
}

/** The option's entry for the model, else its "default", else 0 (none). */
export function defaultCompletionTokens(options: BillingOptions, model: string): number {
  let table: unknown;
  try {
    table = options.getJson<unknown>(DEFAULT_COMPLETION_OPTION);
  } catch {
    return 0;
  }
  if (!isRecord(table)) return 0;
  for (const key of [model, 'default']) {
    const tokens = table[key];
    if (typeof tokens === 'number' && Number.isFinite(tokens) && tokens >= 0) return Math.floor(tokens);
  }
  return 0;
}
