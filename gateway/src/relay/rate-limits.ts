import type { BudgetCharge, WindowBudgets } from '../cluster/index.ts';
import type { OptionsService } from '../domain/options/index.ts';
import { ANY_MODEL, limitFor, type RateLimits } from '../domain/rate-limits.ts';
import { AppError } from '../errors.ts';
import type { RelayCaller } from './auth/key-auth.ts';
import type { RequestCharge } from './charge.ts';
import { RELAY_ERRORS } from './errors.ts';
import type { RelayMetrics } from './metrics.ts';
import { defaultCompletionTokens } from './overrun/budget.ts';

const WINDOW_MS = 60_000;

export type RateScope = 'token' | 'user' | 'group';
export type RateKind = 'rpm' | 'tpm';

const SCOPE_ZH: Record<RateScope, string> = { token: '令牌', user: '用户', group: '分组' };

/** An admitted request's hold on its token-per-minute budgets, corrected when it settles. */
export interface RateTicket {
  ticket: string;
  /** The budgets the estimate was charged to. */
  tpmKeys: string[];
  estimate: number;
}

/** A request refused by a rate limit: answered 429 with `Retry-After`. */
export class RateLimitError extends AppError {
  readonly kind: RateKind;
  readonly retryAfterSeconds: number;

  constructor(kind: RateKind, params: { scope: RateScope; limit: number; model: string }, retryAfterMs: number) {
    super(kind === 'rpm' ? RELAY_ERRORS.rate_limit_exceeded : RELAY_ERRORS.tpm_limit_exceeded, {
      ...params,
      scopeZh: SCOPE_ZH[params.scope],
      model: params.model === ANY_MODEL ? 'any model' : params.model,
      modelZh: params.model === ANY_MODEL ? '任意模型' : params.model,
    });
    this.kind = kind;
    // Whole seconds, at least 1: a client that waits that long finds the window freed enough.
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  }
}

interface Check {
  scope: RateScope;
  kind: RateKind;
  limit: number;
  model: string;
  charge: BudgetCharge;
}

/**
 * Requests and tokens per minute per token, user and group (README "Rate limits"), on top of the
 * model request limit (limits.ts). A sliding minute in the cluster's budgets, so that the limits hold
 * across pods. A request is admitted only if it fits every limit that applies, in one atomic step:
 * one request in each RPM budget and its token estimate (prompt + max_tokens, or the completion budget
 * `quota_setting.default_completion_tokens` gives the model when it sets none) in each TPM budget. The estimate
 * is corrected at settlement to the tokens really used (0 when the request failed and was refunded).
 */
export class RateLimiter {
  readonly #budgets: WindowBudgets;
  readonly #options: OptionsService;
  readonly #metrics: RelayMetrics;
  readonly #clock: (() => number) | undefined;

  constructor(deps: {
    budgets: WindowBudgets;
    options: OptionsService;
    metrics: RelayMetrics;
    /** Tests move time with it; unset, the cluster's own clock is used. */
    clock?: (() => number) | undefined;
  }) {
    this.#budgets = deps.budgets;
    this.#options = deps.options;
    this.#metrics = deps.metrics;
    this.#clock = deps.clock;
  }

  /**
   * Admits the request or throws a RateLimitError, before anything is reserved or sent upstream.
   * The charge's prompt estimate is read only when a TPM limit applies (counting costs a tokenizer pass).
   */
  admit(
    caller: RelayCaller,
    model: string,
    charge: Pick<RequestCharge, 'promptEstimate' | 'maxTokens'>,
  ): Promise<RateTicket | undefined> {
    return this.#admit(this.#checks(caller, model), () => {
      const completion = charge.maxTokens > 0 ? charge.maxTokens : defaultCompletionTokens(this.#options, model);
      return charge.promptEstimate + completion;
    });
  }

  /**
   * Admits a request that spends no tokens of its own (a task submission, the opening of a Realtime
   * session): one request in each RPM budget; TPM limits do not apply to it.
   */
  async admitRequest(caller: RelayCaller, model: string): Promise<void> {
    await this.#admit(
      this.#checks(caller, model).filter((check) => check.kind === 'rpm'),
      () => 0,
    );
  }

  /** Admits a request whose token estimate the caller made (a Realtime turn), as `admit` does. */
  admitTokens(caller: RelayCaller, model: string, estimate: number): Promise<RateTicket | undefined> {
    return this.#admit(this.#checks(caller, model), () => estimate);
  }

  async #admit(checks: Check[], estimate: () => number): Promise<RateTicket | undefined> {
    if (checks.length === 0) return undefined;
    let tokens = 0;
    if (checks.some((check) => check.kind === 'tpm')) {
      tokens = Math.max(0, Math.ceil(estimate()));
      for (const check of checks) if (check.kind === 'tpm') check.charge.cost = tokens;
    }
    const result = await this.#budgets.admit(
      checks.map((check) => check.charge),
      WINDOW_MS,
      this.#clock?.(),
    );
    if (!result.admitted) {
      const refused = checks[result.refused]!;
      this.#metrics.rateLimited(refused.scope, refused.kind);
      throw new RateLimitError(
        refused.kind,
        { scope: refused.scope, limit: refused.limit, model: refused.model },
        result.retryAfterMs,
      );
    }
    const tpmKeys = checks.filter((check) => check.kind === 'tpm').map((check) => check.charge.key);
    return tpmKeys.length > 0 ? { ticket: result.ticket, tpmKeys, estimate: tokens } : undefined;
  }

  /**
   * Replaces the estimate with the tokens the request used (0 when it failed). A failure to reach the
   * cluster leaves the estimate in place: it only errs on the safe side, so it is not the caller's error.
   */
  async settle(ticket: RateTicket | undefined, usedTokens: number): Promise<void> {
    if (!ticket) return;
    const delta = Math.round(usedTokens) - ticket.estimate;
    if (delta === 0) return;
    await this.#budgets
      .correct(
        ticket.ticket,
        ticket.tpmKeys.map((key) => ({ key, delta })),
        this.#clock?.(),
      )
      .catch(() => {});
  }

  #checks(caller: RelayCaller, model: string): Check[] {
    const { token, user } = caller.identity;
    const groups = this.#options.getJson<Record<string, RateLimits>>('rate_limit_setting.groups');
    const scopes: Array<[RateScope, string, RateLimits | undefined]> = [
      // The playground has no token (id 0).
      ['token', String(token.id), token.id > 0 ? token.rateLimits : undefined],
      ['user', String(user.id), user.rateLimits],
      ['group', caller.group, Object.hasOwn(groups, caller.group) ? groups[caller.group] : undefined],
    ];
    const checks: Check[] = [];
    for (const [scope, id, limits] of scopes) {
      if (!limits) continue;
      for (const kind of ['rpm', 'tpm'] as const) {
        const found = limitFor(limits, model, kind);
        if (!found) continue;
        checks.push({
          scope,
          kind,
          limit: found.limit,
          model: found.rule,
          charge: { key: `rl:${scope}:${id}:${kind}:${found.rule}`, limit: found.limit, cost: 1 },
        });
      }
    }
    return checks;
  }
}
