import type { ModelPrice, Usage } from '../../relay/types.ts';
import type { BillingOptions } from './options.ts';
import { CACHE_CREATION_1H_MULTIPLIER } from './price.ts';
import { type ExprRequest, estimatedTokens, priceByExpression, type TieredTrace, usageTokens } from './tiered.ts';
import { type PaidTool, toolPriceUsd } from './tool-price.ts';

/**
 * Which protocol's usage the request was billed from. Usage.promptTokens is normalised to include
 * cache reads and writes whatever the protocol (relay/types.ts), so the arithmetic is the same for
 * both; the semantics picks the web-search tool's price key.
 */
export type UsageSemantics = 'openai' | 'claude';

export interface PreConsumeInput {
  price: ModelPrice;
  /** Locally estimated prompt tokens. */
  promptTokens: number;
  /** max_tokens / max_completion_tokens / max_output_tokens of the request; absent or 0 when unset. */
  maxTokens?: number;
  options: BillingOptions;
  /** Price mode: items per call (images `n`). */
  n?: number;
  /** Price mode: size/quality multiplier (see imagePriceMultiplier). */
  priceMultiplier?: number;
  /** Expression mode: the request's body, headers and time. */
  request?: ExprRequest;
}

/**
 * The quota to reserve before the upstream call (reference §5.3), rounded up so that a
 * reservation never falls short of the formula. Ratio mode reserves at least PreConsumedQuota
 * prompt tokens plus the requested completion budget; expression mode runs the expression over the
 * estimated prompt and the completion budget.
 */
export function preConsumeQuota(input: PreConsumeInput): number {
  const { price, options } = input;
  if (price.expression) {
    const tokens = estimatedTokens(nonNegative(input.promptTokens), nonNegative(input.maxTokens));
    const { costUsd } = priceByExpression(price.expression, tokens, input.request, options);
    return ceilExact(costUsd * options.getNumber('QuotaPerUnit') * price.groupRatio);
  }
  if (price.perCallUsd !== undefined) {
    return ceilExact(perCallQuota(price, options, input.n, input.priceMultiplier));
  }
  if (price.modelRatio === 0 || price.groupRatio === 0) return 0;
  const floor = Math.max(0, options.getNumber('PreConsumedQuota'));
  const tokens = Math.max(nonNegative(input.promptTokens), floor) + nonNegative(input.maxTokens);
  return ceilExact(tokens * price.modelRatio * price.groupRatio);
}

export interface SettleInput {
  price: ModelPrice;
  usage: Usage;
  options: BillingOptions;
  semantics: UsageSemantics;
  /** The requested model: picks model-specific tool prices (`web_search_preview:gpt-4o*`). */
  model?: string;
  /** Price key of the web-search tool; defaults to `web_search` (Claude) or `web_search_preview`. */
  webSearchTool?: PaidTool;
  /** Price mode: items per call (images `n`). */
  n?: number;
  /** Price mode: size/quality multiplier (see imagePriceMultiplier). */
  priceMultiplier?: number;
  /** Expression mode: the request's body, headers and time. */
  request?: ExprRequest;
  /**
   * Expression mode: the reservation's estimate, billed when the real usage makes the expression fail
   * (a divisor that is zero for these counts): read only then, as counting the prompt has a cost.
   */
  estimate?: { readonly promptEstimate: number; readonly maxTokens: number };
}

/** Paid tool calls billed on top of tokens, for the consume log (reference §5.4). */
export interface ToolSurcharges {
  /** Web search calls and the price in USD per 1,000 calls. */
  webSearch?: { calls: number; priceUsdPer1k: number };
  fileSearch?: { calls: number; priceUsdPer1k: number };
}

export interface Settlement {
  /** The quota the request costs, an integer ≥ 0. */
  quota: number;
  surcharges: ToolSurcharges;
  /** Expression mode: the tier and cost, for the consume log. */
  tiered?: TieredTrace;
}

/** The quota a finished request costs (reference §5.4), with the tool surcharges in it. */
export function settleQuota(input: SettleInput): Settlement {
  const { price, usage, options } = input;
  const qpu = options.getNumber('QuotaPerUnit');
  const t = splitUsage(usage);
  const surcharges: ToolSurcharges = {};

  let surcharge = 0;
  const model = input.model ?? '';
  const webTool = input.webSearchTool ?? (input.semantics === 'claude' ? 'web_search' : 'web_search_preview');
  for (const [tool, calls, key] of [
    [webTool, t.webSearchCalls, 'webSearch'],
    ['file_search', t.fileSearchCalls, 'fileSearch'],
  ] as const) {
    if (calls === 0) continue;
    const usdPerThousand = toolPriceUsd(options, tool, model);
    surcharge += (calls / 1000) * usdPerThousand * price.groupRatio * qpu;
    surcharges[key] = { calls, priceUsdPer1k: usdPerThousand };
  }

  if (price.perCallUsd !== undefined) {
    // A per-call price is owed for a successful call even when the upstream reports no tokens.
    return {
      quota: roundExact(perCallQuota(price, options, input.n, input.priceMultiplier) + surcharge),
      surcharges,
    };
  }

  if (price.expression) return settleByExpression(input, surcharge, surcharges);

  if (t.prompt + t.completion === 0) return { quota: 0, surcharges };
  const promptQ =
    t.textIn +
    t.cached * price.cacheRatio +
    t.creation5m * price.cacheCreationRatio +
    t.creation1h * price.cacheCreationRatio * CACHE_CREATION_1H_MULTIPLIER +
    t.imageIn * price.imageRatio +
    t.audioIn * price.audioRatio;
  const completionQ = t.textOut * price.completionRatio + t.audioOut * price.audioRatio * price.audioCompletionRatio;
  const ratio = price.modelRatio * price.groupRatio;
  let quota = roundExact((promptQ + completionQ) * ratio + surcharge);
  // A priced request that used tokens never costs nothing.
  if (ratio !== 0 && quota <= 0) quota = 1;
  return { quota, surcharges };
}

/**
 * Expression mode: cost in USD × QuotaPerUnit × group ratio, plus tool surcharges, rounded half up to
 * whole quota as ratio mode is; a request with a positive cost never costs nothing.
 */
function settleByExpression(input: SettleInput, surcharge: number, surcharges: ToolSurcharges): Settlement {
  const { price, options, usage } = input;
  const expression = price.expression!;
  let result: ReturnType<typeof priceByExpression>;
  let fellBack = false;
  try {
    result = priceByExpression(expression, usageTokens(usage, expression.variables), input.request, options);
  } catch (error) {
    if (!input.estimate) throw error;
    const tokens = estimatedTokens(nonNegative(input.estimate.promptEstimate), nonNegative(input.estimate.maxTokens));
    result = priceByExpression(expression, tokens, input.request, options);
    fellBack = true;
  }
  const scale = options.getNumber('QuotaPerUnit') * price.groupRatio;
  let quota = roundExact(result.costUsd * scale + surcharge);
  if (result.costUsd > 0 && price.groupRatio !== 0 && quota <= 0) quota = 1;
  const tiered: TieredTrace = {
    expression: expression.source,
    tier: result.tier,
    costUsd: result.costUsd,
    requestRules: result.rules,
  };
  if (fellBack) tiered.fellBackToEstimate = true;
  return { quota, surcharges, tiered };
}

/** True when a price charges nothing (a free model), whatever the usage. */
export function isFreePrice(price: ModelPrice): boolean {
  if (price.expression) return false;
  return price.perCallUsd === undefined ? price.modelRatio === 0 : price.perCallUsd === 0;
}

/** Quota in USD (QuotaPerUnit quota = $1). */
export function quotaToUsd(quota: number, options: BillingOptions): number {
  return quota / options.getNumber('QuotaPerUnit');
}

interface TokenSplit {
  prompt: number;
  completion: number;
  /** Prompt tokens billed at the plain input price. */
  textIn: number;
  cached: number;
  creation5m: number;
  creation1h: number;
  imageIn: number;
  audioIn: number;
  /** Completion tokens billed at the completion ratio. */
  textOut: number;
  audioOut: number;
  webSearchCalls: number;
  fileSearchCalls: number;
}

/** Usage into disjoint parts; the subsets never exceed what they are subsets of. */
function splitUsage(usage: Usage): TokenSplit {
  const prompt = nonNegative(usage.promptTokens);
  const completion = nonNegative(usage.completionTokens);
  const cached = nonNegative(usage.cachedTokens);
  const creation = nonNegative(usage.cacheCreationTokens);
  const creation1h = Math.min(nonNegative(usage.cacheCreation1hTokens), creation);
  const imageIn = nonNegative(usage.imageInputTokens);
  const audioIn = nonNegative(usage.audioInputTokens);
  const audioOut = Math.min(nonNegative(usage.audioOutputTokens), completion);
  return {
    prompt,
    completion,
    textIn: Math.max(0, prompt - cached - creation - imageIn - audioIn),
    cached,
    creation5m: creation - creation1h,
    creation1h,
    imageIn,
    audioIn,
    textOut: completion - audioOut,
    audioOut,
    webSearchCalls: nonNegative(usage.webSearchCalls),
    fileSearchCalls: nonNegative(usage.fileSearchCalls),
  };
}

/**
 * What one task submission costs (reference §9.1, per-call pricing): its price × QuotaPerUnit × group
 * ratio, or, when only a ratio is configured for the task's model, ratio / 2 × QuotaPerUnit × group ratio;
 * × the task's own ratios (a video's seconds and size, reference §9.2).
 */
export function taskCallQuota(price: ModelPrice, options: BillingOptions, taskRatio = 1): number {
  if (price.expression) {
    // Tasks report no tokens when submitted: the expression's per-request part (`fixed(…)`) prices them.
    const { costUsd } = priceByExpression(price.expression, estimatedTokens(0, 0), undefined, options);
    return roundExact(costUsd * options.getNumber('QuotaPerUnit') * price.groupRatio * taskRatio);
  }
  if (price.perCallUsd !== undefined) return roundExact(perCallQuota(price, options, 1, taskRatio));
  return roundExact((price.modelRatio / 2) * options.getNumber('QuotaPerUnit') * price.groupRatio * taskRatio);
}

/**
 * What a finished task priced by model ratio costs by the tokens its upstream reports (reference §9.2's
 * token settlement, Seedance's `usage.total_tokens`): tokens × model ratio × group ratio × the task's
 * own ratios, truncated to whole quota as new-api does.
 */
export function taskTokenQuota(tokens: number, modelRatio: number, groupRatio: number, taskRatio = 1): number {
  return clampQuota(Math.floor(snap(tokens * modelRatio * groupRatio * taskRatio)));
}

function perCallQuota(price: ModelPrice, options: BillingOptions, n = 1, multiplier = 1): number {
  const count = Math.max(1, Math.floor(n));
  return (price.perCallUsd ?? 0) * options.getNumber('QuotaPerUnit') * price.groupRatio * count * multiplier;
}

function nonNegative(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : 0;
}

// Ratios such as 0.075 × 1.1 carry binary noise (82.50000000000001 or 82.49999999999999 for 82.5);
// snapping to 6 decimals first makes rounding agree with exact decimal arithmetic, as new-api's does.
const snap = (value: number): number => Math.round(value * 1e6) / 1e6;
const roundExact = (value: number): number => clampQuota(Math.round(snap(value)));
/** Rounded up to whole quota, as a reservation is (after snapping off binary noise). */
export const ceilExact = (value: number): number => clampQuota(Math.ceil(snap(value)));
/**
 * A whole quota within what the ledger can add exactly: 0 to Number.MAX_SAFE_INTEGER. A price or count
 * so large that the cost is Infinity is the most a wallet can hold; a NaN (no formula yields one) is 0.
 */
const clampQuota = (value: number): number =>
  Number.isNaN(value) ? 0 : Math.min(Math.max(0, value), Number.MAX_SAFE_INTEGER);
