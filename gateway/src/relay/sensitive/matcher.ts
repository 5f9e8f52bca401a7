/**
 * Case-insensitive search for many words at once (Aho–Corasick): one pass over the text, one state
 * step per UTF-16 unit, whatever the number of words. Built once per word list and read-only after.
 * Each search is also a stepwise scan that pauses every SCAN_SLICE units, so that a caller can let the
 * event loop run between slices of a huge text (a 1 MB prompt takes 15–20 ms in one go).
 */

/** UTF-16 units a stepwise scan reads between two pauses (about a millisecond's work). */
export const SCAN_SLICE = 65_536;

/** A search that pauses (yields) between slices of its text, and returns its result. */
export type Scan<T> = Generator<void, T, void>;

/** Runs a scan to its end without pausing. */
export function complete<T>(scan: Scan<T>): T {
  for (;;) {
    const step = scan.next();
    if (step.done) return step.value;
  }
}

/** Each UTF-16 unit's lower case when that is one unit too (so positions in the text stay put), else itself. */
const FOLD = foldTable();

function foldTable(): Uint16Array {
  const table = new Uint16Array(0x10000);
  for (let unit = 0; unit < table.length; unit++) {
    const lower = String.fromCharCode(unit).toLowerCase();
    table[unit] = lower.length === 1 ? lower.charCodeAt(0) : unit;
  }
  return table;
}

export class WordMatcher {
  /** Per state, its transitions by folded unit; state 0 is the root. */
  readonly #next: Array<Map<number, number>>;
  /** Per state, the state of its longest proper suffix that is also a prefix of some word. */
  readonly #fail: Int32Array;
  /** Per state, the word it completes (as listed), if any. */
  readonly #word: Array<string | undefined>;
  /** Per state, the nearest state down its failure chain that completes a word (0: none). */
  readonly #dictionary: Int32Array;
  /** Per state, the length of the longest word ending there (0: none): what masking covers. */
  readonly #longest: Int32Array;

  private constructor(words: readonly string[]) {
    const next: Array<Map<number, number>> = [new Map()];
    const word: Array<string | undefined> = [undefined];
    const depth: number[] = [0];
    for (const listed of words) {
      let state = 0;
      for (let i = 0; i < listed.length; i++) {
        const unit = FOLD[listed.charCodeAt(i)]!;
        let to = next[state]!.get(unit);
        if (to === undefined) {
          to = next.length;
          next.push(new Map());
          word.push(undefined);
          depth.push(depth[state]! + 1);
          next[state]!.set(unit, to);
        }
        state = to;
      }
      // Two words equal but for case are one word: the first listed names it.
      word[state] ??= listed;
    }
    const fail = new Int32Array(next.length);
    const dictionary = new Int32Array(next.length);
    const longest = new Int32Array(next.length);
    // Breadth first, so that a state's failure target is complete before the state is.
    const queue: number[] = [...next[0]!.values()];
    for (let head = 0; head < queue.length; head++) {
      const state = queue[head]!;
      const target = fail[state]!;
      dictionary[state] = word[target] !== undefined ? target : dictionary[target]!;
      longest[state] = word[state] !== undefined ? depth[state]! : longest[target]!;
      for (const [unit, child] of next[state]!) {
        let back = target;
        while (back !== 0 && !next[back]!.has(unit)) back = fail[back]!;
        fail[child] = next[back]!.get(unit) ?? 0;
        queue.push(child);
      }
    }
    this.#next = next;
    this.#fail = fail;
    this.#word = word;
    this.#dictionary = dictionary;
    this.#longest = longest;
  }

  /** A matcher of the non-empty words (after trimming) in `words`. */
  static of(words: Iterable<string>): WordMatcher {
    const kept: string[] = [];
    for (const word of words) {
      const trimmed = word.trim();
      if (trimmed) kept.push(trimmed);
    }
    return new WordMatcher(kept);
  }

  /** Whether the matcher has no word (then nothing is ever found). */
  get empty(): boolean {
    return this.#next[0]!.size === 0;
  }

  /** The distinct words in `text`, in the order their first occurrence ends. */
  find(text: string): string[] {
    return complete(this.findScan(text));
  }

  /** `text` with every occurrence starred, one `*` per character; the same string when nothing is found. */
  mask(text: string): string {
    return complete(this.maskScan(text));
  }

  /** find() as a stepwise scan. */
  *findScan(text: string): Scan<string[]> {
    const found: string[] = [];
    if (this.empty) return found;
    const reported = new Set<number>();
    let state = 0;
    for (let from = 0; from < text.length; from += SCAN_SLICE) {
      if (from > 0) yield;
      const to = Math.min(text.length, from + SCAN_SLICE);
      for (let i = from; i < to; i++) {
        state = this.#step(state, FOLD[text.charCodeAt(i)]!);
        this.#report(state, reported, found);
      }
    }
    return found;
  }

  /** mask() as a stepwise scan. */
  *maskScan(text: string): Scan<string> {
    if (this.empty) return text;
    // starts[i] = 1 + the start of the longest word ending at i (0: none); made on the first hit.
    let starts: Int32Array | undefined;
    let state = 0;
    for (let from = 0; from < text.length; from += SCAN_SLICE) {
      if (from > 0) yield;
      const to = Math.min(text.length, from + SCAN_SLICE);
      for (let i = from; i < to; i++) {
        state = this.#step(state, FOLD[text.charCodeAt(i)]!);
        const length = this.#longest[state]!;
        if (length === 0) continue;
        starts ??= new Int32Array(text.length);
        starts[i] = i - length + 2;
      }
    }
    if (!starts) return text;
    if (text.length > SCAN_SLICE) yield;
    return starred(text, starts);
  }

  #step(state: number, unit: number): number {
    let from = state;
    for (;;) {
      const to = this.#next[from]!.get(unit);
      if (to !== undefined) return to;
      if (from === 0) return 0;
      from = this.#fail[from]!;
    }
  }

  /**
   * Adds the words ending in `state` not yet reported. A reported word's shorter suffixes were reported
   * with it, so the walk stops there: each word is walked over once per text, not once per occurrence.
   */
  #report(state: number, reported: Set<number>, found: string[]): void {
    let at = this.#word[state] !== undefined ? state : this.#dictionary[state]!;
    while (at !== 0 && !reported.has(at)) {
      reported.add(at);
      found.push(this.#word[at]!);
      at = this.#dictionary[at]!;
    }
  }
}

/**
 * Stars every unit some word covers. A unit is covered when a word ending at or after it starts at or
 * before it: one backward sweep keeping the smallest start seen. A surrogate pair gets one star.
 */
function starred(text: string, starts: Int32Array): string {
  const covered = new Uint8Array(text.length);
  let smallest = Number.POSITIVE_INFINITY;
  for (let i = text.length - 1; i >= 0; i--) {
    if (starts[i]! > 0) smallest = Math.min(smallest, starts[i]! - 1);
    if (smallest <= i) covered[i] = 1;
  }
  const parts: string[] = [];
  let plainFrom = 0;
  let i = 0;
  while (i < text.length) {
    if (!covered[i]) {
      i++;
      continue;
    }
    parts.push(text.slice(plainFrom, i));
    let stars = 0;
    while (i < text.length && covered[i]) {
      const lowHalf =
        isLowSurrogate(text.charCodeAt(i)) && i > 0 && covered[i - 1] && isHighSurrogate(text.charCodeAt(i - 1));
      if (!lowHalf) stars++;
      i++;
    }
    parts.push('*'.repeat(stars));
    plainFrom = i;
  }
  parts.push(text.slice(plainFrom));
  return parts.join('');
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;
