import { AppError } from '../../errors.ts';
import type { Usage } from '../../relay/types.ts';
import { billingErrors } from './errors.ts';
import {
  type CompiledExpression,
  compileExpression,
  ExprError,
  noTokens,
  type RequestRule,
  runExpression,
  type TokenVariable,
} from './expr/index.ts';
import { type BillingOptions, isRecord } from './options.ts';

/** `billing_setting.billing_mode[model]` that prices the model by `billing_setting.billing_expr[model]`. */
export const TIERED_MODE = 'tiered_expr';

/** What a billing expression may read of the request besides its tokens. */
export interface ExprRequest {
  /** The parsed JSON body, or the multipart form of an upload. */
  body?: Record<string, unknown> | FormData;
  /** Node's headers: names in lower case. */
  headers?: Readonly<Record<string, string | string[] | undefined>>;
  /** When the request is priced; the clock functions read it (tests pass a fixed one). */
  now?: Date;
}

/** What the consume log records of a tiered bill (new-api's `billing_mode`, `expr_b64`, `matched_tier`). */
export interface TieredTrace {
  expression: string;
  /** The tier of the settlement, '' when the expression names none. */
  tier: string;
  /** The expression's cost in USD, before the group ratio. */
  costUsd: number;
  /** Its request multipliers and whether each applied. */
  requestRules: RequestRule[];
  /** True when the settlement could not evaluate the real usage and billed the estimate. */
  fellBackToEstimate?: boolean;
}

/**
 * The compiled expression of a model in `tiered_expr` mode, or undefined for a model priced by ratio or
 * per call. Compiled once per distinct text; a stored text that does not compile (only possible by
 * writing the database directly) refuses the request rather than billing it at some other price.
 */
export function tieredExpressionFor(options: BillingOptions, model: string): CompiledExpression | undefined {
  const modes = options.getJson<unknown>('billing_setting.billing_mode');
  if (!isRecord(modes) || !Object.hasOwn(modes, model) || modes[model] !== TIERED_MODE) return undefined;
  const expressions = options.getJson<unknown>('billing_setting.billing_expr');
  const source = isRecord(expressions) && Object.hasOwn(expressions, model) ? expressions[model] : undefined;
  if (typeof source !== 'string' || source.trim() === '') return undefined;
  try {
    return compileExpression(source);
  } catch (error) {
    if (!(error instanceof ExprError)) throw error;
    throw new AppError(billingErrors.MODEL_BILLING_EXPR_INVALID, { model, reason: error.message });
  }
}

/** Token counts for an expression from a reservation's estimate: the prompt and the completion budget. */
export function estimatedTokens(promptTokens: number, maxTokens: number): Record<TokenVariable, number> {
  const tokens = noTokens();
  tokens.p = promptTokens;
  tokens.len = promptTokens;
  tokens.c = maxTokens;
  return tokens;
}

/**
 * Token counts for an expression from real usage. A sub-count the expression prices on its own (`cr`,
 * `cc`, `cc1h`, `img`, `ai`; `ao`) is taken out of `p` (`c`); one it does not name stays in them at their
 * price. `cc` holds the 1-hour writes too unless `cc1h` is priced. `len` is always the whole prompt, so
 * that tier conditions do not move with cache hits.
 */
export function usageTokens(usage: Usage, uses: ReadonlySet<TokenVariable>): Record<TokenVariable, number> {
  const prompt = count(usage.promptTokens);
  const completion = count(usage.completionTokens);
  const creation = count(usage.cacheCreationTokens);
  const creation1h = Math.min(count(usage.cacheCreation1hTokens), creation);
  const tokens = noTokens();
  tokens.len = prompt;
  tokens.cr = count(usage.cachedTokens);
  tokens.cc1h = uses.has('cc1h') ? creation1h : 0;
  tokens.cc = creation - tokens.cc1h;
  tokens.img = count(usage.imageInputTokens);
  tokens.ai = count(usage.audioInputTokens);
  tokens.ao = Math.min(count(usage.audioOutputTokens), completion);
  const priced = (name: TokenVariable) => (uses.has(name) ? tokens[name] : 0);
  tokens.p = Math.max(0, prompt - priced('cr') - priced('cc') - priced('cc1h') - priced('img') - priced('ai'));
  tokens.c = completion - priced('ao');
  return tokens;
}

/** Runs an expression for one request: its cost in USD (before the group ratio) and the tier that applied. */
export function priceByExpression(
  expression: CompiledExpression,
  tokens: Record<TokenVariable, number>,
  request: ExprRequest | undefined,
  options: BillingOptions,
): { costUsd: number; tier: string; rules: RequestRule[] } {
  const { cost, tier, rules } = runExpression(expression, {
    tokens,
    param: (path) => requestField(request?.body, path),
    header: (name) => headerValue(request?.headers, name),
    now: request?.now ?? new Date(),
    timeZone: options.get('billing_setting.timezone'),
  });
  // Coefficients are USD per 1M tokens.
  return { costUsd: cost / 1_000_000, tier, rules };
}

/**
 * A body field by dotted path: `reasoning.effort`, `messages.0.role`, `messages.#` (a list's length, as
 * new-api's paths allow); a form's field by name.
 */
export function requestField(body: ExprRequest['body'], path: string): unknown {
  if (body === undefined || path === '') return undefined;
  if (body instanceof FormData) {
    const value = body.get(path);
    return typeof value === 'string' ? value : undefined;
  }
  let value: unknown = body;
  for (const key of path.split('.')) {
    if (Array.isArray(value) && key === '#') value = value.length;
    else if (Array.isArray(value) && /^\d+$/.test(key)) value = value[Number(key)];
    else if (isRecord(value) && Object.hasOwn(value, key)) value = value[key];
    else return undefined;
  }
  return value;
}

function headerValue(headers: ExprRequest['headers'], name: string): string {
  const value = headers?.[name];
  return (Array.isArray(value) ? value.join(', ') : (value ?? '')).trim();
}

function count(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : 0;
}
