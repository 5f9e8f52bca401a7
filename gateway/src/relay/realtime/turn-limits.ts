import type { OptionsService } from '../../domain/options/index.ts';
import type { RelayCaller } from '../auth/key-auth.ts';
import { defaultCompletionTokens } from '../overrun/budget.ts';
import type { RateLimiter, RateTicket } from '../rate-limits.ts';
import type { Usage } from '../types.ts';

/** What a `response.create` may say of its output budget: GA's `max_output_tokens`, the beta's name. */
export interface ResponseRequest {
  max_output_tokens?: unknown;
  max_response_output_tokens?: unknown;
}

/**
 * The rate limits of a Realtime session's turns (README "Rate limits"): each response is one request
 * for RPM and its tokens count for TPM. A turn is admitted when it starts — a client's
 * `response.create` before it is passed on, a response the upstream starts by itself (server VAD) at
 * its `response.created` — by an estimate: the prompt of the session's last response (the
 * conversation only grows) plus the turn's output budget, or the model's completion budget
 * (`quota_setting.default_completion_tokens`) when it sets none. The response's `response.done` usage
 * then replaces the estimate, as the relay settles a request.
 */
export class TurnLimits {
  readonly #limiter: RateLimiter;
  readonly #options: OptionsService;
  readonly #caller: RelayCaller;
  readonly #model: string;
  /** Tickets of turns the client was admitted for, in order, waiting for their `response.created`. */
  readonly #asked: Array<RateTicket | undefined> = [];
  /** Tickets of the responses being generated, by response id (still being admitted for a server turn). */
  readonly #running = new Map<string, Promise<RateTicket | undefined>>();
  #lastPrompt = 0;
  /** Corrections on their way: a turn is admitted only after the previous ones are counted right. */
  #corrections: Promise<void> = Promise.resolve();

  constructor(limiter: RateLimiter, options: OptionsService, caller: RelayCaller, model: string) {
    this.#limiter = limiter;
    this.#options = options;
    this.#caller = caller;
    this.#model = model;
  }

  /** Admits a turn the client asks for, or throws the RateLimitError its refusal is told with. */
  async ask(request: ResponseRequest | undefined): Promise<void> {
    await this.#corrections;
    this.#asked.push(await this.#admit(outputBudget(request)));
  }

  /**
   * A response started: it takes the oldest admitted turn, or, started by the upstream itself, is
   * admitted now. Resolves to the refusal of such a turn (the response should then be cancelled).
   */
  async created(responseId: string): Promise<unknown> {
    if (this.#asked.length > 0) {
      this.#running.set(responseId, Promise.resolve(this.#asked.shift()));
      return undefined;
    }
    const admitted = this.#corrections.then(() => this.#admit(undefined));
    this.#running.set(
      responseId,
      admitted.catch(() => undefined),
    );
    return admitted.then(
      () => undefined,
      (error: unknown) => error,
    );
  }

  /** A response is done: its tokens replace its turn's estimate. */
  done(responseId: string | undefined, usage: Usage): void {
    this.#lastPrompt = usage.promptTokens;
    const ticket = responseId === undefined ? undefined : this.#running.get(responseId);
    if (responseId !== undefined) this.#running.delete(responseId);
    if (!ticket) return;
    const used = usage.promptTokens + usage.completionTokens;
    this.#corrections = this.#corrections.then(async () => this.#limiter.settle(await ticket, used));
  }

  /**
   * The session ended: turns that never started give their estimate back; a response cut off before its
   * `response.done` keeps its estimate (the upstream may have worked on it).
   */
  async close(): Promise<void> {
    const unstarted = this.#asked.splice(0);
    await this.#corrections;
    await Promise.all(unstarted.map((ticket) => this.#limiter.settle(ticket, 0)));
  }

  #admit(output: number | undefined): Promise<RateTicket | undefined> {
    const completion = output ?? defaultCompletionTokens(this.#options, this.#model);
    return this.#limiter.admitTokens(this.#caller, this.#model, this.#lastPrompt + completion);
  }
}

/** The output budget a `response.create` sets (`"inf"` or nothing: none). */
function outputBudget(request: ResponseRequest | undefined): number | undefined {
  const budget = request?.max_output_tokens ?? request?.max_response_output_tokens;
  return typeof budget === 'number' && Number.isFinite(budget) && budget >= 0 ? budget : undefined;
}
