/**
 * Keeps a token count linear in the text and capped, whatever the text. Byte-pair merging costs the
 * square of the length of one pre-tokenized piece, and a run without a break (one letter repeated,
 * unpunctuated Chinese, a wall of symbols or spaces) is one piece: 200 KB of it held the event loop
 * for seconds. So a run longer than RUN_LIMIT is counted in slices of RUN_LIMIT, and only the first
 * EXACT_LIMIT characters are counted at all: the rest is estimated by its UTF-8 bytes at the
 * tokens-per-byte the counted part measured. Ordinary text (no such run, under the limit) is counted
 * by one call on the whole text, exactly as before.
 */

/** Longest run of one kind of character counted in one piece, and the slice a longer run is cut into. */
export const RUN_LIMIT = 256;
/** Characters (UTF-16 units) counted exactly; beyond, the count is estimated by bytes. */
export const EXACT_LIMIT = 32_768;

// A run of letters (with their marks), of symbols or of white space longer than RUN_LIMIT. The
// look-behinds start a match only where a run starts, so the scan stays linear.
const LONG_RUN = new RegExp(
  [
    `(?<![\\p{L}\\p{M}])[\\p{L}\\p{M}]{${RUN_LIMIT + 1},}`,
    `(?<![^\\s\\p{L}\\p{N}])[^\\s\\p{L}\\p{N}]{${RUN_LIMIT + 1},}`,
    `(?<!\\s)\\s{${RUN_LIMIT + 1},}`,
  ].join('|'),
  'gu',
);

/** Tokens of `text` by `countExact` (the encoder's count), bounded as above. */
export function countBounded(text: string, countExact: (piece: string) => number): number {
  const end = cutAt(text, EXACT_LIMIT);
  const head = end === text.length ? text : text.slice(0, end);
  const counted = countRuns(head, countExact);
  if (end === text.length) return counted;
  const headBytes = Buffer.byteLength(head);
  const restBytes = Buffer.byteLength(text) - headBytes;
  return counted + Math.ceil((restBytes * counted) / headBytes);
}

function countRuns(text: string, countExact: (piece: string) => number): number {
  let tokens = 0;
  let from = 0;
  for (const run of text.matchAll(LONG_RUN)) {
    const runEnd = run.index + run[0].length;
    if (run.index > from) tokens += countExact(text.slice(from, run.index));
    for (let at = run.index; at < runEnd; ) {
      const next = cutAt(text, Math.min(at + RUN_LIMIT, runEnd));
      tokens += countExact(text.slice(at, next));
      at = next;
    }
    from = runEnd;
  }
  if (from < text.length) tokens += countExact(from === 0 ? text : text.slice(from));
  return tokens;
}

/** `at`, or one before it when `at` falls inside a surrogate pair (a character is never split). */
function cutAt(text: string, at: number): number {
  if (at >= text.length) return text.length;
  const low = text.charCodeAt(at);
  const high = text.charCodeAt(at - 1);
  return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff ? at - 1 : at;
}
