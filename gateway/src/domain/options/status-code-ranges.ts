/**
 * HTTP status code range lists such as `401,500-503`, used by AutomaticDisableStatusCodes and
 * AutomaticRetryStatusCodes. The relay reads them with the same parser the validator uses.
 */
export interface StatusCodeRange {
  from: number;
  to: number;
}

export type ParsedStatusCodeRanges = { ok: true; ranges: StatusCodeRange[] } | { ok: false; item: string };

const ITEM = /^(\d{3})(?:\s*-\s*(\d{3}))?$/;

/** Empty items (a trailing comma, blank text) are ignored; an empty list is valid and matches nothing. */
export function parseStatusCodeRanges(text: string): ParsedStatusCodeRanges {
  const ranges: StatusCodeRange[] = [];
  for (const raw of text.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    const match = ITEM.exec(item);
    if (!match) return { ok: false, item };
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    if (from < 100 || to > 599 || from > to) return { ok: false, item };
    ranges.push({ from, to });
  }
  return { ok: true, ranges };
}

/** The canonical stored text: items without spaces, joined by commas. */
export function formatStatusCodeRanges(ranges: readonly StatusCodeRange[]): string {
  return ranges.map((r) => (r.from === r.to ? String(r.from) : `${r.from}-${r.to}`)).join(',');
}

export function statusCodeInRanges(code: number, ranges: readonly StatusCodeRange[]): boolean {
  return ranges.some((r) => code >= r.from && code <= r.to);
}
