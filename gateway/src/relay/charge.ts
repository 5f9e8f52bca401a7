import { imagePriceMultiplier, promptTexts, requestedMaxTokens, transcriptionTokens } from '../domain/billing/index.ts';
import { promptCount } from '../domain/billing/prompt-count-pool.ts';
import { probeAudioSeconds } from './audio-duration.ts';
import type { WireFormat } from './types.ts';

/** What a request asks for, as billing sees it before the upstream answers (reference §5.3). */
export interface RequestCharge {
  /**
   * Prompt tokens counted locally: the reservation's base, and the bill when the upstream reports none.
   * A short prompt is counted on first read: a caller who reserves nothing, answered with the upstream's
   * usage, never pays for the tokenizer. A long one is counted when the charge is made, in the worker pool
   * (domain/billing/prompt-count-pool.ts). The body must not change after this charge is made (the relay's only edit, masking sensitive words, comes before).
   */
  readonly promptEstimate: number;
  /** The completion budget the request sets (0 when none). */
  maxTokens: number;
  /** Per-call prices: items per call (images `n`). */
  n?: number;
  /** Per-call prices: the image size/quality multiplier. */
  priceMultiplier?: number;
}

/** The billing view of a parsed request body (JSON, or the multipart form of uploads). */
export async function requestCharge(
  format: WireFormat,
  model: string,
  body: Record<string, unknown> | FormData,
): Promise<RequestCharge> {
  if (body instanceof FormData) return formCharge(format, model, body);
  const maxTokens = requestedMaxTokens(format, body);
  const count = await promptCount(model, promptTexts(format, model, body));
  if (format !== 'openai-images') return new LazyCharge(count, { maxTokens });
  return new LazyCharge(count, { maxTokens, ...imageCharge(model, body.n, body.size, body.quality) });
}

/**
 * A charge whose prompt estimate is counted once, when first read. A class, not an object literal with a
 * getter: V8 builds such a literal (spread included) on a slow path, once per request here.
 */
class LazyCharge implements RequestCharge {
  readonly maxTokens: number;
  readonly n?: number;
  readonly priceMultiplier?: number;
  #count: (() => number) | undefined;
  #estimate = 0;

  /** `count`: the estimate, or how to count it on first read. */
  constructor(count: number | (() => number), rest: Omit<RequestCharge, 'promptEstimate'>) {
    if (typeof count === 'number') this.#estimate = count;
    else this.#count = count;
    this.maxTokens = rest.maxTokens;
    this.n = rest.n;
    this.priceMultiplier = rest.priceMultiplier;
  }

  get promptEstimate(): number {
    if (this.#count) {
      this.#estimate = this.#count();
      this.#count = undefined;
    }
    return this.#estimate;
  }
}

async function formCharge(format: WireFormat, model: string, form: FormData): Promise<RequestCharge> {
  const field = (name: string) => {
    const value = form.get(name);
    return typeof value === 'string' ? value : undefined;
  };
  if (format === 'openai-image-edits') {
    const prompt = field('prompt') ?? '';
    return new LazyCharge(await promptCount(model, promptTexts(format, model, { prompt })), {
      maxTokens: 0,
      ...imageCharge(model, Number(field('n') ?? 1), field('size'), field('quality')),
    });
  }
  if (format === 'openai-audio-transcriptions' || format === 'openai-audio-translations') {
    const file = form.get('file');
    const seconds = file instanceof Blob ? await probeAudioSeconds(file) : 0;
    return { promptEstimate: transcriptionTokens(seconds), maxTokens: 0 };
  }
  return { promptEstimate: 0, maxTokens: 0 };
}

function imageCharge(model: string, n: unknown, size: unknown, quality: unknown) {
  return {
    n: typeof n === 'number' && Number.isFinite(n) && n >= 1 ? Math.floor(n) : 1,
    priceMultiplier: imagePriceMultiplier(
      model,
      typeof size === 'string' ? size : undefined,
      typeof quality === 'string' ? quality : undefined,
    ),
  };
}
