import type { OptionsService } from '../../domain/options/index.ts';
import { AppError, defineErrors } from '../../errors.ts';
import { assertJsonDepth } from '../bounds/json-depth.ts';
import type { WireFormat } from '../types.ts';
import { complete, type Scan, WordMatcher } from './matcher.ts';
import { editPromptTexts } from './prompt-texts.ts';

export const SENSITIVE_ERRORS = defineErrors({
  sensitive_words_detected: {
    status: 400,
    message: { zh: '提示词包含敏感词：{words}', en: 'The prompt contains sensitive words: {words}' },
  },
});

/** The fields of Realtime client events that hold text (see prompt-texts.ts), as they appear in a frame. */
const REALTIME_TEXT_FIELDS = ['"instructions"', '"text"', '"output"'].map((field) => Buffer.from(field));

/** At most this many words are named in a refusal; a longer list ends with "…". */
const WORDS_NAMED = 10;

/**
 * The prompt check of the sensitive-word options (reference, appendix B): with CheckSensitiveEnabled and
 * CheckSensitiveOnPromptEnabled on, every prompt text is searched for the SensitiveWords; a hit refuses
 * the request (StopOnSensitiveEnabled) or is starred out of what goes upstream. The matcher is built
 * once per change of the word list, on every pod: the options service calls back after its own writes
 * and after re-reading another pod's, announced on the bus.
 */
export class SensitiveWords {
  readonly #options: OptionsService;
  readonly #unsubscribe: () => void;
  #matcher: WordMatcher;

  constructor(options: OptionsService) {
    this.#options = options;
    this.#matcher = matcherOf(options.get('SensitiveWords'));
    this.#unsubscribe = options.onChange((change) => {
      if (change.key === 'SensitiveWords') this.#matcher = matcherOf(change.value);
    });
  }

  /** Stops following the word list. */
  close(): void {
    this.#unsubscribe();
  }

  /**
   * Checks the parsed body of a request before anything is reserved or sent: throws
   * `sensitive_words_detected` when the request must stop, else stars the words in the body in place.
   * True when it starred any (the body is then no longer the client's bytes). Long texts are searched
   * in slices with the event loop free between them (matcher.ts).
   */
  async screen(format: WireFormat, body: Record<string, unknown> | FormData): Promise<boolean> {
    const outcome = await inSlices(this.#apply(format, body));
    if (outcome instanceof AppError) throw outcome;
    return outcome === 'masked';
  }

  /**
   * A Realtime client event (a text frame) on its way upstream: the frame itself, the event re-serialised
   * with the words starred, or the refusal. Only a frame naming a text-carrying field is parsed, so that
   * audio chunks pass unread.
   */
  screenFrame(frame: Buffer): Buffer | AppError {
    if (!this.#checking() || !REALTIME_TEXT_FIELDS.some((field) => frame.includes(field))) return frame;
    let event: unknown;
    try {
      // Refused before parsing: a masked event is re-serialised, and JSON.stringify fails on a deep one.
      assertJsonDepth(frame);
    } catch (error) {
      return error as AppError;
    }
    try {
      event = JSON.parse(frame.toString('utf8'));
    } catch {
      return frame;
    }
    if (typeof event !== 'object' || event === null || Array.isArray(event)) return frame;
    const outcome = complete(this.#apply('openai-realtime', event as Record<string, unknown>));
    if (outcome instanceof AppError) return outcome;
    return outcome === 'masked' ? Buffer.from(JSON.stringify(event)) : frame;
  }

  #checking(): boolean {
    const options = this.#options;
    return (
      options.getBoolean('CheckSensitiveEnabled') &&
      options.getBoolean('CheckSensitiveOnPromptEnabled') &&
      !this.#matcher.empty
    );
  }

  /**
   * The refusal, or whether words were starred in `body`, as a scan that pauses between slices of long
   * texts. The texts are gathered first, then searched, then (masking) put back by a second walk over the
   * same untouched body: the nth text met is the nth masked.
   */
  *#apply(format: WireFormat, body: Record<string, unknown> | FormData): Scan<AppError | 'masked' | 'clean'> {
    if (!this.#checking()) return 'clean';
    const matcher = this.#matcher;
    const texts: string[] = [];
    editPromptTexts(format, body, (text) => {
      texts.push(text);
      return text;
    });
    if (this.#options.getBoolean('StopOnSensitiveEnabled')) {
      const found = new Set<string>();
      for (const text of texts) for (const word of yield* matcher.findScan(text)) found.add(word);
      return found.size > 0
        ? new AppError(SENSITIVE_ERRORS.sensitive_words_detected, { words: named(found) })
        : 'clean';
    }
    const masked: string[] = [];
    for (const text of texts) masked.push(yield* matcher.maskScan(text));
    if (masked.every((text, i) => text === texts[i])) return 'clean';
    let next = 0;
    editPromptTexts(format, body, () => masked[next++]!);
    return 'masked';
  }
}

/** Runs a scan, letting the event loop run between its slices: a huge prompt never holds the loop for long. */
async function inSlices<T>(scan: Scan<T>): Promise<T> {
  for (;;) {
    const step = scan.next();
    if (step.done) return step.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

function matcherOf(list: string): WordMatcher {
  return WordMatcher.of(list.split('\n'));
}

function named(found: Set<string>): string {
  const words = [...found];
  const shown = words.slice(0, WORDS_NAMED).join(', ');
  return words.length > WORDS_NAMED ? `${shown}, …` : shown;
}
