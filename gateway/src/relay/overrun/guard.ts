import { countTextTokens, type ExprRequest, TOKENS_PER_TOOL_CALL } from '../../domain/billing/index.ts';
import type { BillingOptions } from '../../domain/billing/options.ts';
import type { Reservation } from '../../domain/ledger/index.ts';
import type { StreamObserver } from '../protocols/index.ts';
import type { SseEvent } from '../sse.ts';
import type { ModelPrice, Usage } from '../types.ts';
import type { CompletionBudget } from './budget.ts';
import { type DeliveredCost, deliveredCost } from './cost.ts';
import { afterTopUp, type Decision, decide, type Standing } from './decision.ts';

/**
 * Whether a stream may go on after one upstream event was observed: true, false (cut it there), or a
 * promise of either while a top-up is asked for.
 */
export type StreamCheck = (event: SseEvent) => boolean | Promise<boolean>;

/** What the exchange needs to meter a stream against its request's quota (relay/exchange/forward.ts). */
export interface StreamBudget {
  /** Starts metering one attempt's stream, whose usage and text `observer` follows. */
  follow(observer: StreamObserver): StreamCheck;
}

export interface StreamGuardSpec {
  ledger: { extend(reservation: Reservation, amount: number): Promise<boolean> };
  reservation: Reservation;
  budget: CompletionBudget;
  price: ModelPrice;
  options: BillingOptions;
  model: string;
  /** What a billing expression reads: the request and clock of the reservation. */
  request?: ExprRequest;
  /** Prompt tokens counted locally: the prompt billed until the upstream reports its own. */
  promptEstimate: () => number;
  /** Told once, when the stream is cut (metrics, the request's outcome). */
  onCut: () => void;
}

/**
 * Keeps a stream of a request without max_tokens within what its holder can pay (issue 17): as the
 * delivered output's cost nears what the request holds, it holds another completion budget's worth
 * (QuotaLedger.extend, atomic against the balance like a reservation); when that is refused, the
 * stream is cut (decision.ts says when). The output is priced as the model is, by its ratios or by its
 * billing expression (cost.ts). Cheap: event data is only counted between thresholds; the
 * text is read and tokenized (only what is new) when one is crossed.
 */
export class StreamGuard implements StreamBudget {
  readonly #spec: StreamGuardSpec;
  #reserved: number;

  constructor(spec: StreamGuardSpec) {
    this.#spec = spec;
    this.#reserved = spec.reservation.amount;
  }

  /** Quota held now: the reservation and the top-ups granted. */
  get reserved(): number {
    return this.#reserved;
  }

  follow(observer: StreamObserver): StreamCheck {
    const meter = new DeliveredMeter(this.#spec.model, observer);
    // Per attempt, as the meter: an expression's highest bill is of this stream's output.
    const cost: DeliveredCost = deliveredCost(this.#spec);
    let unchecked = 0;
    let checkAfter = 0;
    let refused = false;
    let cut = false;
    const apply = (decision: Decision): boolean => {
      if (decision.action === 'go') checkAfter = decision.checkAfterChars;
      if (decision.action !== 'cut') return true;
      if (!cut) this.#spec.onCut();
      cut = true;
      return false;
    };
    return (event) => {
      if (cut) return false;
      unchecked += event.data.length;
      if (unchecked < checkAfter) return true;
      unchecked = 0;
      const standing = (): Standing => {
        const usage = meter.usage(this.#spec.promptEstimate);
        return {
          reserved: this.#reserved,
          spent: cost.quota(usage),
          quotaPerToken: cost.quotaPerToken(usage),
          stepQuota: this.#spec.budget.quota,
          refused,
        };
      };
      const decision = decide(standing());
      if (decision.action !== 'top-up') return apply(decision);
      return this.#topUp(decision.amount, standing).then((next) => {
        refused = next.refused;
        return apply(next.decision);
      });
    };
  }

  /** Asks for top-ups until the stream may go on or must be cut; `refused`: the last one was. */
  async #topUp(amount: number, standing: () => Standing): Promise<{ decision: Decision; refused: boolean }> {
    let current = standing();
    for (;;) {
      const granted = await this.#extend(amount);
      if (granted) this.#reserved += amount;
      const decision = afterTopUp(current, granted);
      if (decision.action !== 'top-up') return { decision, refused: !granted };
      current = { ...standing(), refused: !granted };
      amount = decision.amount;
    }
  }

  #extend(amount: number): Promise<boolean> {
    // A top-up the database could not answer counts as refused: an answer nothing holds quota for is
    // what this guard exists to stop.
    return this.#spec.ledger.extend(this.#spec.reservation, amount).catch(() => false);
  }
}

/**
 * The usage of what a stream delivered so far: the upstream's counts where it reported them, its
 * completion at least the tokens of the text seen (counted piece by piece, as it comes, which counts a
 * little more than the whole would) plus the tool calls' allowance.
 */
class DeliveredMeter {
  readonly #model: string;
  readonly #observer: StreamObserver;
  #read = 0;
  #tokens = 0;

  constructor(model: string, observer: StreamObserver) {
    this.#model = model;
    this.#observer = observer;
  }

  usage(promptEstimate: () => number): Usage {
    const text = this.#observer.text;
    if (text.length > this.#read) {
      this.#tokens += countTextTokens(this.#model, text.slice(this.#read));
      this.#read = text.length;
    }
    const reported = this.#observer.usage;
    const completionTokens = Math.max(
      this.#tokens + this.#observer.toolCalls * TOKENS_PER_TOOL_CALL,
      reported?.completionTokens ?? 0,
    );
    if (reported && reported.promptTokens > 0) return { ...reported, completionTokens };
    return { promptTokens: promptEstimate(), completionTokens };
  }
}
